"""Estimation over Dask: map (aggregate each block) and reduce (add statistics).

Report files opened with :func:`ldpest.open_reports` (NetCDF, Zarr, CSV, Parquet) map one task
per part, each reading its own part (:func:`aggregate_parts_dask`); reports whose data are a
dask array (``read_reports(path, chunks=...)``, :func:`reports_from_dataframe` for a dask
DataFrame) aggregate block by block.  Both run on the active scheduler: threads, processes, or a
``distributed`` cluster (``dask.distributed.Client(address)``).  Every block is
validated against the mechanism where it is read, reduced to exact sufficient
statistics (integers or ExactSum), and the statistics are added in a tree;
the result equals the numpy path bit for bit.  Workers rebuild the mechanism
and estimator from their specs, so they need ldpest and the same plugins.
:func:`dask_scheduler` runs dask work on a named scheduler or a cluster's address.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os

import numpy as np

from ..contract.registry import estimator_from_spec, mechanism_from_spec_json
from ..contract.reports import Reports
from ..io.sources import read_part
from ..stats.sufficient import SufficientStats
from ..util.errors import DataError, ParameterError
from ..util.spec import SPEC_ATTR
from ..util.version import __version__
from ..util.xarray import xr

LOCAL_SCHEDULERS = ("threads", "processes", "synchronous")


def is_dask_array(values) -> bool:
    return hasattr(values, "dask") and hasattr(values, "chunks")


@functools.lru_cache(maxsize=32)
def _estimator_of(spec_json: str):
    """Each worker builds an estimator once per spec, not once per block (mechanisms are cached
    by the registry)."""
    return estimator_from_spec(json.loads(spec_json))


def _aggregate_block(values, mechanism_spec: str, estimator_spec: str) -> SufficientStats:
    mechanism, estimator = mechanism_from_spec_json(mechanism_spec), _estimator_of(estimator_spec)
    return estimator.aggregate_values(mechanism, mechanism.check_encoded_reports(np.asarray(values)))


def _aggregate_part(source, index: int, estimator_spec: str) -> SufficientStats:
    """Read one part of a report file (:mod:`ldpest.io.sources`) and reduce it to statistics: the
    read is fused with the map step, so every part is read once, by the task that uses it."""
    mechanism, estimator = source.mechanism, _estimator_of(estimator_spec)
    first = source.first_rows[index] if source.first_rows is not None else None
    return estimator.aggregate_values(mechanism, read_part(source, index, first))


def _add(*parts):
    return sum(parts)


def _tree_sum(tasks: list, fan_in: int):
    import dask
    from dask import delayed

    layer = list(tasks)
    while len(layer) > 1:
        layer = [delayed(_add)(*layer[i:i + fan_in]) for i in range(0, len(layer), fan_in)]
    client = _distributed_client()
    if client is None:
        (total,) = dask.compute(layer[0])
        return total
    seconds = float(os.environ.get("LDPEST_COMPUTE_TIMEOUT", 3600))
    future = client.compute(layer[0])
    try:
        return future.result(timeout=seconds)
    except TimeoutError:
        future.cancel()
        raise ParameterError(f"the dask cluster did not finish within {seconds:g} s (LDPEST_COMPUTE_TIMEOUT; "
                             f"{len(client.scheduler_info().get('workers', {}))} workers): has it workers?") from None


def _distributed_client():
    """The active distributed Client, or None (a local scheduler)."""
    try:
        from distributed import get_client
    except ImportError:
        return None
    try:
        return get_client()
    except ValueError:
        return None


def aggregate_dask(estimator, reports, fan_in: int = 8) -> SufficientStats:
    """Tree map-reduce of the statistics of dask-backed reports."""
    from dask import delayed

    values = reports.data.data
    if values.ndim > 1:
        values = values.rechunk(dict.fromkeys(range(1, values.ndim), -1))  # whole reports per block
    blocks = values.to_delayed().ravel().tolist()
    return _tree_sum([delayed(_aggregate_block)(block, reports.spec_json, estimator.spec_json) for block in blocks],
                     fan_in)


def aggregate_parts_dask(estimator, source, fan_in: int = 8) -> SufficientStats:
    """Tree map-reduce over the parts of a report file (:func:`ldpest.open_reports`): one task
    reads and reduces each part, on the active dask scheduler."""
    from dask import delayed

    # one graph key for the source: as an argument of each task, dask would walk the dataclass and
    # its tuple of parts once per part (0.08-0.29 s of 96 parts at 10^8 reports, session 25)
    whole = delayed(source, traverse=False)
    return _tree_sum([delayed(_aggregate_part)(whole, index, estimator.spec_json) for index in range(len(source))],
                     fan_in)


def reports_from_dataframe(frame, mechanism, columns: list[str] | None = None):
    """Lazy :class:`ldpest.Reports` from a dask DataFrame of reports (e.g. ``dd.read_parquet``).

    ``columns``: the report columns in order (default: the mechanism's
    ``report_columns()``).  Each partition is validated with the mechanism's
    ``encode_reports`` when it is computed.
    """
    import dask.array as da
    from dask import delayed

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
              for part, length in zip(frame.to_delayed(), lengths, strict=True) if length]
    if not pieces:
        raise DataError("the data frame holds no rows")
    data = xr.DataArray(da.concatenate(pieces), dims=mechanism.report_dims, name="reports",
                        attrs={"mechanism": mechanism.name, SPEC_ATTR: mechanism.spec_json,
                               "epsilon": mechanism.epsilon, "rng": "external", "ldpest_version": __version__})
    reports = Reports(data, _spec_json=mechanism.spec_json)
    reports.__dict__["mechanism"] = mechanism
    return reports


@contextlib.contextmanager
def dask_scheduler(scheduler: str | None):
    """Run dask work on ``scheduler``: a distributed address, or threads/processes/synchronous."""
    if scheduler is None:
        yield
        return
    import dask

    if scheduler in LOCAL_SCHEDULERS:
        with dask.config.set(scheduler=scheduler):
            yield
        return
    client = _connect(scheduler, os.environ.get("LDPEST_SCHEDULER_TIMEOUT", "10s"))
    with client:
        yield


def _connect(scheduler: str, timeout: str):
    """A distributed Client, or a ParameterError within ``timeout`` (plus 5 s): distributed's own
    timeout covers opening the connection, not a scheduler that accepts it and never answers, so
    the Client is made in a daemon thread that is abandoned if it does not return in time."""
    import threading

    from dask.utils import parse_timedelta
    from distributed import Client

    outcome = {}

    def connect():
        try:
            outcome["client"] = Client(scheduler, timeout=timeout, set_as_default=True)
        except Exception as exc:  # noqa: BLE001 - also what an abandoned thread meets at interpreter exit
            outcome["error"] = exc

    thread = threading.Thread(target=connect, name="ldpest-connect", daemon=True)
    thread.start()
    thread.join(parse_timedelta(timeout) + 5)
    if "client" in outcome:
        return outcome["client"]
    if "error" in outcome:
        raise ParameterError(f"cannot reach the dask scheduler at {scheduler!r} ({outcome['error']})")
    raise ParameterError(f"the dask scheduler at {scheduler!r} accepted the connection but did not answer within "
                         f"{timeout} (LDPEST_SCHEDULER_TIMEOUT): is it a dask scheduler?")
