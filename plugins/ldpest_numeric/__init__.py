"""The numeric family: means of bounded numbers from ``duchi``, ``piecewise`` and ``hybrid``
reports, with the ``mean`` estimator (docs/numeric.md).  Built through the same public contract
a third-party plugin uses."""

import ldpest

from .estimator import MeanEstimator, VarianceEstimator
from .family import Numeric
from .mechanisms import Duchi, Hybrid, NumericMechanism, Piecewise

__all__ = ["Duchi", "Hybrid", "MeanEstimator", "Numeric", "NumericMechanism", "Piecewise", "VarianceEstimator"]


@ldpest.hookimpl
def register_mechanisms(register):
    register(Duchi)
    register(Piecewise)
    register(Hybrid)


@ldpest.hookimpl
def register_estimators(register):
    register(MeanEstimator)
    register(VarianceEstimator)


@ldpest.hookimpl
def register_families(register):
    register(Numeric)
