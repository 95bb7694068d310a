"""The numeric family: means and variances of bounded numbers (``duchi``, ``piecewise``,
``hybrid``), their distribution (``square-wave`` with ``ems``), and ranges, CDFs and quantiles
(``hierarchical-histogram``, ``haar-histogram`` with ``range``, ``cdf``, ``quantile``);
docs/numeric.md.  Built through the same public contract a third-party plugin uses."""

import ldpest

from .ems import EMSEstimator
from .estimator import MeanEstimator, VarianceEstimator
from .family import Numeric
from .mechanisms import Duchi, Hybrid, NumericMechanism, Piecewise, SquareWave
from .multi import Multidimensional
from .ranges import CdfEstimator, QuantileEstimator, RangeEstimator
from .tree import HaarHistogram, HierarchicalHistogram

__all__ = [
    "CdfEstimator", "Duchi", "EMSEstimator", "HaarHistogram", "HierarchicalHistogram", "Hybrid", "MeanEstimator",
    "Multidimensional", "Numeric", "NumericMechanism", "Piecewise", "QuantileEstimator", "RangeEstimator", "SquareWave",
    "VarianceEstimator",
]


@ldpest.hookimpl
def register_mechanisms(register):
    register(Duchi)
    register(Piecewise)
    register(Hybrid)
    register(SquareWave)
    register(HierarchicalHistogram)
    register(HaarHistogram)
    register(Multidimensional)


@ldpest.hookimpl
def register_estimators(register):
    register(MeanEstimator)
    register(VarianceEstimator)
    register(EMSEstimator)
    register(RangeEstimator)
    register(CdfEstimator)
    register(QuantileEstimator)


@ldpest.hookimpl
def register_families(register):
    register(Numeric)
