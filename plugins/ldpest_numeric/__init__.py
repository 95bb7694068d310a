"""The numeric family: means of bounded numbers from ``duchi``, ``piecewise`` and ``hybrid``
reports, with the ``mean`` estimator (docs/numeric.md).  Built through the same public contract
a third-party plugin uses."""

import ldpest

from .ems import EMSEstimator
from .estimator import MeanEstimator, VarianceEstimator
from .family import Numeric
from .mechanisms import Duchi, Hybrid, NumericMechanism, Piecewise, SquareWave

__all__ = [
    "Duchi", "EMSEstimator", "Hybrid", "MeanEstimator", "Numeric",
    "NumericMechanism", "Piecewise", "SquareWave", "VarianceEstimator",
]


@ldpest.hookimpl
def register_mechanisms(register):
    register(Duchi)
    register(Piecewise)
    register(Hybrid)
    register(SquareWave)


@ldpest.hookimpl
def register_estimators(register):
    register(MeanEstimator)
    register(VarianceEstimator)
    register(EMSEstimator)


@ldpest.hookimpl
def register_families(register):
    register(Numeric)
