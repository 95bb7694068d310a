"""Files: reports and data from CSV (streamed with pyarrow), results to and
from NetCDF, CSV and JSON.  Every write is atomic (:mod:`ldpest.atomic`).

A report CSV written by ldpest starts with one line ``#ldpest-spec {...}``
holding the mechanism spec and one line ``#ldpest-rng KIND`` naming the kind of
generator that made the reports (``secure``, ``numpy``, ``numpy-seeded``), then
a header row and one row per report.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
from ._xarray import xr

from .atomic import atomic_path
from .errors import DataError, ParameterError
from .results import estimate_variable

SPEC_PREFIX = "#ldpest-spec "
RNG_PREFIX = "#ldpest-rng "
DEFAULT_BLOCK_BYTES = 1 << 23


@dataclass(frozen=True)
class CsvSource:
    """A CSV file: its header, and the mechanism spec line if it has one."""

    path: Path
    columns: list[str]
    spec: dict | None
    header_line: int  # 1-based line number of the header row (lines before the data without one)
    rng: str | None = None  # the #ldpest-rng line: the kind of generator that made the reports
    has_header: bool = True

    @classmethod
    def open(cls, path, header: bool = True) -> "CsvSource":
        """Open ``path``; without a ``header`` row its columns are named by position, "1", "2", ..."""
        path = Path(path)
        if not path.is_file():
            raise DataError(f"{path}: no such file")
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            first = handle.readline()
            spec, rng, line, comment_lines = None, None, first, 0
            if first.startswith(SPEC_PREFIX):
                try:
                    spec = json.loads(first[len(SPEC_PREFIX):])
                except ValueError:
                    raise DataError(f"{path}, line 1: the {SPEC_PREFIX.strip()} line is not valid JSON") from None
                line, comment_lines = handle.readline(), 1
                if line.startswith(RNG_PREFIX):
                    rng = line[len(RNG_PREFIX):].strip()
                    line, comment_lines = handle.readline(), 2
        if not line.strip():
            raise DataError(f"{path}: the file is empty (no {'header ' if header else ''}row)")
        # one line: no thread pool (a pool still winding down at exit has aborted the process,
        # "terminate called without an active exception", when a command failed right after this)
        names = pacsv.read_csv(pa.py_buffer(line.encode()),
                               read_options=pacsv.ReadOptions(use_threads=False,
                                                              autogenerate_column_names=not header)).schema.names
        if not header:
            return cls(path, [str(i + 1) for i in range(len(names))], spec, comment_lines, rng, has_header=False)
        return cls(path, list(names), spec, comment_lines + 1, rng)

    def require(self, columns: list[str]) -> None:
        missing = [c for c in columns if c not in self.columns]
        if missing:
            raise DataError(
                f"{self.path}: no column {', '.join(map(repr, missing))}; columns are: {', '.join(self.columns)}"
            )

    def line_of(self, row: int) -> int:
        """1-based file line of 0-based data row ``row``."""
        return self.header_line + 1 + row

    def where(self, row: int) -> str:
        return f"line {self.line_of(row)}"

    def chunks(self, columns: list[str], kind: str, block_bytes: int = DEFAULT_BLOCK_BYTES,
               progress=None) -> Iterator[tuple[int, np.ndarray]]:
        """Yield ``(first_row, values)`` with values of shape (rows,) for one
        column or (rows, len(columns)).  ``kind``: "string", "int" or "float".

        Memory stays bounded by the block size, whatever the file size.
        """
        self.require(columns)
        if self.has_header:
            read = pacsv.ReadOptions(block_size=block_bytes, skip_rows=self.header_line - 1)
        else:
            read = pacsv.ReadOptions(block_size=block_bytes, skip_rows=self.header_line, column_names=self.columns)
        convert = pacsv.ConvertOptions(include_columns=columns, column_types={c: pa.string() for c in columns},
                                       strings_can_be_null=False)
        offset = 0
        with self.path.open("rb") as handle:
            try:
                reader = pacsv.open_csv(handle, read_options=read, convert_options=convert)
            except pa.ArrowInvalid as exc:
                raise DataError(f"{self.path}: cannot parse as CSV ({exc})") from None
            while True:
                try:
                    batch = reader.read_next_batch()
                except StopIteration:
                    break
                except pa.ArrowInvalid as exc:
                    raise DataError(f"{self.path}: cannot parse as CSV near row {offset} ({exc})") from None
                yield offset, located(self, offset, table_values, batch, columns, kind)
                offset += batch.num_rows
                if progress is not None:
                    progress(handle.tell())


def located(source, offset: int, action, *args):
    """``action(*args)``, with a DataError's row (relative to ``offset``) named as the file's line or row."""
    try:
        return action(*args)
    except DataError as exc:
        if exc.row is None:
            raise DataError(f"{source.path}: {exc.message}") from None
        raise DataError(f"{source.path}, {source.where(offset + exc.row)}: {exc.message}") from None


def table_values(table, columns: list[str], kind: str) -> np.ndarray:
    """The values of ``columns`` of a pyarrow table or batch (:func:`column_values` each): shape
    (rows,) for one column, (rows, columns) for several."""
    arrays = [column_values(table.column(name), name, kind) for name in columns]
    return arrays[0] if len(arrays) == 1 else np.column_stack(arrays)


def column_values(column, name: str, kind: str) -> np.ndarray:
    """The values of one table column (pyarrow, from CSV text or typed Parquet): ``kind``
    "string" gives a ``pandas.Categorical`` (no Python object per row), "int" and "float" numbers.
    Raises :class:`DataError` with the 0-based ``row`` of the first value that does not fit."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if column.null_count:
        row = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
        raise DataError(f"column {name!r} is missing a value", row=row)
    if kind == "string":
        import pandas as pd

        encoded = column if pa.types.is_dictionary(column.type) else pc.dictionary_encode(column)
        return pd.Categorical.from_codes(encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64),
                                         categories=encoded.dictionary.to_pylist())
    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    what = "an integer" if kind == "int" else "a number"
    if pa.types.is_integer(column.type) or pa.types.is_floating(column.type) or pa.types.is_boolean(column.type):
        values = column.to_numpy(zero_copy_only=False)
        if kind != "int" or values.dtype.kind in "iub":
            return values.astype(np.int64) if kind == "int" else values
        whole = np.isfinite(values) & (values == np.round(values))
        if not whole.all():
            row = int(np.flatnonzero(~whole)[0])
            raise DataError(f"column {name!r} holds {values[row]!r}, which is not {what}", row=row)
        return values.astype(np.int64)
    target = pa.int64() if kind == "int" else pa.float64()
    try:
        return pc.cast(pc.utf8_trim_whitespace(column), target).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        parse = int if kind == "int" else float
        for row, value in enumerate(column.to_pylist()):
            try:
                parse(value)
            except (TypeError, ValueError):
                raise DataError(f"column {name!r} holds {value!r}, which is not {what}", row=row) from None
        raise


PARQUET_SPEC_KEY = b"ldpest-spec"  # schema metadata of a report file written by ldpest
PARQUET_RNG_KEY = b"ldpest-rng"
PARQUET_BATCH_ROWS = 1 << 16


@dataclass(frozen=True)
class ParquetSource:
    """A Parquet file of reports or data: its columns, and the mechanism spec if ldpest wrote it.
    Read batch by batch (memory stays one batch); report files are read by row group in
    :mod:`ldpest.sources`."""

    path: Path
    columns: list[str]
    spec: dict | None
    rng: str | None = None

    @classmethod
    def open(cls, path) -> "ParquetSource":
        import pyarrow.parquet as pq

        path = Path(path)
        if not path.is_file():
            raise DataError(f"{path}: no such file")
        try:
            schema = pq.read_schema(path)
        except (pa.ArrowInvalid, OSError) as exc:
            raise DataError(f"{path}: not a readable Parquet file ({exc})") from None
        metadata = schema.metadata or {}
        spec = None
        if PARQUET_SPEC_KEY in metadata:
            try:
                spec = json.loads(metadata[PARQUET_SPEC_KEY].decode())
            except ValueError:
                raise DataError(f"{path}: its ldpest-spec metadata is not valid JSON") from None
        rng = metadata[PARQUET_RNG_KEY].decode() if PARQUET_RNG_KEY in metadata else None
        return cls(path, list(schema.names), spec, rng)

    require = CsvSource.require

    def where(self, row: int) -> str:
        return f"row {row + 1}"

    def chunks(self, columns: list[str], kind: str, block_bytes: int | None = None,
               progress=None) -> Iterator[tuple[int, np.ndarray]]:
        """Yield ``(first_row, values)`` like :meth:`CsvSource.chunks`, batch by batch."""
        import pyarrow.parquet as pq

        self.require(columns)
        handle = pq.ParquetFile(self.path)
        offset = 0
        for batch in handle.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=columns):
            yield offset, located(self, offset, table_values, batch, columns, kind)
            offset += batch.num_rows
            if progress is not None:
                progress(int(self.path.stat().st_size * offset / max(1, handle.metadata.num_rows)))


def open_source(path, header: bool = True):
    """A CSV or Parquet file of reports or raw data, by its suffix."""
    if Path(path).suffix.lower() == ".parquet":
        return ParquetSource.open(path)
    return CsvSource.open(path, header=header)


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

    def __enter__(self) -> "ReportWriter":
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
        return pa.table(dict(zip(columns, arrays))).replace_schema_metadata(metadata)

    def _create_variable(self, values: np.ndarray):
        from . import __version__
        from .reports import SPEC_ATTR

        dims = self.mechanism.report_dims
        self._handle.createDimension(dims[0], None)
        for name, size in zip(dims[1:], values.shape[1:]):
            self._handle.createDimension(name, size)
        variable = self._handle.createVariable("reports", values.dtype, dims)
        variable.setncatts({"mechanism": self.mechanism.name, SPEC_ATTR: self.mechanism.spec_json,
                            "epsilon": self.mechanism.epsilon, "rng": self.rng, "ldpest_version": __version__})
        return variable

    def __exit__(self, kind, error, trace):
        if self._handle is not None:
            self._handle.close()
        return self._atomic.__exit__(kind, error, trace)


# -- results -------------------------------------------------------------------
RESULT_FORMATS = (".nc", ".csv", ".json")


def _check_format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in RESULT_FORMATS:
        raise ParameterError(f"{path}: unknown output format {suffix or '(none)'}; use one of {', '.join(RESULT_FORMATS)}")
    return suffix


def result_table(result: xr.Dataset):
    """One row per cell: coordinates, bounds as ``<dim>_lower``/``<dim>_upper``, and values."""
    name = estimate_variable(result)
    dims = result[name].dims
    cell_vars = [v for v in result.data_vars if result[v].dims == dims]
    frame = result[cell_vars].to_dataframe().reset_index()
    for dim in dims:
        bounds = f"{dim}_bounds"
        if bounds in result:
            index = frame[dim].map({c: i for i, c in enumerate(result[dim].values.tolist())})
            edges = result[bounds].values
            frame.insert(frame.columns.get_loc(dim) + 1, f"{dim}_lower", edges[index, 0])
            frame.insert(frame.columns.get_loc(dim) + 2, f"{dim}_upper", edges[index, 1])
    return frame


def metadata_path(path) -> Path:
    """The CSVW sidecar of a result CSV: ``result.csv`` -> ``result.csv-metadata.json``."""
    path = Path(path)
    return path.with_name(path.name + "-metadata.json")


def csv_metadata(result: xr.Dataset, table, path: Path) -> dict:
    """CSV on the Web (W3C CSVW) metadata: the columns described, and the result's attributes."""
    columns = []
    for name in table.columns:
        source = name[: -len("_lower")] if name.endswith("_lower") else name[: -len("_upper")] \
            if name.endswith("_upper") else name
        attrs = result[source].attrs if source in result.variables else {}
        column = {"name": name, "titles": name}
        if name != source:
            column["dc:description"] = f"{'lower' if name.endswith('_lower') else 'upper'} edge of the {source} cell"
        elif "long_name" in attrs or "description" in attrs:
            column["dc:description"] = attrs.get("description", attrs.get("long_name"))
        if "units" in attrs and name == source:
            column["units"] = attrs["units"]
        columns.append(column)
    return {"@context": "http://www.w3.org/ns/csvw", "url": path.name, "tableSchema": {"columns": columns},
            "ldpest": result.attrs}


def write_result(result: xr.Dataset, path) -> None:
    """Write a result by extension (.nc, .csv, .json), atomically.

    CSV: a plain table (:func:`result_table`) that ``read.csv`` and ``pandas.read_csv`` read with
    their defaults, and beside it the CSVW sidecar ``<file>-metadata.json`` with the column
    descriptions and the result's attributes (mechanism, epsilon, n, confidence level...).
    JSON: ``xarray.Dataset.to_dict`` (lossless for labels and attrs).
    """
    path = Path(path)
    suffix = _check_format(path)
    if suffix == ".csv" and "estimate_variable" not in result.attrs:
        raise ParameterError(f"{path}: write studies to .nc or .json")
    if suffix == ".csv":
        table = result_table(result)
        with atomic_path(metadata_path(path)) as tmp:
            tmp.write_text(json.dumps(csv_metadata(result, table, path), indent=1, default=_json_default))
        with atomic_path(path) as tmp:
            table.to_csv(tmp, index=False, float_format="%.17g")
        return
    with atomic_path(path) as tmp:
        if suffix == ".nc":
            result.to_netcdf(tmp, engine="netcdf4")
        else:
            tmp.write_text(json.dumps(result.to_dict(data="list"), indent=1, default=_json_default))


def read_result(path) -> xr.Dataset:
    """Read a result written by :func:`write_result` (.nc or .json)."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    suffix = _check_format(path)
    try:
        if suffix == ".nc":
            with xr.open_dataset(path, engine="netcdf4") as ds:
                return ds.load()
        if suffix == ".json":
            content = json.loads(path.read_text())
            if not isinstance(content, dict) or "data_vars" not in content:
                raise DataError(f"{path}: not an ldpest result (JSON written by `ldpest estimate -o` or "
                                "`ldpest simulate -o` holds data_vars)")
            return xr.Dataset.from_dict(content)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataError(f"{path}: not a readable ldpest result ({exc})") from None
    raise DataError(f"{path}: read results from .nc or .json (CSV is for other tools)")


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")
