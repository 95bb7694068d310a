"""Result files: NetCDF, a plain CSV table with its CSVW sidecar, and JSON, written atomically."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..contract.results import estimate_variable
from ..util.atomic import atomic_path
from ..util.errors import DataError, ParameterError
from ..util.xarray import xr

RESULT_FORMATS = (".nc", ".csv", ".json", ".parquet")


def check_result_format(path: Path) -> str:
    """The suffix of a result file's path; a ParameterError naming the formats when it is none of them."""
    suffix = path.suffix.lower()
    if suffix not in RESULT_FORMATS:
        raise ParameterError(f"{path}: unknown output format {suffix or '(none)'}; "
                             f"use one of {', '.join(RESULT_FORMATS)}")
    return suffix


def result_table(result: xr.Dataset):
    """One row per cell: coordinates, bounds as ``<dim>_lower``/``<dim>_upper``, and values (a 0-d
    result, a single mean, is one row)."""
    import pandas as pd

    name = estimate_variable(result)
    dims = result[name].dims
    cell_vars = [v for v in result.data_vars if result[v].dims == dims]
    if not dims:
        return pd.DataFrame({v: [result[v].values.item()] for v in cell_vars})
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
    """Write a result by extension (.nc, .csv, .json, .parquet), atomically.

    CSV: a plain table (:func:`result_table`) that ``read.csv`` and ``pandas.read_csv`` read with
    their defaults, and beside it the CSVW sidecar ``<file>-metadata.json`` with the column
    descriptions and the result's attributes (mechanism, epsilon, n, confidence level...).
    JSON: ``xarray.Dataset.to_dict`` (lossless for labels and attrs).  Parquet: the CSV's table, with
    the CSVW description (columns and the result's attributes) as JSON in the schema's metadata
    under ``ldpest``.
    """
    path = Path(path)
    suffix = check_result_format(path)
    if suffix in (".csv", ".parquet") and "estimate_variable" not in result.attrs:
        raise ParameterError(f"{path}: write studies to .nc or .json")
    if suffix == ".parquet":
        _write_parquet(result, path)
        return
    if suffix == ".csv":
        table = result_table(result)
        with atomic_path(metadata_path(path)) as tmp:
            tmp.write_text(json.dumps(csv_metadata(result, table, path), indent=1, default=json_default))
        with atomic_path(path) as tmp:
            table.to_csv(tmp, index=False, float_format="%.17g")
        return
    with atomic_path(path) as tmp:
        if suffix == ".nc":
            result.to_netcdf(tmp, engine="netcdf4")
        else:
            tmp.write_text(json.dumps(result.to_dict(data="list"), indent=1, default=json_default))


def _write_parquet(result: xr.Dataset, path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = result_table(result)
    arrow = pa.Table.from_pandas(table, preserve_index=False)
    described = json.dumps(csv_metadata(result, table, path), default=json_default)
    arrow = arrow.replace_schema_metadata({**(arrow.schema.metadata or {}), b"ldpest": described.encode()})
    with atomic_path(path) as tmp:
        pq.write_table(arrow, tmp)


def read_result(path) -> xr.Dataset:
    """Read a result written by :func:`write_result` (.nc or .json)."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    suffix = check_result_format(path)
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
    raise DataError(f"{path}: read results from .nc or .json (CSV and Parquet are for other tools)")


def json_default(value):
    """``json.dumps(..., default=json_default)``: numpy scalars and arrays as JSON numbers and lists."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")
