"""L-OSUE: optimised unary encoding, then symmetric unary encoding (Arcolezi, Couchot, Al Bouna,
Xiao 2022; docs/accounting.md).

The permanent response is OUE at ``epsilon_inf``: the true category's bit is 1 with probability
exactly 1/2 (threshold ``2^63``), every other bit with ``q1 = T1 / 2^64``, the smallest ``T1`` with
``(1 - q1) / q1 <= e^epsilon_inf`` proven.  Each round keeps every bit with ``p2 = T2 / 2^64`` and
flips it otherwise.  One report then has independent bits with

    P(1 | true category) = p1 p2 + (1 - p1)(1 - p2) = 1/2,
    P(1 | other)         = q_s = q1 p2 + (1 - q1)(1 - p2),

and ``epsilon_1 = ln((1 - q_s) / q_s)``; ``T2`` is the largest with that proven ``<= epsilon``.
``ones_j ~ Binomial(n, q_s + (1/2 - q_s) theta_j)``: the ``frequency`` estimator debiases with them.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

from ldpest import Channel, DataError, ParameterError
from ldpest.privacy.exact import WORD, largest_threshold, random_words, ratio_within, smallest_threshold, too_small
from ldpest.util.validation import check_report_matrix

from .grr import CategoricalLongitudinal

HALF = 1 << 63
MAX_CHANNEL_CATEGORIES = 12


class LongitudinalOSUE(CategoricalLongitudinal):
    """L-OSUE: symmetric unary encoding of a memoised optimised unary encoding; ``epsilon`` per report,
    ``epsilon_inf`` for all reports of one value (module docstring)."""

    name = "l-osue"
    report_dims = ("report", "category")
    count_statistic = "ones"

    def __init__(self, *, epsilon, epsilon_inf, categories):
        epsilon, epsilon_inf = self._set_epsilons(epsilon, epsilon_inf, categories)
        if not ratio_within(WORD - 1, 1, epsilon_inf):
            self._t1 = smallest_threshold(lambda t: ratio_within(WORD - t, t, epsilon_inf), 1, HALF - 1)
        else:
            self._t1 = 1
        if not self._t1 < HALF:
            raise too_small(epsilon_inf, self.name)

        def ok(t2: int) -> bool:
            other = self._t1 * t2 + (WORD - self._t1) * (WORD - t2)
            return ratio_within(WORD * WORD - other, other, epsilon)

        if not ok(HALF + 1):
            raise too_small(epsilon, self.name)
        self._t2 = largest_threshold(ok, HALF + 1, WORD - 1)
        self._q_s = Fraction(self._t1 * self._t2 + (WORD - self._t1) * (WORD - self._t2), WORD * WORD)

    def _permanent(self, codes, words):
        d = len(self.categories)
        drawn = words("response", self.memo_keys(codes), d)
        thresholds = np.full(drawn.shape, np.uint64(self._t1))
        thresholds[np.arange(len(codes)), codes.astype(np.intp)] = np.uint64(HALF)
        return (drawn < thresholds).astype(np.uint8)

    def _instantaneous(self, permanent, rng):
        flip = random_words(rng, permanent.shape) >= np.uint64(self._t2)
        return permanent ^ flip.astype(np.uint8)

    def encode_reports(self, values):
        d = len(self.categories)
        values = check_report_matrix(values, d, self.name, f"{d} categories")
        if np.any((values != 0) & (values != 1)):
            raise DataError(f"reports of {self.name!r} must be 0/1")
        return values.astype(np.uint8)

    def _unary_channel(self, one_if_true: Fraction, one_if_other: Fraction) -> Channel:
        d = len(self.categories)
        if d > MAX_CHANNEL_CATEGORIES:
            raise ParameterError(f"the exact channel has 2^{d} outputs; enumerate it only for d <= "
                                 f"{MAX_CHANNEL_CATEGORIES}")
        outputs = np.array(list(itertools.product((0, 1), repeat=d)), dtype=np.uint8)
        probability = np.ones((d, len(outputs)), dtype=object)
        for i in range(d):
            for j in range(d):
                one = one_if_true if i == j else one_if_other
                probability[i] *= np.where(outputs[:, j] == 1, one, 1 - one)
        return Channel(self.categories, outputs, probability)

    def channel(self) -> Channel:
        return self._unary_channel(Fraction(1, 2), self._q_s)

    def permanent_channel(self) -> Channel:
        return self._unary_channel(Fraction(1, 2), Fraction(self._t1, WORD))

    def frequency_statistics(self, reports):
        return {"ones": reports.sum(axis=0, dtype=np.int64)}

    def binomial_model(self):
        """ones_j ~ Binomial(n, q_s + (1/2 - q_s) theta_j), implemented q_s."""
        return float(self._q_s), float(Fraction(1, 2) - self._q_s)

    def report_bits(self):
        return float(len(self.categories))
