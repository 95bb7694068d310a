"""The longitudinal family: mechanisms for reporting over time with memoised permanent responses
(RAPPOR, L-GRR, L-OSUE, dBitFlipPM), their permanent responses as mechanisms of their own, and the
``rappor`` estimator (docs/accounting.md, "Repeated collection").

Registered through the ``"ldpest"`` entry-point group like any third-party plugin, and written
against ldpest's public API only.
"""

import ldpest

from .dbitflip import DBitFlip
from .estimator import RapporEstimator
from .grr import LongitudinalGRR
from .permanent import PermanentResponse
from .rappor import Rappor
from .unary import LongitudinalOSUE


@ldpest.hookimpl
def register_mechanisms(register):
    register(Rappor)
    register(LongitudinalGRR)
    register(LongitudinalOSUE)
    register(DBitFlip)
    register(PermanentResponse)


@ldpest.hookimpl
def register_estimators(register):
    register(RapporEstimator)
