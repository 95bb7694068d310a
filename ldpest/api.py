"""Top-level conveniences of the public API."""

from __future__ import annotations

import itertools

from .contract import Estimator
from .errors import DataError, ParameterError
from .registry import estimator as _estimator
from .reports import Reports


def estimate(reports, estimator=None, *, scheduler: str | None = None):
    """Estimate from :class:`Reports`, an iterable of Reports chunks, or a report file opened
    with :func:`ldpest.open_reports` (streamed part by part, or mapped on dask with
    ``scheduler``: an address, or threads, processes, synchronous).

    ``estimator``: None for the mechanism's default estimator, a registered
    name, or an :class:`Estimator` instance.  Returns an ``xarray.Dataset``.
    """
    from .sources import ReportFile, estimate_file

    if isinstance(reports, ReportFile):
        return estimate_file(reports, _resolve(estimator, reports.mechanism), scheduler=scheduler)
    if scheduler is not None:
        raise ParameterError("scheduler maps the parts of a report file: pass ldpest.open_reports(path)")
    if isinstance(reports, Reports):
        first, chunks = reports, None
    else:  # peek at the first chunk without materialising the stream
        iterator = iter(reports)
        first = next(iterator, None)
        if first is None:
            raise DataError("no reports: the stream held no chunks")
        chunks = itertools.chain([first], iterator)
    return _resolve(estimator, first.mechanism).estimate(first if chunks is None else chunks)


def _resolve(estimator, mechanism) -> Estimator:
    if estimator is None:
        name = mechanism.default_estimator
        if name is None:
            raise ParameterError(f"mechanism {mechanism.name!r} has no default estimator; name one")
        return _estimator(name)
    if isinstance(estimator, str):
        return _estimator(estimator)
    if not isinstance(estimator, Estimator):
        raise ParameterError(f"estimator must be a name or an Estimator, got {type(estimator).__name__}")
    return estimator
