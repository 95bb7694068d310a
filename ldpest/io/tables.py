"""Tables of reports or raw data: CSV streamed with pyarrow, and Parquet, read block by block.

A report CSV written by ldpest starts with one line ``#ldpest-spec {...}`` holding the mechanism
spec and one line ``#ldpest-rng KIND`` naming the kind of generator that made the reports
(``secure``, ``numpy``, ``numpy-seeded``), then a header row and one row per report.  A Parquet
report file holds the same in its schema's metadata.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ..util.errors import DataError

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
    delimiter: str = ","

    @classmethod
    def open(cls, path, header: bool = True, delimiter: str = ",") -> CsvSource:
        """Open ``path``; without a ``header`` row its columns are named by position, "1", "2", ...;
        fields are separated by ``delimiter`` (one character)."""
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
        try:
            names = pacsv.read_csv(pa.py_buffer(line.encode()),
                                   read_options=pacsv.ReadOptions(use_threads=False, block_size=len(line) + 1,
                                                                  autogenerate_column_names=not header),
                                   parse_options=pacsv.ParseOptions(delimiter=delimiter)).schema.names
        except pa.ArrowInvalid as exc:
            raise DataError(f"{path}, line {comment_lines + 1}: cannot parse as CSV ({exc})") from None
        if not header:
            return cls(path, [str(i + 1) for i in range(len(names))], spec, comment_lines, rng, has_header=False,
                       delimiter=delimiter)
        repeated = sorted(name for name, count in Counter(names).items() if count > 1)
        if repeated:
            raise DataError(f"{path}, line {comment_lines + 1}: the header row names {', '.join(map(repr, repeated))} "
                            "more than once: if the file has no header row, add --no-header")
        return cls(path, list(names), spec, comment_lines + 1, rng, delimiter=delimiter)

    def require(self, columns: list[str]) -> None:
        missing = [c for c in columns if c not in self.columns]
        if missing:
            used = getattr(self, "delimiter", None)  # (Parquet shares this method; its columns are typed)
            separators = [s for s in (";", "\t", "|", ",") if used and s != used and any(s in c for c in self.columns)]
            hint = f" (is the file separated by {separators[0]!r}? add --delimiter {separators[0]!r})" \
                if separators else ""
            raise DataError(
                f"{self.path}: no column {', '.join(map(repr, missing))}; columns are: {', '.join(self.columns)}{hint}"
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
                reader = pacsv.open_csv(handle, read_options=read, convert_options=convert,
                                        parse_options=pacsv.ParseOptions(delimiter=self.delimiter))
            except pa.ArrowInvalid as exc:
                raise DataError(f"{self.path}: {_csv_problem(exc, block_bytes)}") from None
            while True:
                try:
                    batch = reader.read_next_batch()
                except StopIteration:
                    break
                except pa.ArrowInvalid as exc:
                    raise DataError(f"{self.path}: {_csv_problem(exc, block_bytes)} (after row {offset})") from None
                yield offset, located(self, offset, table_values, batch, columns, kind)
                offset += batch.num_rows
                if progress is not None:
                    progress(handle.tell())


def _csv_problem(exc, block_bytes: int) -> str:
    """What went wrong in pyarrow's terms, said in the user's: a line longer than a read block is
    pyarrow's "straddling object", whose byte offset is of the block, not of the line."""
    if "straddling" in str(exc):
        return (f"a line is longer than the {block_bytes / 2 ** 20:g} MiB that ldpest reads at a time: is the file "
                "CSV with one record per line (a missing line break, or another delimiter)?")
    return f"cannot parse as CSV ({exc})"


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
    :mod:`ldpest.io.sources`."""

    path: Path
    columns: list[str]
    spec: dict | None
    rng: str | None = None

    @classmethod
    def open(cls, path) -> ParquetSource:
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


def open_source(path, header: bool = True, delimiter: str = ","):
    """A CSV or Parquet file of reports or raw data, by its suffix."""
    if Path(path).suffix.lower() == ".parquet":
        return ParquetSource.open(path)
    return CsvSource.open(path, header=header, delimiter=delimiter)


def column_units(path, column: str) -> str | None:
    """The units a data file states for ``column``, or None: a Parquet field's ``units`` metadata,
    or for a CSV file the ``units`` of that column in its CSVW sidecar ``<file>-metadata.json``
    (the form ldpest writes its own CSV results in)."""
    path = Path(path)
    if path.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        schema = pq.read_schema(path)
        if column not in schema.names:
            return None
        units = (schema.field(column).metadata or {}).get(b"units")
        return units.decode() if units else None
    sidecar = path.with_name(path.name + "-metadata.json")
    if not sidecar.is_file():
        return None
    try:
        described = json.loads(sidecar.read_text())
        entries = described["tableSchema"]["columns"]
    except (ValueError, KeyError, TypeError):
        raise DataError(f"{sidecar}: not a CSVW description (tableSchema.columns)") from None
    for entry in entries:
        if isinstance(entry, dict) and column in (entry.get("name"), entry.get("titles")):
            units = entry.get("units")
            return units if isinstance(units, str) and units else None
    return None
