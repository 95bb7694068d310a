"""Optimized unary encoding (OUE), a third-party ldpest plugin.

Wang, Blocki, Li & Jha (2017), "Locally differentially private protocols for
frequency estimation".  The one-hot vector of the input is sent with its true
coordinate set to 1 with probability ``p = 1/2`` and every other coordinate
set to 1 with probability ``q = 1 / (e^a + 1)``.  Two inputs differ in two
coordinates, so the worst likelihood ratio is ``(p / q) ((1 - q) / (1 - p))
= (1 - q) / q = e^a``.  Unbiased estimate ``theta_j = (c_j / n - q) / (p - q)``
with variance ``pi_j (1 - pi_j) / (n (p - q)^2)``, ``pi_j = q + (p - q) theta_j``.

Exactness, as in ldpest's built-ins: every bit compares a uniform 64-bit word
with an integer threshold (:mod:`ldpest.privacy.exact`), ``p = 2^63 / 2^64`` and
``q = Q / 2^64`` with ``Q`` the smallest integer whose implemented ratio
``(1 - q) / q`` is proven ``<= e^epsilon``; ``channel()`` returns these
implemented probabilities as exact fractions.

This distribution uses ldpest's public API only: it is the template of the
plugin author guide (docs/plugin-author-guide.md).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

import ldpest
from ldpest.privacy.exact import (
    WORD,
    ratio_within,
    require_gap,
    smallest_threshold,
    too_small,
    words_below,
)
from ldpest.stats.binomial import AffineBinomialOracle, cross_covariance_product
from ldpest.util.validation import check_categories, check_epsilon

BLOCK_BITS = 1 << 18  # report bits per block: 2.04-2.16x the random-word floor, 2^20 gave 2.16-3.40 (bench_floor)


def one_threshold(epsilon: float) -> int:
    """The smallest ``Q >= 1`` with ``(2^64 - Q) / Q <= e^epsilon``: P(z_j = 1) = Q / 2^64 off the input."""
    guess = WORD / (1.0 + math.exp(min(epsilon, 700.0)))
    highest = WORD // 2 - 1  # q < 1/2 = p: the true bit must stay the likelier one
    if not ratio_within(WORD - highest, highest, epsilon):
        raise too_small(epsilon, "optimized-unary-encoding")
    return smallest_threshold(lambda q: ratio_within(WORD - q, q, epsilon), 1, highest,
                              guess=max(1.0, min(guess, highest)))


class OptimizedUnaryEncoding(AffineBinomialOracle, ldpest.FrequencyOracle, ldpest.Mechanism):
    name = "optimized-unary-encoding"
    family = "multinomial"
    default_estimator = "frequency"
    report_dims = ("report", "category")

    def __init__(self, *, epsilon, categories):
        self._set_params(epsilon=check_epsilon(epsilon), categories=check_categories(categories))
        self._one = one_threshold(self.epsilon)  # a larger q lowers (1 - q) / q: never above e^epsilon
        self._q = self._one / WORD
        self._p = 0.5
        require_gap(self._p - self._q, self.epsilon, self.name)  # tiny epsilon: q would reach 1/2

    @property
    def d(self) -> int:
        return len(self.categories)

    def encode_data(self, data):
        return self.encode_labels(data, "data")

    def _privatize(self, codes, rng):
        """Every bit is ``word < threshold`` for a uniform 64-bit word (``words_below`` draws 16 bits per word
        and the rest only on a tie: the same law from a quarter of the random bytes), in blocks of about 2^18
        bits so that the temporaries stay in cache and the peak memory near the reports' own."""
        n, d = codes.shape[0], self.d
        out = np.empty((n, d), dtype=np.uint8)
        rows = max(1, BLOCK_BITS // max(d, 1))
        for start in range(0, n, rows):
            block = slice(start, min(n, start + rows))
            m = block.stop - block.start
            bits = words_below(rng, m * d, self._one)
            # the true bits by flat position (two-array indexing costs about 3x as much)
            bits[np.arange(m) * d + codes[block]] = words_below(rng, m, WORD // 2)  # p = 1/2 exactly
            out[block] = bits.reshape(m, d)
        return out

    def encode_reports(self, values):
        values = np.asarray(values)
        if values.ndim != 2 or values.shape[1] != self.d:
            raise ldpest.DataError(
                f"reports have shape {values.shape} but mechanism {self.name!r} has {self.d} categories"
            )
        if not np.isin(values, (0, 1)).all():
            raise ldpest.DataError(f"reports of {self.name!r} must be 0/1")
        return values.astype(np.uint8)

    def channel(self):
        outputs = np.array(list(itertools.product((0, 1), repeat=self.d)), dtype=np.uint8)
        p, q = Fraction(1, 2), Fraction(self._one, WORD)  # the implemented probabilities
        probs = np.where(np.eye(self.d, dtype=bool)[:, None, :], np.array(p, dtype=object),
                         np.array(q, dtype=object))  # P(z_j = 1 | x)
        matrix = np.where(outputs[None] == 1, probs, 1 - probs).prod(axis=2)
        return ldpest.Channel(self.categories, outputs, matrix)

    def support_ratio(self):
        """``p (1 - q) / (q (1 - p)) = (1 - q) / q``: a report's likelihood is two-valued, by the bit at the
        input (what ``frequency-likelihood`` needs)."""
        q = Fraction(self._one, WORD)
        return float((1 - q) / q)

    def report_support(self, reports):
        return np.asarray(reports, dtype=np.uint8)

    def frequency_statistics(self, reports):
        return {"ones": reports.sum(axis=0, dtype=np.int64)}

    def bit_column_statistic(self):
        """The statistic is the sums of the 0/1 report columns: Spark may sum them where they are stored."""
        return "ones", None

    # AffineBinomialOracle supplies the estimate, its standard error, exact intervals and the
    # declared variances (which let ldpest.mechanism("auto", ...) and `ldpest plan` consider OUE).
    count_statistic = "ones"

    cross_covariance_columns = True

    def frequency_cross_covariance(self, theta, vector):
        """Coordinates flipped independently given the input: only the inputs' sampling, ``-theta_i theta_j``."""
        return cross_covariance_product(theta, vector)

    def binomial_model(self):
        """ones_j ~ Binomial(n, q + (p - q) theta_j): theta_j = (ones_j / n - q) / (p - q)."""
        return self._q, self._p - self._q

    def report_bits(self):
        return float(self.d)

    def simulate_frequency_statistics(self, theta, n, rng, draws=None):
        """Exact: with raw counts c ~ Mult(n, theta), ones_j ~ Bin(c_j, p) + Bin(n - c_j, q); ``draws`` sets
        (rows) if given."""
        counts = rng.multinomial(n, np.asarray(theta, dtype=np.float64), size=draws)
        return {"ones": (rng.binomial(counts, self._p) + rng.binomial(n - counts, self._q)).astype(np.int64)}


@ldpest.hookimpl
def register_mechanisms(register):
    register(OptimizedUnaryEncoding)
