"""ldpest: estimation from locally differentially private reports.

See DESIGN.md for the architecture and MATH.md for the formulas.  The names
below are the stable public API used by the CLI, the R package and plugins.
"""

from ._version import __version__
from .api import estimate
from .contract import Basis, Channel, Estimator, FrequencyOracle, Mechanism
from .errors import (
    DataDroppedWarning,
    DataError,
    DuplicatePluginError,
    EstimateWarning,
    IncompatibleError,
    LdpestError,
    ParameterError,
    PluginError,
    PluginLoadWarning,
    UnknownPluginError,
)
from .exactsum import ExactSum
from .hookspecs import hookimpl
from .registry import (
    PluginInfo,
    basis,
    estimator,
    mechanism,
    mechanism_from_spec,
    plugin_errors,
    plugins,
    register_plugin,
    reset_registry,
)
from .mapreduce import reports_from_dataframe
from .planning import plan
from .reports import Reports, read_reports
from .results import EstimateParts, confidence_interval
from .rng import SecureGenerator, secure_rng
from .stats import SufficientStats

__all__ = [
    "Basis", "Channel", "DataDroppedWarning", "DataError", "DuplicatePluginError", "EstimateParts", "EstimateWarning",
    "Estimator", "ExactSum", "FrequencyOracle", "IncompatibleError", "LdpestError", "Mechanism",
    "ParameterError", "PluginError", "PluginInfo", "PluginLoadWarning", "Reports", "SecureGenerator",
    "SufficientStats", "UnknownPluginError", "__version__", "basis", "confidence_interval", "estimate",
    "estimator", "hookimpl", "mechanism", "mechanism_from_spec", "plan", "plugin_errors", "plugins",
    "read_reports", "register_plugin", "reports_from_dataframe", "reset_registry", "secure_rng",
]
