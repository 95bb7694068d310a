"""Estimates from report files: every part read once, streamed in order (memory: one part) or
mapped on dask, each task reading its own part (:mod:`ldpest.io.sources`)."""

from __future__ import annotations

from ..contract.reports import Reports
from ..io.kept_open import close_kept_files
from ..io.sources import ReportFile, read_part
from ..util.errors import DataError


def estimate_file(source: ReportFile, estimator, *, scheduler: str | None = None, progress=None):
    """The estimate from every part of ``source``: streamed in order (memory: one part), or, with
    ``scheduler`` (a dask address, or threads, processes, synchronous), mapped on dask.
    ``progress(bytes)`` is called after each streamed part (of every pass, for estimators that make
    several)."""
    estimator.check_accepts(source.mechanism)
    if not source.parts:
        raise DataError(f"{source.path}: the file holds no reports")
    try:
        return _estimate_parts(source, estimator, scheduler, progress)
    finally:
        close_kept_files()  # read here (streamed, or by dask's threads): closed when the estimate is done


def _estimate_parts(source: ReportFile, estimator, scheduler, progress):
    mechanism = source.mechanism
    if scheduler is not None:
        from .mapreduce import aggregate_parts_dask, dask_scheduler

        with dask_scheduler(scheduler):
            return estimator.estimate_passes(lambda chosen: aggregate_parts_dask(chosen, source))

    def stream(chosen):
        total, first = None, 0
        for index in range(len(source)):
            values = read_part(source, index, first)
            first += len(values)
            stats = chosen.aggregate(Reports.trusted(values, mechanism, rng=source.rng or "external"))
            total = stats if total is None else total + stats
            if progress is not None:
                progress(source.bytes_through(index))
        return total
    return estimator.estimate_passes(stream)
