"""The two calls every user makes: ``ldpest.mechanism`` (a registered mechanism, or ``"auto"``:
the frequency oracle with the smallest worst-case variance) and ``ldpest.estimate`` (from reports
in memory, a stream of chunks, lazy reports or a report file)."""

from __future__ import annotations

import itertools

from ..contract.base import Estimator, Mechanism
from ..contract.registry import estimator as _registered_estimator
from ..contract.registry import mechanism as _registered_mechanism
from ..contract.reports import Reports
from ..io.sources import ReportFile
from ..util.errors import DataError, ParameterError


def mechanism(name: str, **params) -> Mechanism:
    """Build a registered mechanism: ``ldpest.mechanism("randomized-response", epsilon=1, categories=[...])``.

    ``name="auto"`` (with ``epsilon`` and ``categories`` only) returns the registered frequency
    oracle with the smallest worst-case variance there (:func:`ldpest.engine.planning.choose_mechanism`);
    its spec names the choice, so reports record it."""
    if name == "auto":
        from .planning import choose_mechanism

        extra = sorted(set(params) - {"epsilon", "categories"})
        if extra or "epsilon" not in params or "categories" not in params:
            raise ParameterError("mechanism 'auto' takes epsilon and categories only"
                                 + (f"; got also {', '.join(extra)}" if extra else ""))
        return choose_mechanism(**params)
    return _registered_mechanism(name, **params)


def estimate(reports, estimator=None, *, scheduler: str | None = None, weights=None, mechanism=None,
             columns=None):
    """Estimate from :class:`Reports` (in memory, or lazy: their blocks mapped on dask), an
    iterable of Reports chunks, or a report file opened with :func:`ldpest.open_reports`
    (streamed part by part, or mapped on dask with ``scheduler``: an address, or threads,
    processes, synchronous).

    ``estimator``: None for the mechanism's default estimator, a registered
    name, or an :class:`Estimator` instance.  ``weights``: one design (survey) weight per report
    of in-memory Reports of a frequency oracle: the Hajek estimate with its linearization
    standard error (:mod:`ldpest.engine.weights`; ``estimator`` None or "frequency").  A
    ``pyspark.sql.DataFrame`` of reports is reduced on Spark (:mod:`ldpest.engine.spark`), with its
    ``mechanism`` given or in its columns' metadata (``ldpest.engine.spark.read_parquet``) and
    ``columns`` naming the report columns (default: the mechanism's).  Returns an ``xarray.Dataset``.
    """
    from .spark import is_spark_frame

    if is_spark_frame(reports):
        from .spark import estimate_spark, mechanism_of

        carried = mechanism_of(reports, mechanism, columns)
        return estimate_spark(reports, _resolve(estimator, carried), mechanism=carried, columns=columns)
    if mechanism is not None or columns is not None:
        raise ParameterError("mechanism and columns describe a Spark DataFrame of reports; Reports carry their own")
    if weights is not None:
        return _estimate_weighted(reports, estimator, weights)
    if isinstance(reports, ReportFile):
        from .streaming import estimate_file

        return estimate_file(reports, _resolve(estimator, reports.mechanism), scheduler=scheduler)
    if scheduler is not None:
        raise ParameterError("scheduler maps the parts of a report file: pass ldpest.open_reports(path)")
    if isinstance(reports, Reports):
        chosen = _resolve(estimator, reports.mechanism)
        if reports.lazy:
            from .mapreduce import aggregate_dask

            chosen.check_accepts(reports.mechanism)
            return chosen.estimate_passes(lambda estimator: aggregate_dask(estimator, reports))
        return chosen.estimate(reports)
    if isinstance(reports, str | bytes) or not hasattr(reports, "__iter__"):
        raise ParameterError(_NOT_REPORTS.format(type(reports).__name__))
    iterator = iter(reports)  # peek at the first chunk without materialising the stream
    first = next(iterator, None)
    if first is None:
        raise DataError("no reports: the stream held no chunks")
    if not isinstance(first, Reports):
        raise ParameterError(_NOT_REPORTS.format(f"a sequence of {type(first).__name__}"))
    # a sequence is read again by estimators that make several passes; a one-shot stream is not
    chunks = reports if iterator is not reports else itertools.chain([first], iterator)
    return _resolve(estimator, first.mechanism).estimate(chunks)


def _estimate_weighted(reports, estimator, weights):
    from .weights import estimate_weighted

    if not isinstance(reports, Reports) or reports.lazy:
        raise ParameterError("weights go with in-memory ldpest.Reports (one weight per report)")
    projection = "auto"
    if isinstance(estimator, Estimator):
        if estimator.name != "frequency":
            raise ParameterError(f"weights: the weighted estimate is of frequencies, not {estimator.name!r}")
        projection = estimator.params.get("projection", "auto")
    elif estimator not in (None, "frequency"):
        raise ParameterError(f"weights: the weighted estimate is of frequencies, not {estimator!r}")
    return estimate_weighted(reports, weights, projection=projection)


_NOT_REPORTS = ("estimate takes ldpest.Reports (from privatize or read_reports), a stream of them, or "
                "ldpest.open_reports(path); got {}: wrap reports collected elsewhere with "
                "ldpest.Reports.from_array(values, mechanism)")


def _resolve(estimator, mechanism) -> Estimator:
    if estimator is None:
        name = mechanism.default_estimator
        if name is None:
            raise ParameterError(f"mechanism {mechanism.name!r} has no default estimator; name one")
        return _registered_estimator(name)
    if isinstance(estimator, str):
        return _registered_estimator(estimator)
    if not isinstance(estimator, Estimator):
        raise ParameterError(f"estimator must be a name or an Estimator, got {type(estimator).__name__}")
    return estimator
