"""Report files written block by block: .csv (spec and rng lines), .nc and .parquet, atomically."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from ..util.atomic import atomic_path
from ..util.errors import ParameterError
from ..util.spec import SPEC_ATTR
from ..util.version import __version__
from .tables import PARQUET_RNG_KEY, PARQUET_SPEC_KEY, RNG_PREFIX, SPEC_PREFIX


def write_reports_csv(reports, path) -> None:
    """Reports as CSV with the spec and rng lines, atomically."""
    with ReportWriter(path, reports.mechanism, str(reports.data.attrs.get("rng", "external"))) as writer:
        writer.write(reports.values)


REPORT_FORMATS = (".nc", ".csv", ".parquet")


class ReportWriter:
    """Reports written block by block to .csv (spec and rng lines, header, rows), .nc (an unlimited
    ``report`` dimension) or .parquet (one row group per block, the spec and rng in the schema's
    metadata, labels dictionary-encoded), into a temporary file that replaces ``path`` only when
    the context exits without an error: memory stays one block, and a failure leaves no partial
    file."""

    def __init__(self, path, mechanism, rng: str):
        self.path, self.mechanism, self.rng = Path(path), mechanism, rng
        self.suffix = self.path.suffix.lower()
        if self.suffix not in REPORT_FORMATS:
            raise ParameterError(f"{self.path}: write reports to {', '.join(REPORT_FORMATS)}")
        self.n = 0

    def __enter__(self) -> ReportWriter:
        self._atomic = atomic_path(self.path)
        tmp = self._atomic.__enter__()
        if self.suffix == ".csv":
            self._handle = open(tmp, "wb")
            self._handle.write((SPEC_PREFIX + self.mechanism.spec_json + "\n").encode())
            self._handle.write((RNG_PREFIX + self.rng + "\n").encode())
            header = io.StringIO()
            csv.writer(header, lineterminator="\n").writerow(self.mechanism.report_columns())  # arrow quotes names
            self._handle.write(header.getvalue().encode())
        elif self.suffix == ".parquet":
            self._tmp, self._handle = tmp, None  # the writer is made with the first block's schema
        else:
            import netCDF4

            self._handle = netCDF4.Dataset(tmp, "w", format="NETCDF4")
            self._variable = None
        return self

    def write(self, values: np.ndarray) -> None:
        values = np.asarray(values)
        if self.suffix == ".csv":
            mechanism = self.mechanism
            columns = mechanism.report_columns()
            shown = np.asarray(mechanism.categories, dtype=object)[values] if mechanism.report_kind == "label" \
                else values
            shown = shown.reshape(len(values), len(columns))
            table = pa.table({name: pa.array(shown[:, j].tolist() if shown.dtype == object else shown[:, j])
                              for j, name in enumerate(columns)})
            pacsv.write_csv(table, self._handle,
                            write_options=pacsv.WriteOptions(include_header=False, quoting_style="needed"))
        elif self.suffix == ".parquet":
            table = self._parquet_table(values)
            if self._handle is None:
                import pyarrow.parquet as pq

                self._handle = pq.ParquetWriter(self._tmp, table.schema)
            self._handle.write_table(table, row_group_size=max(1, len(values)))
        else:
            if self._variable is None:
                self._variable = self._create_variable(values)
            self._variable[self.n:self.n + len(values)] = values
        self.n += len(values)

    def _parquet_table(self, values: np.ndarray):
        mechanism = self.mechanism
        columns = mechanism.report_columns()
        if mechanism.report_kind == "label":
            categories = list(mechanism.categories)
            labels = pa.array(categories) if all(isinstance(c, int) for c in categories) \
                else pa.array([str(c) for c in categories])
            arrays = [pa.DictionaryArray.from_arrays(pa.array(values.astype(np.int32)), labels)]
        else:
            flat = values.reshape(len(values), len(columns))
            arrays = [pa.array(flat[:, j]) for j in range(len(columns))]
        metadata = {PARQUET_SPEC_KEY: mechanism.spec_json.encode(), PARQUET_RNG_KEY: self.rng.encode()}
        return pa.table(dict(zip(columns, arrays, strict=True))).replace_schema_metadata(metadata)

    def _create_variable(self, values: np.ndarray):
        dims = self.mechanism.report_dims
        self._handle.createDimension(dims[0], None)
        for name, size in zip(dims[1:], values.shape[1:], strict=True):
            self._handle.createDimension(name, size)
        variable = self._handle.createVariable("reports", values.dtype, dims)
        variable.setncatts({"mechanism": self.mechanism.name, SPEC_ATTR: self.mechanism.spec_json,
                            "epsilon": self.mechanism.epsilon, "rng": self.rng, "ldpest_version": __version__})
        return variable

    def __exit__(self, kind, error, trace):
        failure = None
        if self._handle is not None:
            try:
                self._handle.close()
            except Exception as exc:  # a full disk often shows only when the last block is flushed
                failure = exc
        if failure is not None and error is None:
            kind, error, trace = type(failure), failure, failure.__traceback__
        suppressed = self._atomic.__exit__(kind, error, trace)  # removes the temporary file, names the target
        if failure is not None and not suppressed:
            raise failure
        return suppressed
