"""Top-level conveniences of the public API."""

from __future__ import annotations

from .contract import Estimator
from .errors import ParameterError
from .registry import estimator as _estimator
from .reports import Reports


def estimate(reports, estimator=None):
    """Estimate from :class:`Reports` (or an iterable of Reports chunks).

    ``estimator``: None for the mechanism's default estimator, a registered
    name, or an :class:`Estimator` instance.  Returns an ``xarray.Dataset``.
    """
    if isinstance(reports, Reports):
        first = reports
        chunks = None
    else:
        chunks = list(reports)
        if not chunks:
            from .errors import DataError

            raise DataError("no reports: the stream held no chunks")
        first = chunks[0]
    if estimator is None:
        name = first.mechanism.default_estimator
        if name is None:
            raise ParameterError(f"mechanism {first.mechanism.name!r} has no default estimator; name one")
        estimator = _estimator(name)
    elif isinstance(estimator, str):
        estimator = _estimator(estimator)
    elif not isinstance(estimator, Estimator):
        raise ParameterError(f"estimator must be a name or an Estimator, got {type(estimator).__name__}")
    return estimator.estimate(first if chunks is None else chunks)
