"""The histogram family: Laplace-perturbed one-hot cell indicators over a
cubic partition of R^d (d >= 1), or the cell number privatised by any frequency oracle,
with Duchi et al.'s mean estimator and
Gyorfi-Kroll's CDF estimator (MATH.md section 2).  The 1-D [0, 1] private
histogram of Duchi et al. is the d = 1 box case.
"""

import ldpest

from .estimators import HistogramCdf, HistogramMean
from .family import Histogram
from .likelihood import HistogramLikelihood
from .mechanism import LaplaceHistogram
from .oracle import OracleHistogram


@ldpest.hookimpl
def register_mechanisms(register):
    register(LaplaceHistogram)
    register(OracleHistogram)


@ldpest.hookimpl
def register_estimators(register):
    register(HistogramMean)
    register(HistogramCdf)
    register(HistogramLikelihood)


@ldpest.hookimpl
def register_families(register):
    register(Histogram)
