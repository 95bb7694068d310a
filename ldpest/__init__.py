"""ldpest: estimation from locally differentially private reports.

See DESIGN.md for the architecture and MATH.md for the formulas.  The names
below are the stable public API used by the CLI, the R package and plugins.
"""

from ._version import __version__
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

# Every other public name is loaded on first use (PEP 562), so that `ldpest --help` and
# `import ldpest` do not pay for numpy, xarray, pandas or dask until they are needed.
_LAZY = {
    "Basis": "contract", "Channel": "contract", "Estimator": "contract", "FrequencyOracle": "contract",
    "Mechanism": "contract", "ExactSum": "exactsum", "hookimpl": "hookspecs", "plan": "planning",
    "PluginInfo": "registry", "basis": "registry", "estimator": "registry", "mechanism": "registry",
    "mechanism_from_spec": "registry", "plugin_errors": "registry", "plugins": "registry",
    "register_plugin": "registry", "reset_registry": "registry", "SecureGenerator": "rng",
    "secure_rng": "rng", "SufficientStats": "stats", "estimate": "api", "Reports": "reports",
    "read_reports": "reports", "EstimateParts": "results", "confidence_interval": "results",
    "reports_from_dataframe": "mapreduce", "open_reports": "sources", "ReportFile": "sources",
}


def __getattr__(name):
    import importlib

    module = _LAZY.get(name)
    if module is None:  # a submodule used as an attribute, e.g. ldpest.io after `import ldpest`
        try:
            return importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError:
            raise AttributeError(f"module 'ldpest' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "Basis", "Channel", "DataDroppedWarning", "DataError", "DuplicatePluginError", "EstimateParts", "EstimateWarning",
    "Estimator", "ExactSum", "FrequencyOracle", "IncompatibleError", "LdpestError", "Mechanism",
    "ParameterError", "PluginError", "PluginInfo", "PluginLoadWarning", "Reports", "SecureGenerator",
    "SufficientStats", "UnknownPluginError", "__version__", "basis", "confidence_interval", "estimate",
    "estimator", "hookimpl", "mechanism", "mechanism_from_spec", "plan", "plugin_errors", "plugins",
    "open_reports", "read_reports", "register_plugin", "ReportFile", "reports_from_dataframe", "reset_registry",
    "secure_rng",
]
