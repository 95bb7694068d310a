"""Confidence intervals as arrays: exact (Clopper-Pearson) for binomial counts, and the normal
interval's critical value corrected for the excess kurtosis of Laplace noise sums
(docs/privacy.md, "Standard errors and intervals").  ``ldpest.confidence_interval`` applies them
to a result."""

from __future__ import annotations

import functools
import math
from statistics import NormalDist

import numpy as np


def clopper_pearson(count, n, level: float) -> tuple[np.ndarray, np.ndarray]:
    """The exact two-sided interval ``(low, high)`` for a binomial probability from ``count`` of
    ``n`` (an int, or an array of trials per count; 0 trials give [0, 1]): coverage at least
    ``level`` for every probability and every n, n = 1 included.  Negative counts (cells outside a
    ball partition) give NaN."""
    from scipy.special import betaincinv

    count = np.asarray(count, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
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


EXACT_NOISE_SUM_CELLS = 1 << 20  # (n + 1) x categories: beyond, the normal interval (n is then large)
EXACT_NOISE_SUM_N = 10_000  # above, the normal interval (kurtosis-corrected) holds and costs nothing
EXACT_NOISE_SUM_METHOD = "exact (binomial count plus the exact law of the summed lattice noise)"
_TAIL_SCALES = 45.0  # noise beyond this many scales has probability below e^-45 ~ 3e-20
_SUM_SPREAD = 10.0  # the summed noise is kept within 10 of its standard deviations (+ the tail above)


def _binomial_pmf(n: int, theta: np.ndarray) -> np.ndarray:
    """``P(C = c)`` for ``C ~ Binomial(n, theta_j)``: shape ``(len(theta), n + 1)``; exact at 0 and 1."""
    from scipy.special import gammaln, xlog1py, xlogy

    c = np.arange(n + 1, dtype=np.float64)
    theta = np.asarray(theta, dtype=np.float64)[:, None]
    log_choose = gammaln(n + 1.0) - gammaln(c + 1) - gammaln(n - c + 1)
    return np.exp(log_choose + xlogy(c, theta) + xlog1py(n - c, -theta))


@functools.lru_cache(maxsize=16)
def noise_sum_cdf(pmf_steps, scale_steps: float, n: int) -> tuple[int, np.ndarray]:
    """``(start, cdf)``: ``cdf[i] = P(N <= start + i)`` for ``N`` the sum of ``n`` iid integer noises of
    probability function ``pmf_steps`` (symmetric, scale ``scale_steps``, tails at least as light
    as Laplace's).  One noise is cut at 45 scales and the sum at 10 standard deviations plus 45
    scales (the mass beyond is below 1e-19); the n-fold convolution is one FFT power.  Cached
    (16 laws and n)."""
    from scipy.fft import irfft, next_fast_len, rfft

    tail = math.ceil(_TAIL_SCALES * scale_steps)
    half = math.ceil(_SUM_SPREAD * math.sqrt(2.0 * n) * scale_steps) + tail
    size = next_fast_len(2 * half + 1, real=True)
    single = np.zeros(size)
    k = np.arange(-tail, tail + 1)
    single[k % size] = pmf_steps(k)
    law = irfft(rfft(single) ** n, size)
    law = np.maximum(np.concatenate([law[size - half:], law[:half + 1]]), 0.0)  # -half..half
    cdf = np.cumsum(law)
    cdf.flags.writeable = False  # cached: shared by every call with this law and n
    return -half, cdf


def noise_sum_interval(totals_steps, n: int, unit_steps: int, pmf_steps, scale_steps: float,
                       level: float) -> tuple[np.ndarray, np.ndarray] | None:
    """Exact intervals for ``theta_j`` from totals ``S_j = unit C_j + N_j`` (in lattice steps), with
    ``C_j ~ Binomial(n, theta_j)`` and ``N_j`` the sum of ``n`` iid integer noises: the set of
    ``theta`` in [0, 1] at which neither tail ``P_theta(S >= s)`` nor ``P_theta(S <= s)`` is below
    ``(1 - level) / 2`` (S increases stochastically in theta, so this is an interval; found by
    bisection).  Coverage is at least ``level`` at every ``theta`` and every n, as Clopper-Pearson's,
    up to the ~1e-12 error of the computed law.  None when n exceeds :data:`EXACT_NOISE_SUM_N` or
    ``(n + 1) d`` exceeds :data:`EXACT_NOISE_SUM_CELLS` (large n, where the normal interval holds)."""
    totals_steps = np.asarray(totals_steps, dtype=np.int64)
    shape = totals_steps.shape
    totals = totals_steps.ravel()
    if n > EXACT_NOISE_SUM_N or (n + 1) * totals.size > EXACT_NOISE_SUM_CELLS:
        return None
    start, cdf = noise_sum_cdf(pmf_steps, scale_steps, n)

    def below(x):  # P(N <= x)
        index = x - start
        return np.where(index < 0, 0.0, cdf[np.clip(index, 0, cdf.size - 1)])

    shift = totals[:, None] - unit_steps * np.arange(n + 1)[None, :]  # s - unit c
    at_most = below(shift)  # P(S <= s | C = c)
    at_least = 1.0 - below(shift - 1)  # P(S >= s | C = c)
    half_alpha = (1.0 - level) / 2

    def root(tail, increasing):
        """The theta in [0, 1] where ``sum_c pmf(c; theta) tail[c] = half_alpha`` (bisection)."""
        low, high = np.zeros(totals.size), np.ones(totals.size)
        for _ in range(60):
            middle = (low + high) / 2
            value = np.einsum("jc,jc->j", _binomial_pmf(n, middle), tail)
            up = (value < half_alpha) if increasing else (value >= half_alpha)
            low, high = np.where(up, middle, low), np.where(up, high, middle)
        return low, high

    lower = root(at_least, True)[1]  # the smallest theta whose upper tail reaches alpha / 2
    upper = root(at_most, False)[0]  # the largest theta whose lower tail reaches alpha / 2
    lower[at_least[:, 0] >= half_alpha] = 0.0  # theta = 0 itself is accepted (C = 0 surely)
    upper[at_most[:, -1] >= half_alpha] = 1.0  # theta = 1 itself is accepted (C = n surely)
    return lower.reshape(shape), upper.reshape(shape)


def one_hot_laplace_interval(noise, totals, n: int, level: float) -> tuple[np.ndarray, np.ndarray] | None:
    """Exact intervals for the frequencies behind sums ``totals`` of ``n`` one-hot reports plus lattice
    Laplace noise (``noise``: a one-level :class:`ldpest.privacy.noise.LatticeLaplace`; each total is
    ``C_j + g N_j``): :func:`noise_sum_interval` in lattice steps.  None beyond its size limit."""
    step = noise.step
    totals_steps = np.rint(np.asarray(totals, dtype=np.float64) / step).astype(np.int64)  # exact lattice sums
    scale_steps = math.sqrt(noise.variance / 2) / step
    return noise_sum_interval(totals_steps, n, round(1 / step), noise.law.pmf_array, scale_steps, level)
