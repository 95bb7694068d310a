"""ldpest: estimation from locally differentially private reports.

See DESIGN.md for the architecture and MATH.md for the formulas.  The names
below are the stable public API used by the CLI, the R package and plugins;
the README's "Layout" section shows the floors they come from.
"""

from . import _moved
from .util.errors import (
    DataDroppedWarning,
    DataError,
    DuplicatePluginError,
    EstimateWarning,
    IncompatibleError,
    InconsistentEstimateWarning,
    LdpestError,
    ParameterError,
    PluginError,
    PluginLoadWarning,
    UnknownPluginError,
)
from .util.lazy import lazy_names
from .util.version import __version__

_moved.install()

# Every other public name is loaded on first use (PEP 562), so that `ldpest --help` and
# `import ldpest` do not pay for numpy, xarray, pandas or dask until they are needed.
__getattr__, __dir__ = lazy_names(__name__, {
    **dict.fromkeys(("Basis", "Estimator", "FrequencyOracle", "Mechanism"), ".contract.base"),
    "Channel": ".contract.channel",
    **dict.fromkeys(("PluginInfo", "basis", "estimator", "family", "family_of", "mechanism_from_spec",
                     "plugin_errors", "plugins", "register_plugin", "reset_registry"), ".contract.registry"),
    "Family": ".contract.family",
    "hookimpl": ".contract.hookspecs", "Reports": ".contract.reports",
    "EstimateParts": ".contract.results", "confidence_interval": ".contract.results",
    "ExactSum": ".stats.exactsum", "SufficientStats": ".stats.sufficient",
    "SecureGenerator": ".privacy.rng", "secure_rng": ".privacy.rng",
    "read_reports": ".io.sources", "open_reports": ".io.sources", "ReportFile": ".io.sources",
    "mechanism": ".engine.api", "estimate": ".engine.api", "plan": ".engine.planning",
    "reports_from_dataframe": ".engine.mapreduce",
    "VariationRatio": ".privacy.shuffle",
    "Longitudinal": ".contract.longitudinal", "ClientState": ".privacy.memo", "estimate_rounds": ".engine.rounds",
    **dict.fromkeys(("Ledger", "privatize_accounted"), ".engine.ledger"),
    **dict.fromkeys(("ShuffleBound", "shuffle_epsilon", "plan_shuffle"), ".engine.accounting"),
})

__all__ = [
    "Basis", "Channel", "DataDroppedWarning", "DataError", "DuplicatePluginError", "EstimateParts", "EstimateWarning",
    "Estimator", "ExactSum", "Family", "FrequencyOracle", "IncompatibleError", "InconsistentEstimateWarning",
    "LdpestError", "Mechanism",
    "ParameterError", "PluginError", "PluginInfo", "PluginLoadWarning", "Reports", "SecureGenerator",
    "SufficientStats", "UnknownPluginError", "__version__", "basis", "confidence_interval", "estimate",
    "estimator", "family", "family_of", "hookimpl", "mechanism", "mechanism_from_spec", "plugin_errors", "plugins",
    "open_reports", "read_reports", "register_plugin", "ReportFile", "reports_from_dataframe", "reset_registry",
    "secure_rng", "ShuffleBound", "shuffle_epsilon", "plan_shuffle", "VariationRatio", "Longitudinal", "ClientState",
    "estimate_rounds", "Ledger", "privatize_accounted",
]
