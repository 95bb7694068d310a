"""Additive sufficient statistics: the currency of streaming and map-reduce.

An estimator turns a chunk of reports into a :class:`SufficientStats`; two of
them add (``stats_a + stats_b``, or ``sum(list_of_stats)``) to the statistics
of the union of the chunks, exactly: counts are integers and float sums are
:class:`~ldpest.exactsum.ExactSum`.  ``finalize`` turns the total into a result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from .errors import IncompatibleError
from .exactsum import ExactSum


@dataclass(frozen=True)
class SufficientStats:
    """Statistics of ``n`` reports of one mechanism, for one estimator."""

    estimator_spec: str
    mechanism_spec: str
    n: int
    arrays: Mapping[str, object] = field(default_factory=dict)

    def __add__(self, other: "SufficientStats") -> "SufficientStats":
        if not isinstance(other, SufficientStats):
            return NotImplemented
        if other.mechanism_spec != self.mechanism_spec:
            raise IncompatibleError(
                "cannot add statistics of different mechanisms: "
                f"{self.mechanism_spec} and {other.mechanism_spec}"
            )
        if other.estimator_spec != self.estimator_spec:
            raise IncompatibleError(
                f"cannot add statistics of different estimators: {self.estimator_spec} and {other.estimator_spec}"
            )
        if set(self.arrays) != set(other.arrays):
            raise IncompatibleError("cannot add statistics with different fields")
        merged = {key: _add(self.arrays[key], other.arrays[key]) for key in self.arrays}
        return SufficientStats(self.estimator_spec, self.mechanism_spec, self.n + other.n, merged)

    def __radd__(self, other):
        if isinstance(other, int) and other == 0:  # lets sum(stats) start from 0
            return self
        return NotImplemented


def _add(a, b):
    if isinstance(a, ExactSum):
        return a + b
    return np.add(a, b)
