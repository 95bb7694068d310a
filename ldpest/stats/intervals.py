"""Confidence intervals as arrays: exact (Clopper-Pearson) for binomial counts, and the normal
interval's critical value corrected for the excess kurtosis of Laplace noise sums
(docs/privacy.md, "Standard errors and intervals").  ``ldpest.confidence_interval`` applies them
to a result."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np


def clopper_pearson(count, n: int, level: float) -> tuple[np.ndarray, np.ndarray]:
    """The exact two-sided interval ``(low, high)`` for a binomial probability from ``count`` of
    ``n``: coverage at least ``level`` for every probability and every n, n = 1 included.
    Negative counts (cells outside a ball partition) give NaN."""
    from scipy.special import betaincinv

    count = np.asarray(count, dtype=np.float64)
    alpha = 1.0 - level
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(count > 0, betaincinv(np.maximum(count, 1e-300), n - count + 1, alpha / 2), 0.0)
        high = np.where(count < n, betaincinv(count + 1, np.maximum(n - count, 1e-300), 1 - alpha / 2), 1.0)
    invalid = count < 0
    low[invalid] = high[invalid] = np.nan
    return low, high


def normal_critical(level: float, excess_kurtosis=None):
    """The critical value ``c`` of the interval ``estimate +- c stderr``: the normal quantile ``z``,
    or ``max(z, z + (z^3 - 3 z) kappa / 24)`` (Cornish-Fisher) for an estimate of excess kurtosis
    ``kappa`` (Laplace noise has heavier tails than the normal at small n)."""
    z = NormalDist().inv_cdf(0.5 + level / 2)
    if excess_kurtosis is None:
        return z
    return np.maximum(z, z + (z ** 3 - 3 * z) * excess_kurtosis / 24)


def laplace_mean_kurtosis(theta, noise_variance: float, n: int) -> np.ndarray:
    """Excess kurtosis of a mean of n reports ``1{x = j} + W``, W Laplace of variance v:
    ``3 v^2 / (n (theta (1 - theta) + v)^2)`` (the Bernoulli part's own, smaller term omitted)."""
    clipped = np.clip(np.asarray(theta, dtype=np.float64), 0.0, 1.0)
    return 3 * noise_variance ** 2 / (n * (clipped * (1 - clipped) + noise_variance) ** 2)
