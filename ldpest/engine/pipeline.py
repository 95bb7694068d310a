"""File-to-result pipelines shared by the CLI and the R package, and the CLI's option parsing.

Estimation streams: each chunk of a file is turned into sufficient
statistics and added up, so memory stays bounded whatever the file size.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from ..contract.base import Estimator, Mechanism
from ..contract.registry import estimator as make_estimator
from ..contract.registry import get_registry, parameters_of
from ..io.layout import column_kind, decoding, table_mechanism_and_columns
from ..io.sources import open_reports
from ..io.tables import CsvSource, column_units, located, open_source
from ..io.writers import ReportWriter
from ..privacy.rng import resolve_rng
from ..util.errors import DataError, ParameterError
from ..util.labels import CODES
from .api import mechanism as make_mechanism
from .streaming import estimate_file


def parse_value(text: str):
    """A parameter value from the command line: JSON if it parses, else the string."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_params(pairs: list[str] | None) -> dict:
    params = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ParameterError(f"--param expects key=value, got {pair!r}")
        params[key.strip()] = parse_value(value)
    return params


MAX_COUNT = 10 ** 18  # sample sizes: binomial and multinomial draws take 64-bit integers


def parse_numbers(text: str | None, name: str, integer: bool = False) -> list | None:
    """``"0.5,1,2"`` -> floats; with ``integer``, ``"1e3,1e9"`` -> ints."""
    if text is None:
        return None
    try:
        values = [float(item) for item in text.split(",") if item.strip()]
    except ValueError:
        raise ParameterError(f"{name} must be comma-separated numbers, got {text!r}") from None
    if not values:
        raise ParameterError(f"{name} is empty")
    if integer:
        if any(not math.isfinite(v) or v != int(v) or v < 1 for v in values):
            raise ParameterError(f"{name} must be positive integers, got {text!r}")
        if any(v > MAX_COUNT for v in values):
            raise ParameterError(f"{name} must be at most 10^18 (counts are 64-bit integers), got {text!r}")
        return [int(v) for v in values]
    return values


def parse_list(text: str | None):
    """``"a,b,c"`` -> labels; integers become ints when every item is one.  ``"@labels.txt"`` reads
    the labels from a file, one per line (200,000 labels exceed the OS's limit for one argument)."""
    if text is None:
        return None
    if text.startswith("@"):
        path = Path(text[1:])
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ParameterError(f"--categories {text}: cannot read {path} ({exc.strerror or exc})") from None
        items = [line.strip() for line in lines if line.strip()]
        if not items:
            raise ParameterError(f"--categories {text}: {path} holds no labels (one per line)")
    else:
        items = [item.strip() for item in text.split(",") if item.strip()]
    try:
        return [int(item) for item in items]
    except ValueError:
        return items


def build_mechanism(name: str | None, epsilon: float | None, categories: str | None, params: list[str] | None,
                    columns: list[str] | None = None, raw_data=None, header: bool = True,
                    delimiter: str = ",") -> Mechanism:
    """The mechanism the CLI options describe.  With ``raw_data`` (the CSV that ``--raw`` will
    privatise), an ``"auto"`` size parameter without ``expected_n`` is tuned for the file's row count."""
    if name is None:
        raise ParameterError("--mechanism is needed: the input carries no mechanism spec")
    options = parse_params(params)
    if epsilon is not None:
        options["epsilon"] = epsilon
    if categories is not None:
        options["categories"] = parse_list(categories)
    if columns and "names" not in options and _takes_parameter(name, "names"):
        options["names"] = list(columns)  # result dims named after the input columns
    if (raw_data is not None and columns and len(columns) == 1 and "units" not in options
            and _takes_parameter(name, "units")):
        units = column_units(raw_data, columns[0])
        if units is not None:
            options["units"] = units  # what the data file says its column is measured in
    if (raw_data is not None and "expected_n" not in options and "auto" in options.values()
            and _takes_parameter(name, "expected_n")):
        options["expected_n"] = count_rows(raw_data, header, delimiter)
    return make_mechanism(name, **options)


def count_rows(path, header: bool = True, delimiter: str = ",") -> int:
    """Data rows of a CSV file (counted by streaming its first column) or of a Parquet file."""
    if Path(path).suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        open_source(path)  # a clear error for a missing or unreadable file
        return int(pq.ParquetFile(path).metadata.num_rows)
    source = CsvSource.open(path, header=header, delimiter=delimiter)
    return sum(len(values) for _, values in source.chunks(source.columns[:1], "string"))


def _takes_parameter(mechanism_name: str, parameter: str) -> bool:
    if mechanism_name == "auto":  # the chooser takes epsilon and categories only
        return False
    required, optional = parameters_of(get_registry().get("mechanism", mechanism_name))
    return parameter in required + optional


def build_estimator(name: str | None, mechanism: Mechanism, projection: str | None,
                    params: list[str] | None) -> Estimator:
    name = name or mechanism.default_estimator
    options = parse_params(params)
    if projection is not None:
        options["projection"] = projection
    return make_estimator(name, **options)


def privatize_stream(path, mechanism: Mechanism | None, columns: list[str] | None, *, rng=None,
                     block_bytes: int | None = None, progress=None, header: bool = True, codes: str = "labels",
                     delimiter: str = ","):
    """Privatise the raw data of a CSV or Parquet file block by block, yielding :class:`Reports`
    chunks (report files are read by :mod:`ldpest.io.sources`).

    ``header=False`` reads a CSV file without a header row (columns "1", "2", ...); ``codes``
    ("0-based", "1-based") reads category columns as positions in the mechanism's categories."""
    source = open_source(path, header=header, delimiter=delimiter)
    mechanism, columns = table_mechanism_and_columns(source, mechanism, columns, raw=True)
    generator = resolve_rng(rng)[0]  # one generator for every block
    options = {} if block_bytes is None else {"block_bytes": block_bytes}
    rows = _raw_rows_per_block(mechanism)
    encode = decoding(mechanism.encode_data, mechanism, codes, "data")
    for offset, values in source.chunks(columns, column_kind(mechanism, True, codes), progress=progress, **options):
        encoded = located(source, offset, encode, values)
        for start in range(0, len(encoded), rows):  # wide reports: bound the block by its reports' size
            yield mechanism.privatize_encoded(encoded[start:start + rows], generator)


RAW_BLOCK_BYTES = 1 << 26  # reports privatised at once by --raw and privatize (64 MB of float64)


def _raw_rows_per_block(mechanism: Mechanism) -> int:
    """Rows whose reports take about RAW_BLOCK_BYTES (8 bytes per report column)."""
    try:
        width = len(mechanism.report_columns())
    except NotImplementedError:
        width = 1
    return max(1, RAW_BLOCK_BYTES // (8 * width))


def refuse_overwriting(output, *inputs) -> None:
    """A clear error, before any work, when ``output`` is one of the input files."""
    if output is None:
        return
    target = Path(os.path.realpath(output))
    for given in inputs:
        if given is None:
            continue
        source = Path(os.path.realpath(given))
        same = target == source or (target.exists() and source.exists() and os.path.samefile(target, source))
        if same:
            raise ParameterError(f"{output} is also the input {given}: writing it would destroy the input; "
                                 "choose another output file")


def estimate_path(path, *, mechanism: Mechanism | None = None, columns=None, estimator_name=None,
                  projection=None, estimator_params=None, raw=False, rng=None, block_bytes=None,
                  progress=None, scheduler: str | None = None, header: bool = True, codes: str = "labels",
                  delimiter: str = ","):
    """Estimate from a report file (.nc, .zarr, .csv or .parquet), or from raw data (``raw=True``).

    Report files take one way in (:func:`ldpest.open_reports`) and one path: streamed part by
    part, or with ``scheduler`` (an address or threads/processes/synchronous) mapped on dask,
    each task reading its own part.  ``header`` and ``codes`` describe tables made by other
    tools (docs/other-libraries.md)."""
    path = Path(path)
    check_csv_options(path, header, codes, delimiter)
    from .spark import is_spark_master

    if is_spark_master(scheduler):
        if raw or path.suffix.lower() != ".parquet":
            raise ParameterError(f"--scheduler {scheduler}: Spark reads Parquet report files; {path} is not one "
                                 "(ldpest privatize ... -o reports.parquet writes one)")
        from .spark import estimate_parquet_on_spark

        return estimate_parquet_on_spark(
            path, scheduler, lambda chosen: build_estimator(estimator_name, chosen, projection, estimator_params),
            mechanism=mechanism, columns=columns, codes=codes)
    if raw:
        return _estimate_raw(path, mechanism=mechanism, columns=columns, estimator_name=estimator_name,
                             projection=projection, estimator_params=estimator_params, rng=rng,
                             block_bytes=block_bytes, progress=progress, scheduler=scheduler, header=header,
                             codes=codes, delimiter=delimiter)
    source = open_reports(path, mechanism=mechanism, columns=columns, header=header, codes=codes,
                          part_bytes=block_bytes, delimiter=delimiter)
    est = build_estimator(estimator_name, source.mechanism, projection, estimator_params)
    return estimate_file(source, est, scheduler=scheduler, progress=progress)


def estimate_weighted_path(path, weight_column: str, *, mechanism: Mechanism | None = None, columns=None,
                           projection=None, header: bool = True, codes: str = "labels", delimiter: str = ","):
    """Design-weighted frequencies from a table of reports (CSV or Parquet) with one weight per row in
    ``weight_column`` (:mod:`ldpest.engine.weights`).  Read whole: a survey's reports fit in memory."""
    from ..contract.reports import Reports
    from ..io.layout import warn_if_seeded
    from .weights import estimate_weighted

    path = Path(path)
    check_csv_options(path, header, codes, delimiter)
    if path.suffix.lower() not in (".csv", ".parquet"):
        raise ParameterError(f"--weight-column: the weights are a column of a CSV or Parquet table; {path} is neither")
    source = open_source(path, header=header, delimiter=delimiter)
    warn_if_seeded(path, source.rng)
    if not columns:
        columns = [c for c in source.columns if c != weight_column] if source.spec is None else None
    mechanism, columns = table_mechanism_and_columns(source, mechanism, columns, raw=False)
    if weight_column in columns:
        raise ParameterError(f"--weight-column {weight_column!r} is also a report column")
    source.require([weight_column])
    values = _whole_column(source, columns, column_kind(mechanism, False, codes))
    weights = _whole_column(source, [weight_column], "float")
    reports = located(source, 0, Reports.from_array, values, mechanism, codes)
    return located(source, 0, lambda: estimate_weighted(reports, weights, projection=projection or "auto"))


def _estimate_raw(path: Path, *, scheduler, estimator_name, projection, estimator_params, **options):
    """Privatise raw data locally, block by block, and estimate (studies)."""
    if scheduler is not None:
        raise ParameterError("--scheduler estimates report files; privatise raw data first")
    if path.suffix.lower() not in (".csv", ".parquet"):
        raise ParameterError("--raw reads raw data from CSV or Parquet, not NetCDF or Zarr")
    mechanism, columns = options.pop("mechanism"), options.pop("columns")
    chunks = privatize_stream(path, mechanism, columns, **options)
    first = next(chunks, None)
    if first is None:
        raise DataError(f"{path}: the file holds no rows")
    est = build_estimator(estimator_name, first.mechanism, projection, estimator_params)
    if est.multipass:
        raise ParameterError(f"--raw privatises the data as it reads them, once; estimator {est.name!r} reads the "
                             "reports several times: privatise to a report file (ldpest privatize), then estimate")
    total = est.aggregate(first)
    for chunk in chunks:
        total = total + est.aggregate(chunk)
    return est.finalize(total)


def check_csv_options(path, header: bool, codes: str, delimiter: str = ",") -> None:
    """``--no-header``, ``--delimiter`` (CSV) and ``--codes`` (CSV, Parquet) describe table files: a
    clear error where they cannot apply."""
    path = Path(path)
    if codes not in CODES:
        raise ParameterError(f"--codes must be one of {', '.join(CODES)}; got {codes!r}")
    suffix = path.suffix.lower()
    if not header and suffix != ".csv":
        raise ParameterError(f"--no-header: for CSV files only; {path} is not one")
    if len(delimiter) != 1 or delimiter in "\"\r\n":
        raise ParameterError(f"--delimiter must be one character (not a quote or a line break), got {delimiter!r}")
    if delimiter != "," and suffix != ".csv":
        raise ParameterError(f"--delimiter: for CSV files only; {path} is not one")
    if codes != "labels" and suffix not in (".csv", ".parquet"):
        raise ParameterError(f"--codes {codes}: for CSV and Parquet files only; {path} is neither")


def privatize_path(path, output, *, mechanism: Mechanism, columns: list[str], rng="secure",
                   block_bytes=None, progress=None, header: bool = True, codes: str = "labels",
                   delimiter: str = ",") -> int:
    """Privatise raw data (CSV or Parquet) and write the reports (.nc, .csv or .parquet) atomically; returns n."""
    check_csv_options(path, header, codes, delimiter)
    chunks = privatize_stream(path, mechanism, columns, rng=rng, block_bytes=block_bytes, progress=progress,
                              header=header, codes=codes, delimiter=delimiter)
    with ReportWriter(output, mechanism, resolve_rng(rng)[1]) as writer:
        for chunk in chunks:  # one block of reports in memory at a time
            writer.write(chunk.values)
        if writer.n == 0:
            raise DataError(f"{path}: the file holds no rows")
    return writer.n


def _whole_column(source, columns: list[str], kind: str):
    import numpy as np

    parts = [np.asarray(values) for _, values in source.chunks(columns, kind)]
    if not parts:
        raise DataError(f"{source.path}: the file holds no rows")
    return np.concatenate(parts)


def privatize_accounted(path, output, *, mechanism: Mechanism, columns: list[str], user_column: str,
                        ledger=None, budget: float | None = None, per: str = "day", at=None, state=None,
                        rng="secure", header: bool = True, codes: str = "labels", delimiter: str = ","):
    """Privatise a file's records with the user ids of ``user_column``
    (:func:`ldpest.engine.ledger.privatize_accounted`): the reports go to a temporary file, then the
    client state and the ledger are saved, then the reports move into place.  Returns ``(reports
    written, Charges or None)``."""
    from .ledger import privatize_accounted as privatize_records

    check_csv_options(path, header, codes, delimiter)
    source = open_source(path, header=header, delimiter=delimiter)
    mechanism, columns = table_mechanism_and_columns(source, mechanism, columns, raw=True)
    source.require([user_column])
    encoded = located(source, 0, decoding(mechanism.encode_data, mechanism, codes, "data"),
                      _whole_column(source, columns, column_kind(mechanism, True, codes)))
    users = _whole_column(source, [user_column], "string")
    generator, kind = resolve_rng(rng)
    with ReportWriter(output, mechanism, kind) as writer:
        _, charges = privatize_records(mechanism, encoded, users, ledger=ledger, budget=budget, per=per, at=at,
                                       state=state, rng=generator, write=lambda reports: writer.write(reports.values))
    return writer.n, charges
