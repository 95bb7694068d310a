"""Finite channels: what a mechanism's sampler does, as exact probabilities, so that privacy is a
proof (docs/privacy.md).

Two forms of one object:

* **dense**: ``matrix[i, j] = Q(outputs[j] | inputs[i])``;
* **structured** (:meth:`Channel.from_levels`): a few distinct probabilities ``levels`` and an
  integer ``pattern[i, j]`` naming the level of each entry.  A lattice mechanism whose every
  column takes two values (inside or outside a window) has a 1024 x 1550 channel of two levels:
  its proof is integer arithmetic on the pattern, a few milliseconds instead of millions of
  Fraction operations.  A column-wise description (each column's distinct values with the rows
  that take them) is the same: the levels are all the distinct values.

Entries are floats or, for an exact proof, :class:`fractions.Fraction` objects holding the
probabilities the sampler implements (built from its integer thresholds); then :meth:`satisfies`
is a proof, not a float check.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..privacy.exact import log_ratio, ratio_within
from ..util.errors import ParameterError


@dataclass(frozen=True)
class Channel:
    """A finite channel (module docstring): ``inputs`` (a list, one per row), ``outputs`` (one
    report per column) and either ``matrix`` or ``levels`` with ``pattern``."""

    inputs: list
    outputs: np.ndarray
    matrix: np.ndarray | None = None
    levels: tuple | None = None
    pattern: np.ndarray | None = None

    def __post_init__(self):
        if (self.matrix is None) == (self.levels is None):
            raise ParameterError("a Channel holds either matrix, or levels with pattern")
        if self.levels is not None:
            pattern = np.asarray(self.pattern)
            if pattern.ndim != 2 or pattern.dtype.kind not in "iu" or not len(self.levels):
                raise ParameterError("a structured Channel needs a 2-D integer pattern and at least one level")
            if pattern.size and (pattern.min() < 0 or pattern.max() >= len(self.levels)):
                raise ParameterError(f"pattern entries must index the {len(self.levels)} levels")

    @classmethod
    def from_levels(cls, inputs, outputs, levels, pattern) -> Channel:
        """The structured form: ``Q(outputs[j] | inputs[i]) = levels[pattern[i, j]]``."""
        return cls(list(inputs), np.asarray(outputs), levels=tuple(levels), pattern=np.asarray(pattern))

    @property
    def shape(self) -> tuple[int, int]:
        return np.shape(self.matrix if self.matrix is not None else self.pattern)

    @property
    def exact(self) -> bool:
        if self.levels is not None:
            return all(isinstance(level, Fraction | int) for level in self.levels)
        return np.asarray(self.matrix).dtype == object

    def probabilities(self) -> np.ndarray:
        """The matrix as float64."""
        if self.levels is not None:
            return np.array([float(level) for level in self.levels])[np.asarray(self.pattern)]
        return np.asarray(self.matrix, dtype=np.float64)

    def dense(self) -> np.ndarray:
        """The matrix of either form, with its entries as given (Fractions for an exact channel)."""
        if self.levels is not None:
            return np.array(self.levels, dtype=object)[np.asarray(self.pattern)]
        return np.asarray(self.matrix)

    def row(self, i: int) -> np.ndarray:
        """``Q(. | inputs[i])`` as float64."""
        if self.levels is not None:
            return np.array([float(level) for level in self.levels])[np.asarray(self.pattern)[i]]
        return np.asarray(self.matrix[i], dtype=np.float64)

    def worst_ratio(self):
        """``max_{z, x, x'} Q(z|x) / Q(z|x')``: a Fraction for exact channels (inf if some column
        holds a zero beside a positive entry)."""
        if self.levels is not None:
            return self._worst_level_ratio()
        if not self.exact:
            matrix = self.probabilities()
            with np.errstate(divide="ignore", invalid="ignore"):
                ratios = matrix.max(axis=0) / matrix.min(axis=0)
            return float(np.max(np.where(matrix.max(axis=0) > 0, ratios, 1.0)))
        worst = Fraction(0)
        for column in np.asarray(self.matrix).T:
            low, high = min(column), max(column)
            if low == 0:
                if high > 0:
                    return math.inf
                continue
            worst = max(worst, Fraction(high) / Fraction(low))
        return worst

    def _worst_level_ratio(self):
        """Per column, the smallest and largest level it uses (levels ranked by value once)."""
        ranked = sorted(range(len(self.levels)), key=lambda k: self.levels[k])
        rank_of = np.empty(len(self.levels), dtype=np.int64)
        rank_of[ranked] = np.arange(len(ranked))
        ranks = rank_of[np.asarray(self.pattern)]
        pairs = set(zip(ranks.min(axis=0).tolist(), ranks.max(axis=0).tolist(), strict=True))
        worst = Fraction(0) if self.exact else 0.0
        for low_rank, high_rank in pairs:
            low, high = self.levels[ranked[low_rank]], self.levels[ranked[high_rank]]
            if low == 0:
                if high > 0:
                    return math.inf
                continue
            worst = max(worst, Fraction(high) / Fraction(low) if self.exact else float(high) / float(low))
        return worst

    def rows_sum_to_one(self) -> bool:
        """Every row is a probability distribution: exactly for exact channels, to 1e-12 otherwise."""
        if not self.exact:
            matrix = self.probabilities()
            return bool(np.all(matrix >= 0) and np.allclose(matrix.sum(axis=1), 1.0, atol=1e-12))
        if self.levels is None:
            return all(sum(row) == 1 and min(row) >= 0 for row in np.asarray(self.matrix))
        if any(level < 0 for level in self.levels):
            return False
        # integer numerators over one common denominator: row i sums counts[i, k] * numerator_k
        denominator = math.lcm(*(Fraction(level).denominator for level in self.levels))
        numerators = np.array([int(Fraction(level) * denominator) for level in self.levels], dtype=object)
        pattern = np.asarray(self.pattern)
        counts = np.stack([np.count_nonzero(pattern == k, axis=1) for k in range(len(self.levels))], axis=1)
        return bool(np.all(counts.astype(object) @ numerators == denominator))

    def max_log_ratio(self) -> float:
        """``max_{z, x, x'} log Q(z|x) / Q(z|x')`` (infinite if some column has a zero)."""
        worst = self.worst_ratio()
        if worst == math.inf:
            return math.inf
        return log_ratio(worst, 1) if isinstance(worst, Fraction) else math.log(worst)

    def satisfies(self, epsilon: float) -> bool:
        """Every likelihood ratio is at most ``e^epsilon``: proven for exact channels (rows must also
        sum to exactly 1), up to 1e-12 in log scale for float ones."""
        if not self.rows_sum_to_one():
            return False
        if not self.exact:
            return self.max_log_ratio() <= epsilon + 1e-12
        worst = self.worst_ratio()
        return worst != math.inf and ratio_within(worst, 1, epsilon)
