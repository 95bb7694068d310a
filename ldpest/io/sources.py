"""One way into report files: NetCDF, Zarr, CSV and Parquet, as parts of validated reports.

:func:`open_reports` reads a file's header only (its spec, its columns) and cuts the file into
parts: slices of the ``report`` dimension (NetCDF, Zarr), row groups (Parquet) or byte ranges
that end at a line end (CSV).  :func:`read_part` reads one part alone, so one estimate path
(:func:`ldpest.engine.streaming.estimate_file`) either streams the parts in order (memory: one part) or maps them on
dask, where each task reads its own part once and reduces it to sufficient statistics
(:func:`ldpest.engine.mapreduce.aggregate_parts_dask`).  The CLI, the R package and Python
(``ldpest.open_reports``, ``ldpest.estimate``) all come in here; :func:`read_reports` reads a
NetCDF file or Zarr store whole, or lazily with dask.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..contract.base import Mechanism
from ..contract.registry import mechanism_from_spec, mechanism_from_spec_json
from ..contract.reports import Reports
from ..util.errors import DataError, ParameterError
from ..util.labels import CODES
from ..util.spec import spec_of
from ..util.xarray import xr
from .kept_open import close_kept_files, kept_open
from .layout import column_kind, decoding, table_mechanism_and_columns, warn_if_seeded
from .tables import open_source, table_values

REPORT_SUFFIXES = (".nc", ".zarr", ".csv", ".parquet")
PART_BYTES = 1 << 23  # bytes of reports per part (CSV: of the file)


@dataclass(frozen=True)
class ReportFile:
    """A report file opened for reading: what any worker needs to read any part (picklable)."""

    path: Path
    format: str  # "netcdf", "zarr", "csv" or "parquet"
    mechanism_spec: str
    parts: tuple  # (start, stop) report rows (NetCDF, Zarr) or file bytes (CSV); row groups (Parquet)
    first_rows: tuple | None  # each part's first report, where known without reading the file
    rng: str | None = None
    columns: tuple[str, ...] = ()  # table columns holding a report, in order
    kind: str = "float"  # how table columns are parsed: "string", "int" or "float"
    codes: str = "labels"
    csv_names: tuple[str, ...] = ()  # every column of a CSV file
    csv_lines_before: int = 0  # lines before the first data row (spec, rng and header lines)
    csv_data_start: int = 0  # byte offset of the first data row
    csv_delimiter: str = ","

    @property
    def mechanism(self) -> Mechanism:
        return mechanism_from_spec_json(self.mechanism_spec)  # cached: built once per spec

    def __len__(self) -> int:
        return len(self.parts)

    def bytes_through(self, index: int) -> int:
        """Bytes of the file behind parts 0..index (for a progress bar)."""
        if self.format == "csv":
            return self.parts[index][1]
        size = self.path.stat().st_size if self.path.is_file() else 0
        return int(size * (index + 1) / len(self))

    def load(self):
        """Every report of the file in memory, validated, as :class:`ldpest.Reports`."""
        if not self.parts:
            raise DataError(f"{self.path}: the file holds no reports")
        try:
            values = np.concatenate([read_part(self, index) for index in range(len(self))])
        finally:
            close_kept_files()
        return Reports.trusted(values, self.mechanism, rng=self.rng or "external")

    def __repr__(self) -> str:
        return f"<ldpest.ReportFile {self.path} ({self.format}, {len(self)} parts) mechanism={self.mechanism_spec}>"


def open_reports(path, *, mechanism: Mechanism | None = None, columns=None, header: bool = True,
                 codes: str = "labels", part_bytes: int | None = None, delimiter: str = ",") -> ReportFile:
    """Open a report file (.nc, .zarr, .csv or .parquet) for ``ldpest.estimate``, reading its
    header only.

    A file that carries its spec (every file ldpest writes) refuses a different ``mechanism``;
    a table without one (reports made by other tools) needs it, with the ``columns`` holding a
    report, ``header=False`` for CSV without a header row and ``codes`` ("0-based",
    "1-based") for category positions (docs/other-libraries.md).
    """
    path = Path(path)
    part_bytes = PART_BYTES if part_bytes is None else int(part_bytes)
    suffix = path.suffix.lower()
    if suffix not in REPORT_SUFFIXES:
        raise ParameterError(f"{path}: read reports from {', '.join(REPORT_SUFFIXES)}")
    if codes not in CODES:
        raise ParameterError(f"codes must be one of {', '.join(CODES)}; got {codes!r}")
    if suffix in (".nc", ".zarr"):
        if not header or codes != "labels" or columns:
            raise ParameterError(f"{path}: columns, header and codes describe tables; a {suffix} report file "
                                 "carries its own layout")
        with _open_dataset(path) as dataset:
            data = _reports_of(path, dataset)
            carried = _mechanism_from(path, data)
            rng = data.attrs.get("rng")
            n = int(data.sizes["report"])
            width = int(np.prod(data.shape[1:], dtype=np.int64)) * data.dtype.itemsize
            stored = data.encoding.get("preferred_chunks", {}).get("report")
        if mechanism is not None and mechanism != carried:
            raise ParameterError(f"{path} was made by {carried.spec_json}; it carries its own spec, so do not pass "
                                 "--mechanism")
        warn_if_seeded(path, rng)
        rows = _whole_chunks(max(1, part_bytes // max(1, width)), stored)
        parts = tuple((start, min(n, start + rows)) for start in range(0, n, rows))
        return ReportFile(path, "netcdf" if suffix == ".nc" else "zarr", carried.spec_json, parts,
                          tuple(start for start, _ in parts), rng=rng)
    source = open_source(path, header=header, delimiter=delimiter)
    warn_if_seeded(path, source.rng)
    mechanism, columns = table_mechanism_and_columns(source, mechanism, columns, raw=False)
    table = {"rng": source.rng, "columns": tuple(columns), "kind": column_kind(mechanism, False, codes), "codes": codes}
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        metadata = pq.ParquetFile(path).metadata
        sizes = [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)]
        firsts = tuple(int(v) for v in np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])[:-1])
        return ReportFile(path, "parquet", mechanism.spec_json, tuple(range(len(sizes))), firsts, **table)
    start = _data_start(path, source.header_line)
    return ReportFile(path, "csv", mechanism.spec_json, _byte_ranges(path, start, part_bytes), None,
                      csv_names=tuple(source.columns), csv_lines_before=source.header_line, csv_data_start=start,
                      csv_delimiter=delimiter, **table)


def read_part(source: ReportFile, index: int, first_row: int | None = None) -> np.ndarray:
    """The validated reports (stored form) of part ``index``.  ``first_row``, the part's first
    report when the caller counted it, names the file line of an error; else it is counted then."""
    mechanism = source.mechanism
    part = source.parts[index]
    if source.format in ("netcdf", "zarr"):
        # NetCDF files stay open between parts (ldpest.io.kept_open); a Zarr store opens in 2 ms
        opened = kept_open(source.path, _open_dataset) if source.format == "netcdf" else _open_dataset(source.path)
        with opened as dataset:
            values = np.asarray(dataset["reports"].isel(report=slice(*part)).values)
        try:
            return mechanism.check_encoded_reports(values)
        except DataError as exc:
            raise DataError(f"{source.path}: {exc.message}", row=None if exc.row is None else part[0] + exc.row) \
                from None
    encode = decoding(mechanism.encode_reports, mechanism, source.codes, "reports")
    try:
        return encode(_table_part(source, part))
    except DataError as exc:
        if exc.row is None:
            raise DataError(f"{source.path}: {exc.message}") from None
        if source.format == "parquet":
            where = f"row {source.first_rows[index] + exc.row + 1}"
        else:
            before = first_row if first_row is not None else _rows_between(source.path, source.csv_data_start, part[0])
            where = f"line {source.csv_lines_before + before + exc.row + 1}"
        raise DataError(f"{source.path}, {where}: {exc.message}") from None


# -- the formats ---------------------------------------------------------------------------
def _open_dataset(path: Path):
    """A NetCDF file or Zarr store, lazily (no values read yet); close it after use."""
    try:
        if path.suffix.lower() == ".zarr":
            if not path.is_dir():
                raise DataError(f"{path}: no such Zarr store")
            return xr.open_dataset(path, engine="zarr", chunks=None, consolidated=False)
        return xr.open_dataset(path, engine="netcdf4")
    except FileNotFoundError:
        if path.is_dir():
            raise DataError(f"{path}: a folder, but not a Zarr report store (no Zarr metadata in it)") from None
        raise DataError(f"{path}: no such file") from None
    except (OSError, ValueError, KeyError) as exc:
        raise DataError(f"{path}: not a readable report file ({exc})") from None


def _whole_chunks(rows: int, stored: int | None) -> int:
    """``rows`` rounded down to whole stored chunks along ``report`` when a chunk fits in a part, so
    that no chunk is read (and decompressed) by two parts."""
    return rows - rows % stored if stored and stored <= rows else rows


def _reports_of(path: Path, dataset):
    if "reports" not in dataset.data_vars or not dataset["reports"].dims or dataset["reports"].dims[0] != "report":
        raise DataError(f"{path}: no 'reports' variable with 'report' as first dim (is it a result file?)")
    return dataset["reports"]


def _mechanism_from(path: Path, data) -> Mechanism:
    return mechanism_from_spec(spec_of(data.attrs, f"{path}: the reports"))


def _table_part(source: ReportFile, part) -> np.ndarray:
    """The parsed report columns of one CSV byte range or Parquet row group (rows from 0)."""
    if source.format == "parquet":
        import pyarrow.parquet as pq

        table = pq.ParquetFile(source.path).read_row_group(part, columns=list(source.columns))
    else:
        import pyarrow as pa
        import pyarrow.csv as pacsv

        with open(source.path, "rb") as handle:
            handle.seek(part[0])
            text = handle.read(part[1] - part[0])
        # the part is in memory already: one block for all of it, so no line straddles two blocks
        read = pacsv.ReadOptions(column_names=list(source.csv_names), use_threads=False, block_size=len(text) + 1)
        convert = pacsv.ConvertOptions(include_columns=list(source.columns), strings_can_be_null=False,
                                       column_types={c: pa.string() for c in source.columns})
        try:
            table = pacsv.read_csv(pa.py_buffer(text), read_options=read, convert_options=convert,
                                   parse_options=pacsv.ParseOptions(delimiter=source.csv_delimiter))
        except pa.ArrowInvalid as exc:
            raise DataError(f"cannot parse as CSV near byte {part[0]} ({exc})") from None
    return table_values(table, list(source.columns), source.kind)


def _data_start(path: Path, lines_before: int) -> int:
    with open(path, "rb") as handle:
        for _ in range(lines_before):
            handle.readline()
        return handle.tell()


def _byte_ranges(path: Path, start: int, part_bytes: int) -> tuple:
    """``(start, stop)`` byte ranges of about ``part_bytes`` from ``start``, each ending after a line end."""
    size = path.stat().st_size
    ranges = []
    with open(path, "rb") as handle:
        while start < size:
            stop = min(size, start + part_bytes)
            if stop < size:
                handle.seek(stop - 1)
                stop += len(handle.readline()) - 1  # to just after the line end at or after stop - 1
            ranges.append((start, stop))
            start = stop
    return tuple(ranges)


def _rows_between(path: Path, start: int, stop: int) -> int:
    """Line ends between two byte offsets (only when an error needs a line number)."""
    count = 0
    with open(path, "rb") as handle:
        handle.seek(start)
        while start < stop:
            block = handle.read(min(1 << 24, stop - start))
            count += block.count(b"\n")
            start += len(block)
    return count


def read_reports(path, chunks=None) -> Reports:
    """Read reports written by :meth:`Reports.to_netcdf` or :meth:`Reports.to_zarr`,
    validated against their mechanism.

    ``chunks`` (e.g. ``{"report": 10**6}``) opens the file lazily with Dask
    (validated block by block when estimated).
    """
    if Path(path).suffix.lower() == ".zarr":
        if not Path(path).is_dir():
            raise DataError(f"{path}: no such Zarr store")
        try:
            data = xr.open_zarr(path, chunks=chunks if chunks is not None else {}, consolidated=False)["reports"]
        except (OSError, ValueError, KeyError) as exc:
            raise DataError(f"{path}: not a readable Zarr report store ({exc})") from None
    else:
        try:
            data = xr.open_dataarray(path, engine="netcdf4", chunks=chunks)
        except FileNotFoundError:
            raise DataError(f"{path}: no such file") from None
        except (OSError, ValueError) as exc:
            raise DataError(f"{path}: not a readable NetCDF report file ({exc})") from None
    if chunks is None:
        data = data.load()
        data.close()
    reports = Reports(data)
    if chunks is None:
        checked = reports.mechanism.check_encoded_reports(reports.values)
        reports = Reports(data.copy(data=checked))
    return reports
