"""Subset selection (Ye and Barg 2018; Wang et al. 2016; docs/frequency-oracles.md).

Each person reports a set ``S`` of ``omega`` categories: with probability
``P_in`` the true category plus ``omega - 1`` others drawn uniformly, otherwise
``omega`` categories drawn uniformly from the ``d - 1`` others.  Every set
holding ``x`` then has probability ``P_in / C(d-1, omega-1)`` and every other set
``(1 - P_in) / C(d-1, omega)``: the likelihood ratio is
``P_in (d - omega) / ((1 - P_in) omega)``, and ``P_in = T / 2^64`` with ``T``
the largest integer for which it is proven ``<= e^a`` (Ye and Barg's
``P_in = omega e^a / (omega e^a + d - omega)``, made exact).

Reports are 0/1 vectors of length ``d`` with ``omega`` ones.  With
``p = P_in`` and ``q = (P_in (omega - 1) + (1 - P_in) omega) / (d - 1)``,
``ones_j ~ Binomial(n, q + (p - q) theta_j)``; ``theta_j = (ones_j / n - q) / (p - q)``
is unbiased with ``n Var = pi_j (1 - pi_j) / (p - q)^2``.  ``omega`` defaults to
the integer next to ``d / (e^a + 1)`` with the smaller worst-case variance.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from ldpest import Channel, DataError, ParameterError
from ldpest.exact import WORD, largest_threshold, random_words, ratio_within
from ldpest.stats import affine_binomial_stderr, affine_binomial_variance, affine_binomial_worst_cases
from ldpest.validation import check_positive_int, check_report_matrix

from .mechanisms import _CategoricalMechanism, _row_blocks

_NO_KEY = np.uint32(0xFFFFFFFF)


def inclusion_threshold(epsilon: float, d: int, omega: int) -> int:
    """The largest ``T`` with ``T (d - omega) / ((2^64 - T) omega) <= e^epsilon`` (proven)."""
    guess = WORD * omega * math.exp(min(epsilon, 700.0)) / (omega * math.exp(min(epsilon, 700.0)) + d - omega)
    return largest_threshold(lambda t: ratio_within(t * (d - omega), (WORD - t) * omega, epsilon),
                             WORD * omega // d, WORD - 1, guess=min(guess, WORD - 1))


def _probabilities(epsilon: float, d: int, omega: int) -> tuple[float, float]:
    """Ye and Barg's (p, q) as floats (for choosing omega)."""
    keep = omega * math.exp(min(epsilon, 700.0))
    p = keep / (keep + d - omega)
    return p, (p * (omega - 1) + (1 - p) * omega) / (d - 1)


def default_subset_size(epsilon: float, d: int) -> int:
    """``floor`` or ``ceil`` of ``d / (e^a + 1)`` (in ``1..d-1``), whichever has the smaller worst-case variance."""
    rule = d / (math.exp(min(epsilon, 700.0)) + 1)
    candidates = {min(max(1, k), d - 1) for k in (math.floor(rule), math.ceil(rule))}

    def worst(omega):
        p, q = _probabilities(epsilon, d, omega)
        return affine_binomial_worst_cases(d, q, p - q)[0]

    return min(sorted(candidates), key=worst)


class SubsetSelection(_CategoricalMechanism):
    """Report a set of ``omega`` categories that holds the true one with probability ``P_in``.

    ``theta_j = (ones_j / n - q) / (p - q)``, ``n Var = pi_j (1 - pi_j) / (p - q)^2``,
    ``p = P_in``, ``q = (P_in (omega - 1) + (1 - P_in) omega) / (d - 1)`` (module docstring).
    Reports are 0/1 arrays of shape (n, d) with ``omega`` ones per row.
    """

    name = "subset-selection"
    report_dims = ("report", "category")

    def __init__(self, *, epsilon, categories, subset_size=None):
        super().__init__(epsilon=epsilon, categories=categories)
        d = self.d
        omega = default_subset_size(self.epsilon, d) if subset_size is None else \
            check_positive_int("subset_size", subset_size)
        if omega >= d:
            raise ParameterError(f"subset_size must be between 1 and d - 1 = {d - 1}, got {omega}")
        self._set_params(epsilon=self.epsilon, categories=self.categories, subset_size=omega)
        self._omega = omega
        self._in = inclusion_threshold(self.epsilon, d, omega)
        p = Fraction(self._in, WORD)
        self._exact = (p, (p * (omega - 1) + (1 - p) * omega) / (d - 1))
        self._p, self._q = float(self._exact[0]), float(self._exact[1])

    @property
    def subset_size(self) -> int:
        return self._omega

    @property
    def inclusion_probabilities(self) -> tuple[Fraction, Fraction]:
        """``(p, q)``: P(j in S) when ``x = j`` and when ``x != j``, exactly."""
        return self._exact

    def _privatize(self, codes, rng):
        n, d = codes.shape[0], self.d
        out = np.empty((n, d), dtype=np.uint8)
        for rows in _row_blocks(n, d):
            out[rows] = self._subsets(codes[rows], rng)
        return out

    def _subsets(self, codes, rng) -> np.ndarray:
        """One 0/1 row per code: the k smallest of d i.i.d. uniform 32-bit keys (x's key set to the
        largest).  Rows whose k-th and (k+1)-th smallest keys tie are redrawn, so the chosen set is
        exactly a uniform k-subset of the other categories (keys are exchangeable)."""
        out = np.zeros((codes.shape[0], self.d), dtype=np.uint8)
        todo = np.arange(codes.shape[0])
        while todo.size:
            x = codes[todo]
            rows = np.arange(todo.size)
            holds_x = random_words(rng, todo.size) < np.uint64(self._in)
            keys = random_words(rng, (todo.size, (self.d + 1) // 2)).view(np.uint32)[:, :self.d]  # 32-bit keys
            keys[rows, x] = _NO_KEY  # x is never among the k smallest unless it ties (rejected below)
            want = self._omega - holds_x.astype(np.int64)  # how many others to pick
            ranks = sorted({k for k in (self._omega - 2, self._omega - 1, self._omega) if 0 <= k < self.d})
            ordered = np.partition(keys, ranks, axis=1)
            last = np.where(want > 0, ordered[rows, np.maximum(want - 1, 0)], np.uint32(0))
            following = ordered[rows, want]
            tied = (want > 0) & (last == following)
            chosen = (keys <= last[:, None]) & (want > 0)[:, None]
            chosen[rows, x] = holds_x
            good = ~tied
            out[todo[good]] = chosen[good]
            todo = todo[tied]
        return out

    def encode_reports(self, values):
        values = check_report_matrix(values, self.d, self.name, f"{self.d} categories")
        bad = (values != 0) & (values != 1)
        if bad.any():
            raise DataError(f"reports of {self.name!r} must be 0/1; {int(bad.sum())} value(s) are not",
                            row=int(np.argwhere(bad)[0][0]))
        values = values.astype(np.uint8)
        sizes = values.sum(axis=1, dtype=np.int64)
        wrong = sizes != self._omega
        if wrong.any():
            raise DataError(f"reports of {self.name!r} must hold subset_size = {self._omega} ones; "
                            f"{int(wrong.sum())} do not", row=int(np.flatnonzero(wrong)[0]))
        return values

    def channel(self, max_categories: int = 12) -> Channel:
        """Every set of ``omega`` categories, with the implemented probabilities as fractions."""
        if self.d > max_categories:
            raise ParameterError(f"the channel has C({self.d}, {self._omega}) outputs; enumerate it for d <= {max_categories}")
        outputs = np.zeros((math.comb(self.d, self._omega), self.d), dtype=np.uint8)
        for row, subset in enumerate(itertools.combinations(range(self.d), self._omega)):
            outputs[row, list(subset)] = 1
        p = Fraction(self._in, WORD)
        inside = p / math.comb(self.d - 1, self._omega - 1)
        outside = (1 - p) / math.comb(self.d - 1, self._omega)
        matrix = np.where(outputs.T.astype(bool), np.array(inside, dtype=object), np.array(outside, dtype=object))
        return Channel(self.categories, outputs, matrix)

    def frequency_statistics(self, reports):
        return {"ones": reports.sum(axis=0, dtype=np.int64)}

    def frequency_estimate(self, stats, n):
        gap = self._p - self._q
        theta = (stats["ones"] / n - self._q) / gap
        return theta, affine_binomial_stderr(theta, self._q, gap, n)

    def count_model(self, stats):
        return stats["ones"], self._q, self._p - self._q

    def frequency_variance(self, theta):
        return affine_binomial_variance(theta, self._q, self._p - self._q)

    def worst_case_variance(self):
        return affine_binomial_worst_cases(self.d, self._q, self._p - self._q)[0]

    def worst_case_category_variance(self):
        return affine_binomial_worst_cases(self.d, self._q, self._p - self._q)[1]

    def report_bits(self):
        return math.log2(math.comb(self.d, self._omega))
