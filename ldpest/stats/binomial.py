"""Estimates affine in binomial counts: randomized response, unary encodings, local hashing,
subset selection and ``histogram-cdf`` (MATH.md sections 1 and 2).  Their standard errors, exact
variances and worst cases, and the mixin that gives a frequency oracle all of them."""

from __future__ import annotations

import numpy as np


def affine_binomial_stderr(theta, offset: float, gap: float, n: int, top_complement: float | None = None) -> np.ndarray:
    """Standard error of ``theta_hat = (c / n - offset) / gap``, ``c ~ Binomial(n, offset + gap theta)``.

    ``sqrt(pi (1 - pi) / n) / |gap|`` evaluated at ``pi = offset + gap clip(theta, 0, 1)``: the
    estimate moved into the feasible range, so the error is never 0 (the plug-in ``c / n`` gives
    0 whenever every report agrees, e.g. n = 1, and with it intervals of zero width).
    ``top_complement``: ``1 - offset - gap`` computed exactly by the mechanism, where ``offset + gap``
    rounds to 1 in float64 (large epsilon): ``1 - pi`` is then ``top_complement + gap (1 - theta)``,
    not a difference that cancels to 0.
    """
    theta = np.clip(np.asarray(theta, dtype=np.float64), 0.0, 1.0)
    pi = offset + gap * theta
    complement = 1 - pi if top_complement is None else top_complement + gap * (1 - theta)
    return np.sqrt(pi * complement / n) / abs(gap)


def affine_binomial_variance(theta, offset: float, gap: float) -> np.ndarray:
    """``n Var(theta_hat_j) = pi_j (1 - pi_j) / gap^2``, ``pi_j = offset + gap theta_j``: the exact
    variance of one report's contribution for mechanisms whose counts are
    ``Binomial(n, offset + gap theta_j)`` (randomized response, unary encodings, local hashing,
    subset selection)."""
    pi = offset + gap * np.asarray(theta, dtype=np.float64)
    return pi * (1 - pi) / gap ** 2


def affine_binomial_worst_cases(d: int, offset: float, gap: float) -> tuple[float, float]:
    """``(total, single)``: the largest ``sum_j n Var(theta_hat_j)`` over the simplex, and the
    largest ``n Var(theta_hat_j)`` of one category, for :func:`affine_binomial_variance`.

    The total is a symmetric concave function of theta, so it peaks at the uniform distribution;
    one category's variance ``pi (1 - pi) / gap^2`` peaks at the ``pi`` of ``[offset, offset + gap]``
    nearest 1/2 (gap > 0).
    """
    uniform = offset + gap / d
    total = d * uniform * (1 - uniform) / gap ** 2
    pi = min(max(0.5, offset), offset + gap)
    return float(total), float(pi * (1 - pi) / gap ** 2)


def cross_covariance_product(theta, vector, c0: float = 0.0, c1: float = 0.0) -> np.ndarray:
    """``sum_{j != i} (c0 + c1 (theta_i + theta_j) - theta_i theta_j) vector_j`` for every ``i``, in O(d):
    :meth:`ldpest.FrequencyOracle.frequency_cross_covariance` for oracles whose ``n Cov(theta_hat_i,
    theta_hat_j)`` has that form (:func:`inclusion_pair_covariance`; ``c0 = c1 = 0`` is the inputs'
    multinomial sampling alone).  ``vector`` may be a matrix: each column is multiplied."""
    theta, vector = np.asarray(theta, dtype=np.float64), np.asarray(vector, dtype=np.float64)
    column = theta.reshape(-1, *(1,) * (vector.ndim - 1))  # theta_i down the rows of a matrix
    others = vector.sum(axis=0) - vector  # sum_{j != i} v_j
    weighted = theta @ vector - column * vector  # sum_{j != i} theta_j v_j
    return c0 * others + c1 * (column * others + weighted) - column * weighted


def cross_covariance_factors(theta, c0: float = 0.0, c1: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """``(V, S)`` with ``(V S V^T)_ij = c0 + c1 (theta_i + theta_j) - theta_i theta_j``, the off-diagonal
    covariance of :func:`cross_covariance_product`, as a matrix of rank 2: ``V = [1, theta]`` and ``S = [[c0,
    c1], [c1, -1]]`` (:meth:`ldpest.FrequencyOracle.frequency_cross_covariance_factors`)."""
    theta = np.asarray(theta, dtype=np.float64)
    return np.column_stack([np.ones_like(theta), theta]), np.array([[c0, c1], [c1, -1.0]])


def inclusion_pair_covariance(p: float, q: float, both_given_one: float,
                              both_given_neither: float) -> tuple[float, float]:
    """``(c0, c1)`` of :func:`cross_covariance_product` for reports that are sets ``S``
    with ``P(j in S | x) = p`` if ``x = j`` else ``q``, from the pair inclusions ``P(i, j in S | x = i)``
    (``both_given_one``) and ``P(i, j in S | x not in {i, j})`` (``both_given_neither``).

    With ``a = both_given_one - p q`` and ``b = both_given_neither - q^2``, one report's
    ``Cov(1[i in S], 1[j in S]) = b + (a - b) (theta_i + theta_j) - (p - q)^2 theta_i theta_j``, so
    ``n Cov(theta_hat_i, theta_hat_j) = c0 + c1 (theta_i + theta_j) - theta_i theta_j`` with
    ``c0 = b / (p - q)^2`` and ``c1 = (a - b) / (p - q)^2``."""
    gap2 = (p - q) ** 2
    a, b = both_given_one - p * q, both_given_neither - q * q
    return b / gap2, (a - b) / gap2


class AffineBinomialOracle:
    """Mixin for frequency oracles whose statistic ``stats[count_statistic]`` has components
    ``Binomial(n, offset + gap theta_j)`` (randomized response, unary encodings, local hashing,
    subset selection): supplies the unbiased estimate ``(c / n - offset) / gap`` with its
    standard error, the exact-interval ``count_model`` and the declared variances.

    Put it before :class:`ldpest.FrequencyOracle` in the bases and implement
    :meth:`binomial_model`, returning the implemented ``(offset, gap)``.
    """

    count_statistic = "counts"

    def binomial_model(self) -> tuple[float, float]:
        raise NotImplementedError

    def frequency_estimate(self, stats, n):
        offset, gap = self.binomial_model()
        theta = (stats[self.count_statistic] / n - offset) / gap
        return theta, affine_binomial_stderr(theta, offset, gap, n, self.binomial_top_complement())

    def binomial_top_complement(self) -> float | None:
        """Optional: ``1 - offset - gap`` computed exactly (e.g. from Fractions), for standard errors
        that stay positive where ``offset + gap`` rounds to 1 (:func:`affine_binomial_stderr`)."""
        return None

    def count_model(self, stats):
        return (stats[self.count_statistic], *self.binomial_model())

    def frequency_variance(self, theta):
        return affine_binomial_variance(theta, *self.binomial_model())

    def worst_case_variance(self):
        return affine_binomial_worst_cases(len(self.categories), *self.binomial_model())[0]

    def worst_case_category_variance(self):
        return affine_binomial_worst_cases(len(self.categories), *self.binomial_model())[1]
