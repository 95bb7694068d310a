"""The file floor: tables of reports and data (``tables``: CSV and Parquet), what a table of
reports holds (``layout``), report files cut into parts (``sources``), report writers
(``writers``) and result files (``result_files``).  It imports ``ldpest.util`` up to
``ldpest.contract`` (README, "Layout").

The names of the module ``ldpest.io`` before the floors (issue 21) still import from here.
"""

from ..util.lazy import lazy_names

__getattr__, __dir__ = lazy_names(__name__, {
    **dict.fromkeys(("CsvSource", "ParquetSource", "open_source", "located", "table_values", "column_values",
                     "SPEC_PREFIX", "RNG_PREFIX", "PARQUET_SPEC_KEY", "PARQUET_RNG_KEY"), ".tables"),
    **dict.fromkeys(("ReportWriter", "write_reports_csv", "REPORT_FORMATS"), ".writers"),
    **dict.fromkeys(("result_table", "metadata_path", "csv_metadata", "write_result", "read_result",
                     "RESULT_FORMATS", "json_default", "check_result_format"), ".result_files"),
})
