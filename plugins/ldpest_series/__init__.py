"""The series family: orthogonal-series density estimation on [0, 1] with the
trigonometric and Walsh bases, Duchi et al.'s l-infinity sampling mechanism and
the Laplace baseline (MATH.md section 3)."""

import ldpest

from .bases import Trigonometric, Walsh
from .estimator import SeriesEstimator
from .family import Series
from .mechanisms import LaplaceSeries, LinfSampling, SeriesMechanism

__all__ = ["LaplaceSeries", "LinfSampling", "SeriesEstimator", "SeriesMechanism", "Trigonometric", "Walsh"]


@ldpest.hookimpl
def register_bases(register):
    register(Trigonometric)
    register(Walsh)


@ldpest.hookimpl
def register_mechanisms(register):
    register(LinfSampling)
    register(LaplaceSeries)


@ldpest.hookimpl
def register_estimators(register):
    register(SeriesEstimator)


@ldpest.hookimpl
def register_families(register):
    register(Series)
