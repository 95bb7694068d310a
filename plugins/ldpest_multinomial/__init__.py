"""The multinomial family: randomized response, unary randomized response,
one-hot Laplace (MATH.md section 1), local hashing, subset selection and
Hadamard response (docs/frequency-oracles.md), and the ``frequency`` and ``frequency-likelihood``
estimators.

Registered through the ``"ldpest"`` entry-point group like any third-party
plugin, and written against ldpest's public API only.
"""

import ldpest

from .estimator import FrequencyEstimator
from .family import Multinomial
from .hadamard import HadamardResponse
from .hashing import LocalHashing
from .likelihood import FrequencyLikelihood
from .mechanisms import LaplaceOneHot, RandomizedResponse, UnaryRandomizedResponse
from .subset import SubsetSelection


@ldpest.hookimpl
def register_mechanisms(register):
    register(RandomizedResponse)
    register(UnaryRandomizedResponse)
    register(LaplaceOneHot)
    register(LocalHashing)
    register(SubsetSelection)
    register(HadamardResponse)


@ldpest.hookimpl
def register_estimators(register):
    register(FrequencyEstimator)
    register(FrequencyLikelihood)


@ldpest.hookimpl
def register_families(register):
    register(Multinomial)
