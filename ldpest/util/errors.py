"""Exceptions and warnings raised by ldpest.

Every error that a user can cause derives from :class:`LdpestError`, so the
CLI and the R bridge can turn it into one clear line without a traceback.
"""


class LdpestError(Exception):
    """Base class of every error caused by input, parameters or plugins."""


class ParameterError(LdpestError, ValueError):
    """A mechanism or estimator parameter is missing, of the wrong type or out of range."""


class DataError(LdpestError, ValueError):
    """Raw data or reports do not fit the mechanism (NaN, out of domain, wrong shape).

    ``row`` is the 0-based index of the first offending record when known;
    the CLI turns it into a line number of the input file.
    """

    def __init__(self, message: str, row: int | None = None):
        self.message = message
        self.row = None if row is None else int(row)
        super().__init__(message if row is None else f"{message} (first at row {row})")


class PluginError(LdpestError):
    """Base class of registry errors."""


class UnknownPluginError(PluginError, KeyError):
    """No registered plugin has the requested name; the message lists the known ones."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class DuplicatePluginError(PluginError):
    """Two plugins claim the same name; the message names both."""


class IncompatibleError(LdpestError, TypeError):
    """An estimator was asked to use reports of a mechanism it does not accept."""


class PluginLoadWarning(UserWarning):
    """A plugin failed to import and was skipped; the others still work."""


class DataDroppedWarning(UserWarning):
    """Some records contributed nothing to the estimate (e.g. points outside every cell)."""


class EstimateWarning(UserWarning):
    """An estimate that its own standard errors contradict (e.g. a frequency 30 standard errors
    above 1: wrong epsilon or categories) or that tells almost nothing (every interval wide)."""


class InconsistentEstimateWarning(EstimateWarning):
    """Reports that no distribution explains (a frequency many standard errors outside [0, 1]): made
    with another epsilon, other categories or codes?  ``ldpest estimate`` then writes nothing and
    exits with status 4, unless ``--accept-inconsistent`` is given."""
