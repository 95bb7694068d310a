"""Top-level conveniences of the public API."""

from __future__ import annotations

import itertools

from .contract import Estimator
from .errors import DataError, ParameterError
from .registry import estimator as _estimator
from .reports import Reports


def estimate(reports, estimator=None):
    """Estimate from :class:`Reports` (or an iterable of Reports chunks).

    ``estimator``: None for the mechanism's default estimator, a registered
    name, or an :class:`Estimator` instance.  Returns an ``xarray.Dataset``.
    """
    if isinstance(reports, Reports):
        first, chunks = reports, None
    else:  # peek at the first chunk without materialising the stream
        iterator = iter(reports)
        first = next(iterator, None)
        if first is None:
            raise DataError("no reports: the stream held no chunks")
        chunks = itertools.chain([first], iterator)
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
