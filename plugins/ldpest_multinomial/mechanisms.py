"""Client-side mechanisms over d categories (MATH.md section 1).

Keep decisions compare uniform 64-bit words with integer thresholds chosen by
:func:`ldpest.privacy.exact.keep_threshold` (randomized response: lowered by less than d - 1,
:func:`ldpest.privacy.exact.shared_keep_threshold`), so the implemented keep probability is
exactly ``T / 2^64`` and the implemented likelihood ratio is proven to be at
most e^epsilon at every epsilon (at very large epsilon the threshold stops
at ``2^64 - 1``: the channel is then more private than asked, never less).
``channel()`` returns these implemented probabilities as exact fractions, and
the estimators debias with them.
"""

from __future__ import annotations

import itertools
import math
import numbers
from fractions import Fraction

import numpy as np

from ldpest import (
    Channel,
    DataError,
    ExactSum,
    FrequencyOracle,
    Mechanism,
    ParameterError,
    VariationRatio,
)
from ldpest.privacy.exact import (
    WORD,
    keep_or_other,
    keep_threshold,
    random_words,
    require_gap,
    shared_keep_threshold,
    words_below,
)
from ldpest.privacy.noise import LatticeLaplace
from ldpest.stats.binomial import AffineBinomialOracle, cross_covariance_product
from ldpest.stats.intervals import EXACT_NOISE_SUM_METHOD, laplace_mean_kurtosis, one_hot_laplace_interval
from ldpest.stats.projection import affine_count_mle
from ldpest.stats.risk import affine_mle_divergence
from ldpest.stats.sufficient import count_indices
from ldpest.util.validation import (
    check_categories,
    check_epsilon,
    check_finite,
    check_report_matrix,
)

_ROW_BLOCK_ELEMENTS = 1 << 18  # temporaries stay in cache: unary privatise 0.8 ns a bit, 1.7 at 2^20
_INDEX_BLOCK = 1 << 14  # rows per privatise block of randomized response: temporaries under 1 MiB


def _row_blocks(n: int, d: int, rows: int | None = None):
    rows = rows or max(1, _ROW_BLOCK_ELEMENTS // max(d, 1))
    for start in range(0, n, rows):
        yield slice(start, min(n, start + rows))


def bit_reports(values, mechanism) -> np.ndarray:
    """Reports that are 0/1 vectors over the categories, validated, as uint8 (n, d)."""
    d = len(mechanism.categories)
    values = check_report_matrix(values, d, mechanism.name, f"{d} categories")
    bad = (values != 0) & (values != 1)
    if bad.any():
        raise DataError(f"reports of {mechanism.name!r} must be 0/1; {int(bad.sum())} value(s) are not",
                        row=int(np.argwhere(bad)[0][0]))
    return values.astype(np.uint8)


def weighted_bit_sums(bits: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``[sum_i w_i s_ij, sum_i w_i^2 s_ij]`` for 0/1 reports ``s`` (n, d), block by block (the float
    copy of the bits stays one block): the statistics of a design-weighted estimate
    (:func:`ldpest.estimate` with ``weights``)."""
    out = np.zeros((2, bits.shape[1]), dtype=np.float64)
    rows = max(1, (1 << 22) // max(1, bits.shape[1]))
    for start in range(0, bits.shape[0], rows):
        block = bits[start:start + rows].astype(np.float64)
        w = weights[start:start + rows]
        out[0] += w @ block
        out[1] += (w * w) @ block
    return out


class _CategoricalMechanism(FrequencyOracle, Mechanism):
    family = "multinomial"
    default_estimator = "frequency"

    parameter_help = {"epsilon": "privacy level epsilon > 0 of each report",
                      "categories": "the possible answers (labels), in order"}

    def __init__(self, *, epsilon, categories):
        self._set_params(epsilon=check_epsilon(epsilon), categories=check_categories(categories))

    @property
    def d(self) -> int:
        return len(self._params["categories"])

    def encode_data(self, data) -> np.ndarray:
        return self.encode_labels(data, "data")


def _keep_probability(keep, chance: float, name: str) -> float:
    """A design keep probability: a real number strictly between ``chance`` and 1."""
    if isinstance(keep, bool) or not isinstance(keep, numbers.Real) or not chance < float(keep) < 1:
        raise ParameterError(f"{name}: keep must be a probability strictly between {chance:g} (no information) "
                             f"and 1 (no privacy), got {keep!r}")
    return float(keep)


def _epsilon_or_keep(epsilon, keep, name: str, epsilon_of_keep) -> float:
    if (epsilon is None) == (keep is None):
        raise ParameterError(f"{name}: give epsilon or keep (the design probability of keeping the truth), "
                             f"{'not both' if keep is not None else 'one of them is needed'}")
    return epsilon if keep is None else epsilon_of_keep(keep)


def randomized_response_epsilon(keep, d: int) -> float:
    """The epsilon of k-ary randomized response that reports the truth with probability ``keep``
    and each of the other ``d - 1`` categories with ``(1 - keep) / (d - 1)`` (MATH.md section 1):
    ``epsilon = ln(keep (d - 1) / (1 - keep))``.  OpenDP's ``make_randomized_response(categories,
    prob)`` and ``make_randomized_response_bool(prob)`` have ``keep = prob``."""
    keep = _keep_probability(keep, 1 / d, "randomized-response")
    return math.log(keep) + math.log(d - 1) - math.log1p(-keep)


def unary_epsilon(keep) -> float:
    """The epsilon of symmetric unary randomized response (basic one-time RAPPOR) that keeps each
    bit with probability ``keep``: ``epsilon = 2 ln(keep / (1 - keep))`` (MATH.md section 1).  OpenDP's
    ``make_randomized_response_bitvec(f=...)`` and RAPPOR flip each bit with probability ``f / 2``:
    ``keep = 1 - f / 2``."""
    keep = _keep_probability(keep, 0.5, "unary-randomized-response")
    return 2 * (math.log(keep) - math.log1p(-keep))


class RandomizedResponse(AffineBinomialOracle, _CategoricalMechanism):
    """k-ary (Warner) randomized response.

    Report the true category with probability ``p = e^a / (e^a + d - 1)`` and
    each other category with ``q = (1 - p) / (d - 1)``; ``p / q = e^a``.
    Unbiased estimate ``theta_j = (c_j / n - q) / (p - q)`` with variance
    ``pi_j (1 - pi_j) / (n (p - q)^2)``, ``pi_j = q + (p - q) theta_j``.
    Reports are category indices 0..d-1 (labels in the spec).

    Give ``epsilon``, or the design's ``keep = p`` (e.g. OpenDP's ``prob``): the spec records
    :func:`randomized_response_epsilon` of it, and the implemented ``p`` is within 1e-15 of ``keep``.
    """

    parameter_help = {"epsilon": "privacy level epsilon > 0 of each report",
                      "categories": "the possible answers (labels), in order",
                      "keep": "instead of epsilon: the probability p of reporting the true answer (a survey design)"}
    name = "randomized-response"
    report_kind = "label"

    def __init__(self, *, categories, epsilon=None, keep=None):
        d = len(check_categories(categories))
        epsilon = _epsilon_or_keep(epsilon, keep, self.name, lambda k: randomized_response_epsilon(k, d))
        super().__init__(epsilon=epsilon, categories=categories)
        # P(keep) = keep / 2^64 exactly, and each other category's share / 2^64
        self._keep, self._share = shared_keep_threshold(self.epsilon, self.d - 1)
        self._p = self._keep / WORD
        self._q = (WORD - self._keep) / (WORD * (self.d - 1))
        require_gap(self._p - self._q, self.epsilon, self.name)

    @property
    def p(self) -> float:
        """Implemented probability of reporting the true category."""
        return self._p

    @property
    def q(self) -> float:
        """Implemented probability of reporting one given other category."""
        return self._q

    def _privatize(self, codes, rng):
        """One word ``u`` a report (:func:`ldpest.privacy.exact.keep_or_other`): the true category where
        ``u < keep``, else the ``(u - keep) // share``-th of the others, each exactly ``share`` words.  In the
        smallest index type (1 byte up to 256 categories), block by block.  (One word where a 64-bit coin
        and numpy's bounded integers took 1.13 words: 4.79 -> 2.87 times the random-word floor at 10^6
        reports, bench/results/floor.txt.)"""
        n, dtype = codes.shape[0], self.index_dtype
        out = np.empty(n, dtype=dtype)
        for rows in _row_blocks(n, 1, _INDEX_BLOCK):
            out[rows] = keep_or_other(codes[rows].astype(dtype), random_words(rng, rows.stop - rows.start),
                                      self._keep, self._share)
        return out

    def encode_reports(self, values):
        return self.encode_labels(values, "reports").astype(self.index_dtype)

    @property
    def shuffle_pair_is_attained(self) -> bool:
        """Wang et al.'s pair is the law of shuffled reports when the others hold a third category:
        its epsilon is then also a lower bound (docs/accounting.md)."""
        return self.d >= 3

    def variation_ratio(self) -> VariationRatio:
        """``p = P(keep) / P(one other)``, ``beta = P(keep) - P(one other)`` (the two inputs'
        laws differ on their own two categories), from the integer threshold."""
        keep = Fraction(self._keep, WORD)
        other = (1 - keep) / (self.d - 1)
        return VariationRatio(float(keep / other) * (1 + 1e-14), float(keep - other) * (1 + 1e-12),
                                     float(keep / other) * (1 + 1e-14))

    def channel(self) -> Channel:
        """The implemented channel, exactly (fractions from the integer threshold)."""
        p = Fraction(self._keep, WORD)
        q = (1 - p) / (self.d - 1)
        matrix = np.full((self.d, self.d), q, dtype=object)
        np.fill_diagonal(matrix, p)
        return Channel(self.categories, np.arange(self.d), matrix)

    def frequency_statistics(self, reports):
        return {"counts": count_indices(reports, self.d)}

    def weighted_support(self, reports, weights) -> np.ndarray:
        """``[sum w_i 1{y_i = j}, sum w_i^2 1{y_i = j}]`` over categories j (design weights)."""
        reports = np.asarray(reports, dtype=np.intp)
        return np.stack([np.bincount(reports, weights=weights, minlength=self.d),
                         np.bincount(reports, weights=weights * weights, minlength=self.d)])

    def binomial_model(self):
        """counts_j ~ Binomial(n, q + (p - q) theta_j), implemented p and q."""
        return self._q, self._p - self._q

    cross_covariance_columns = True

    def frequency_cross_covariance(self, theta, vector):
        """One category per report: ``n Cov(theta_i, theta_j) = -pi_i pi_j / (p - q)^2``, i.e.
        ``c0 = -r^2``, ``c1 = -r`` with ``r = q / (p - q)`` (:func:`ldpest.stats.binomial.cross_covariance_product`)."""
        r = self._q / (self._p - self._q)
        return cross_covariance_product(theta, vector, -r * r, -r)

    def frequency_mle_divergence(self, stats, n, mle, covariance):
        """The closed form ``theta_j = max(0, t (x_j + r) - r)`` on its support ``S`` (k categories),
        ``t = (1 + k r) / (sum_S x + k r)``, has ``J_ij = t delta_ij - t^2 (x_i + r) / (1 + k r)`` over ``S``
        (:func:`ldpest.stats.risk.affine_mle_divergence`)."""
        theta, _ = self.frequency_estimate(stats, n)
        return affine_mle_divergence(theta, mle, self._q / (self._p - self._q), covariance)

    def frequency_mle(self, stats, n):
        """The counts are sufficient and ``Multinomial(n, (p - q) (q / (p - q) + theta))``: the MLE on the
        simplex in closed form (:func:`ldpest.stats.projection.affine_count_mle`)."""
        theta = affine_count_mle(stats["counts"], self._q / (self._p - self._q))
        return theta, {"method": "closed form (water-filling over the counts)"}

    def binomial_top_complement(self):
        """``1 - p`` exactly (positive where ``p`` rounds to 1 in float64)."""
        return (WORD - self._keep) / WORD

    def report_bits(self):
        return math.log2(self.d)

    def simulate_frequency_statistics(self, theta, n, rng, draws=None):
        """Exact law of the counts of n reports: Multinomial(n, q + (p - q) theta); ``draws`` sets of them
        (rows) if given."""
        pi = self._q + (self._p - self._q) * np.asarray(theta, dtype=np.float64)
        return {"counts": rng.multinomial(n, pi / pi.sum(), size=draws).astype(np.int64)}


class UnaryRandomizedResponse(AffineBinomialOracle, _CategoricalMechanism):
    """Duchi et al.'s coordinatewise randomized response on the one-hot vector.

    Each coordinate of ``e_x`` is kept with ``p = e^{a/2} / (1 + e^{a/2})`` and
    flipped otherwise; two inputs differ in two coordinates, ratio
    ``(p / (1-p))^2 = e^a``.  ``theta_j = (mean Z_j - (1 - p)) / (2p - 1)``,
    variance ``pi_j (1 - pi_j) / (n (2p - 1)^2)``.  Reports are 0/1 arrays
    of shape (n, d).

    Give ``epsilon``, or the design's per-bit ``keep = p`` (OpenDP's and RAPPOR's ``f``:
    ``keep = 1 - f / 2``): the spec records :func:`unary_epsilon` of it.
    """

    parameter_help = {"epsilon": "privacy level epsilon > 0 of each report",
                      "categories": "the possible answers (labels), in order",
                      "keep": "instead of epsilon: the probability of keeping each bit of the one-hot vector"}
    name = "unary-randomized-response"
    report_dims = ("report", "category")

    def __init__(self, *, categories, epsilon=None, keep=None):
        epsilon = _epsilon_or_keep(epsilon, keep, self.name, unary_epsilon)
        super().__init__(epsilon=epsilon, categories=categories)
        self._keep = keep_threshold(self.epsilon / 2)  # each of two differing bits: odds <= e^(eps/2)
        self._p = self._keep / WORD
        require_gap(2 * self._p - 1, self.epsilon, self.name)

    @property
    def p(self) -> float:
        """Implemented probability of keeping a coordinate."""
        return self._p

    def _privatize(self, codes, rng):
        """Every bit flipped where its word is at or above the keep threshold, then the true bit
        negated; written straight into the uint8 reports, and the true bits found by flat position
        (numpy's two-array indexing took 6.3 ns a report against 2.0, session 25)."""
        n, d = codes.shape[0], self.d
        out = np.empty((n, d), dtype=np.uint8)
        for rows in _row_blocks(n, d):
            bits = out[rows].view(bool)
            np.logical_not(words_below(rng, (rows.stop - rows.start, d), self._keep), out=bits)
            flat, true_bit = bits.reshape(-1), np.arange(0, bits.size, d) + codes[rows]
            flat[true_bit] = ~flat[true_bit]
        return out

    def encode_reports(self, values):
        return bit_reports(values, self)

    def bit_column_statistic(self):
        return "ones", None

    def support_ratio(self) -> float:
        """``(p / (1 - p))^2``: a report's likelihood gains ``p / (1 - p)`` where its bit is set and loses it
        where not, so it is two-valued over the input, by the bit at the input."""
        p = Fraction(self._keep, WORD)
        return float((p / (1 - p)) ** 2)

    def report_support(self, reports):
        return np.asarray(reports, dtype=np.uint8)

    def variation_ratio(self) -> VariationRatio:
        """Two inputs' laws differ only in their own two bits, each kept with ``p``: ``beta = 2p - 1``
        (``|p (1 - (1 - p)) - (1 - p) (1 - p')|`` of the one pair of bits) and ``p^2 / (1 - p)^2``."""
        keep = Fraction(self._keep, WORD)
        ratio = float(keep ** 2 / (1 - keep) ** 2) * (1 + 1e-14)
        return VariationRatio(ratio, float(2 * keep - 1) * (1 + 1e-12), ratio)

    def channel(self, max_categories: int = 12) -> Channel:
        if self.d > max_categories:
            raise ParameterError(f"the exact channel has 2^{self.d} outputs; "
                                 f"enumerate it only for d <= {max_categories}")
        outputs = np.array(list(itertools.product((0, 1), repeat=self.d)), dtype=np.uint8)
        onehot = np.eye(self.d, dtype=np.uint8)
        agree = (outputs[None, :, :] == onehot[:, None, :]).sum(axis=2)
        p = Fraction(self._keep, WORD)
        powers = np.array([p ** a * (1 - p) ** (self.d - a) for a in range(self.d + 1)], dtype=object)
        return Channel(self.categories, outputs, powers[agree])

    def frequency_statistics(self, reports):
        return {"ones": reports.sum(axis=0, dtype=np.int64)}

    def weighted_support(self, reports, weights) -> np.ndarray:
        """``[sum w_i s_ij, sum w_i^2 s_ij]`` of the bits (design weights)."""
        return weighted_bit_sums(reports, weights)

    count_statistic = "ones"

    cross_covariance_columns = True

    def frequency_cross_covariance(self, theta, vector):
        """Coordinates flipped independently given the input: only the inputs' sampling, ``-theta_i theta_j``."""
        return cross_covariance_product(theta, vector)

    def binomial_model(self):
        """ones_j ~ Binomial(n, 1 - p + (2p - 1) theta_j), from the integer threshold (``1 - p`` stays
        positive where ``p`` rounds to 1)."""
        return (WORD - self._keep) / WORD, (2 * self._keep - WORD) / WORD

    def binomial_top_complement(self):
        """``1 - p`` exactly (positive where ``p`` rounds to 1 in float64)."""
        return (WORD - self._keep) / WORD

    def report_bits(self):
        return float(self.d)

    def simulate_frequency_statistics(self, theta, n, rng, draws=None):
        """Exact: with raw counts c ~ Mult(n, theta), ones_j ~ Bin(c_j, p) + Bin(n - c_j, 1 - p); ``draws`` sets
        (rows) if given."""
        counts = rng.multinomial(n, np.asarray(theta, dtype=np.float64), size=draws)
        return {"ones": (rng.binomial(counts, self._p) + rng.binomial(n - counts, 1 - self._p)).astype(np.int64)}


class LaplaceOneHot(_CategoricalMechanism):
    """One-hot vector plus Laplace noise of scale ``b = 2 / a`` per coordinate.

    The noise is lattice (discrete) Laplace (:mod:`ldpest.privacy.noise`), exactly
    a-LDP and immune to the floating-point attack; its exact variance ``v``
    (about ``2 b^2 = 8 / a^2``) enters the standard error
    ``sqrt((theta_j (1 - theta_j) + v) / n)``.  ``theta = mean Z`` is unbiased.
    """

    name = "laplace"
    report_dims = ("report", "category")

    def __init__(self, *, epsilon, categories):
        super().__init__(epsilon=epsilon, categories=categories)
        self._noise = LatticeLaplace(self.epsilon, 2.0, on_lattice=True, one_level=True)

    @property
    def noise(self) -> LatticeLaplace:
        return self._noise

    def _privatize(self, codes, rng):
        return self._noise.one_hot(codes, self.d, rng)

    def encode_reports(self, values):
        values = check_report_matrix(values, self.d, self.name, f"{self.d} categories")
        return check_finite("reports", values.astype(np.float64))

    def frequency_statistics(self, reports):
        return {"sums": ExactSum.of(reports, step=self._noise.step)}

    def lattice_column_statistic(self):
        """The statistic is the exact sums of the report columns, on the noise's lattice: Spark may sum them in
        lattice units where they are stored."""
        return "sums", self._noise.step

    def frequency_estimate(self, stats, n):
        """``theta = sums / n`` from the exact sums (or, from the bootstrap's simulated ``draws``, float rows)."""
        sums = stats["sums"]
        theta = (sums.to_float() if isinstance(sums, ExactSum) else np.asarray(sums, dtype=np.float64)) / n
        clipped = np.clip(theta, 0.0, 1.0)
        return theta, np.sqrt((clipped * (1 - clipped) + self._noise.variance) / n)

    cross_covariance_columns = True

    def frequency_cross_covariance(self, theta, vector):
        """Noise independent across coordinates: only the inputs' sampling, ``-theta_i theta_j``."""
        return cross_covariance_product(theta, vector)

    def frequency_variance(self, theta):
        """``theta_j (1 - theta_j) + v``, v the exact variance of the lattice noise."""
        theta = np.asarray(theta, dtype=np.float64)
        return theta * (1 - theta) + self._noise.variance

    def worst_case_variance(self):
        return 1 - 1 / self.d + self.d * self._noise.variance  # uniform theta

    def worst_case_category_variance(self):
        return 0.25 + self._noise.variance

    def report_bits(self):
        return 64.0 * self.d  # one float64 per category

    def excess_kurtosis(self, theta, n):
        """Of theta_hat: Laplace noise (excess kurtosis 3 per report) in a mean of n reports."""
        return laplace_mean_kurtosis(theta, self._noise.variance, n)

    def frequency_interval(self, result, level):
        """Exact for n <= 10^4 with n (d + 1) <= 2^20 (:func:`ldpest.stats.intervals.one_hot_laplace_interval`): the
        sum of category j over the reports is ``C_j + g N_j``, a binomial count plus the sum of n
        lattice noises, whose law is computed exactly; beyond, None (the normal interval)."""
        n = int(result.attrs["n"])
        ends = one_hot_laplace_interval(self._noise, result["unprojected"].values * n, n, level)
        if ends is None:
            return None
        return *ends, EXACT_NOISE_SUM_METHOD

    def bootstrap_frequency_statistics(self, theta, n, rng, draws=None):
        """For ``projection="auto"``'s parametric bootstrap: the exact counts ``c ~ Mult(n, theta)`` plus the
        noise sum drawn from the normal law with its exact variance ``n v`` (rounded to the lattice), in
        O(d); the exact law of the sum (:meth:`simulate_frequency_statistics`) costs O(table) per category.
        ``draws`` sets (rows) if given, as floats (exact: lattice points far below 2^53)."""
        counts = rng.multinomial(n, np.asarray(theta, dtype=np.float64), size=draws)
        noise = np.rint(rng.normal(0.0, math.sqrt(n * self._noise.variance), counts.shape) / self._noise.step)
        sums = counts + self._noise.step * noise
        return {"sums": sums if draws is not None else ExactSum.of(sums[None, :])}

    def simulate_frequency_statistics(self, theta, n, rng):
        """Exact: sum_i Z_ij = c_j + g (sum of n lattice noises), c ~ Mult(n, theta)."""
        counts = rng.multinomial(n, np.asarray(theta, dtype=np.float64))
        totals = counts + self._noise.step * self._noise.sum_of_noise(n, counts.shape, rng)
        return {"sums": ExactSum.of(totals[None, :])}
