"""Families: how the mechanisms of one family are simulated and scored.

A family groups the mechanisms whose estimates answer one question about one kind of data:
``multinomial`` (category frequencies), ``histogram`` (a density over the cells of a partition),
``series`` (a density from basis coefficients), or a plugin's own.  ``Mechanism.family`` names
it; a plugin that brings a new kind of estimate registers its :class:`Family` (hook
``register_families``), and ``ldpest simulate`` and the conformance kit ask it for a truth, data
drawn from that truth, the error of an estimate, its theoretical rate and the estimate's mean
given fixed data (docs/plugin-author-guide.md, "A family").
"""

from __future__ import annotations

import abc
from typing import ClassVar


class Family(abc.ABC):
    """The simulation and scoring of one family (module docstring).  Families take no parameters."""

    plugin_kind: ClassVar[str] = "family"
    name: ClassVar[str] = ""
    metric: ClassVar[str] = ""  # what :meth:`error` measures, e.g. "squared l2 error of probability"

    @abc.abstractmethod
    def truth(self, mechanism, given):
        """The truth of a study from what the user gave (``ldpest simulate --theta/--truth``: a list
        of numbers, a list of scipy.stats distributions as text such as ``"beta(2,2)"``, or None for
        the family's default).  Raise :class:`ldpest.ParameterError` naming what is expected."""

    @abc.abstractmethod
    def sample(self, mechanism, truth, n: int, rng):
        """``n`` raw records drawn from ``truth``, as ``mechanism.privatize`` takes them."""

    @abc.abstractmethod
    def error(self, mechanism, result, truth) -> float:
        """The error of ``result`` (an ``ldpest.estimate``) against ``truth``, as :attr:`metric` says."""

    def theoretical_slope(self, mechanism) -> float | None:
        """d log(expected error) / d log(n) when the error is variance-dominated (``simulate``'s
        theory line), or None when there is no such line."""
        return None

    def exact_statistics(self, estimator, mechanism, truth, n: int, rng):
        """Optional: an exact draw of the sufficient statistics of ``n`` reports from ``truth``
        (studies at n = 10^9); the default asks ``estimator.simulate``.  Raise NotImplementedError
        when there is none: then every record is privatised."""
        raise NotImplementedError(f"family {self.name!r} has no exact aggregate simulation")

    def expected(self, estimator, mechanism, data) -> tuple[str, object]:
        """``(variable, values)``: the mean of ``estimator``'s result variable over privatisations of
        the fixed raw ``data`` (the conformance kit's ``unbiased`` check)."""
        raise NotImplementedError(f"family {self.name!r} does not say what its estimates equal on average")
