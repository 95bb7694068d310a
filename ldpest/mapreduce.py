"""Estimation over Dask: map (aggregate each block) and reduce (add statistics).

Reports whose data are a dask array (``read_reports(path, chunks=...)`` for
NetCDF or Zarr, :func:`reports_from_dataframe` for Parquet or CSV read with dask) aggregate
block by block, on the active scheduler: threads, processes, or a
``distributed`` cluster (``dask.distributed.Client(address)``).  Every block is
validated against the mechanism where it is read, reduced to exact sufficient
statistics (integers or ExactSum), and the statistics are added in a tree;
the result equals the numpy path bit for bit.  Workers rebuild the mechanism
and estimator from their specs, so they need ldpest and the same plugins.
"""

from __future__ import annotations

import functools
import json

import numpy as np

from .stats import SufficientStats


def is_dask_array(values) -> bool:
    return hasattr(values, "dask") and hasattr(values, "chunks")


@functools.lru_cache(maxsize=32)
def _mechanism_of(spec_json: str):
    """Each worker builds a mechanism once per spec, not once per block."""
    from .registry import mechanism_from_spec_json  # registry imports contract

    return mechanism_from_spec_json(spec_json)


@functools.lru_cache(maxsize=32)
def _estimator_of(spec_json: str):
    from .registry import estimator_from_spec

    return estimator_from_spec(json.loads(spec_json))


def _aggregate_block(values, mechanism_spec: str, estimator_spec: str) -> SufficientStats:
    mechanism, estimator = _mechanism_of(mechanism_spec), _estimator_of(estimator_spec)
    checked = mechanism.check_encoded_reports(np.asarray(values))
    arrays = estimator._aggregate(mechanism, checked)
    return SufficientStats(estimator.statistics_spec_json, mechanism_spec, int(checked.shape[0]), arrays)


def _aggregate_row_group(path: str, index: int, columns: list[str], kind: str, mechanism_spec: str,
                         estimator_spec: str) -> SufficientStats:
    """Read one row group of a Parquet report file, validate it and reduce it to statistics: the
    read is fused with the map step, so every row group is read once, by the task that uses it."""
    from .io import ParquetSource
    from .pipeline import _encode

    mechanism, estimator = _mechanism_of(mechanism_spec), _estimator_of(estimator_spec)
    source = ParquetSource.open(path)
    first, values = source.row_group(index, columns, kind)
    encoded = _encode(source, first, mechanism.encode_reports, values)
    arrays = estimator._aggregate(mechanism, encoded)
    return SufficientStats(estimator.statistics_spec_json, mechanism_spec, int(encoded.shape[0]), arrays)


def _add(*parts):
    return sum(parts)


def _tree_sum(tasks: list, fan_in: int):
    import dask
    from dask import delayed

    layer = list(tasks)
    while len(layer) > 1:
        layer = [delayed(_add)(*layer[i:i + fan_in]) for i in range(0, len(layer), fan_in)]
    (total,) = dask.compute(layer[0])
    return total


def aggregate_dask(estimator, reports, fan_in: int = 8) -> SufficientStats:
    """Tree map-reduce of the statistics of dask-backed reports."""
    from dask import delayed

    values = reports.data.data
    if values.ndim > 1:
        values = values.rechunk({axis: -1 for axis in range(1, values.ndim)})  # whole reports per block
    blocks = values.to_delayed().ravel().tolist()
    return _tree_sum([delayed(_aggregate_block)(block, reports.spec_json, estimator.spec_json) for block in blocks],
                     fan_in)


def aggregate_parquet_dask(estimator, source, mechanism, columns: list[str], kind: str,
                           fan_in: int = 8) -> SufficientStats:
    """Tree map-reduce over the row groups of a Parquet report file (one task reads and reduces
    each row group)."""
    from dask import delayed

    count = source.row_groups()
    if count == 0:
        from .errors import DataError

        raise DataError(f"{source.path}: the file holds no rows")
    tasks = [delayed(_aggregate_row_group)(str(source.path), index, columns, kind, mechanism.spec_json,
                                           estimator.spec_json) for index in range(count)]
    return _tree_sum(tasks, fan_in)


def reports_from_dataframe(frame, mechanism, columns: list[str] | None = None):
    """Lazy :class:`ldpest.Reports` from a dask DataFrame of reports (e.g. ``dd.read_parquet``).

    ``columns``: the report columns in order (default: the mechanism's
    ``report_columns()``).  Each partition is validated with the mechanism's
    ``encode_reports`` when it is computed.
    """
    import dask.array as da
    from ._xarray import xr
    from dask import delayed

    from ._version import __version__
    from .errors import DataError
    from .reports import SPEC_ATTR, Reports

    columns = list(columns or mechanism.report_columns())
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DataError(f"no column {', '.join(map(repr, missing))}; columns are: {', '.join(map(str, frame.columns))}")
    expected = mechanism.report_columns()
    if len(columns) != len(expected):
        raise DataError(f"mechanism {mechanism.name!r} reports have {len(expected)} column(s), "
                        f"but {len(columns)} were given")

    def encode(part):
        values = part[columns].to_numpy()
        return mechanism.encode_reports(values[:, 0] if len(columns) == 1 else values)

    sample = encode(frame.head(1, npartitions=-1))
    lengths = frame.map_partitions(len).compute()
    pieces = [da.from_delayed(delayed(encode)(part), shape=(int(length),) + sample.shape[1:], dtype=sample.dtype)
              for part, length in zip(frame.to_delayed(), lengths) if length]
    if not pieces:
        raise DataError("the data frame holds no rows")
    data = xr.DataArray(da.concatenate(pieces), dims=mechanism.report_dims, name="reports",
                        attrs={"mechanism": mechanism.name, SPEC_ATTR: mechanism.spec_json,
                               "epsilon": mechanism.epsilon, "rng": "external", "ldpest_version": __version__})
    reports = Reports(data, _spec_json=mechanism.spec_json)
    reports.__dict__["mechanism"] = mechanism
    return reports
