"""The multinomial family: randomized response, unary randomized response,
one-hot Laplace, and the ``frequency`` estimator (MATH.md section 1).

Registered through the ``"ldpest"`` entry-point group like any third-party
plugin, and written against ldpest's public API only.
"""

import ldpest

from .estimator import FrequencyEstimator
from .mechanisms import LaplaceOneHot, RandomizedResponse, UnaryRandomizedResponse


@ldpest.hookimpl
def register_mechanisms(register):
    register(RandomizedResponse)
    register(UnaryRandomizedResponse)
    register(LaplaceOneHot)


@ldpest.hookimpl
def register_estimators(register):
    register(FrequencyEstimator)
