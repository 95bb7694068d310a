"""Constants and exact sampler of the l-infinity sampling mechanism
(Duchi et al. strategy (20); MATH.md section 3, MATH-DERIVATIONS.md 4.2).

Given ``tau = phi(x)`` in ``[-B0, B0]^k``:

1. a vertex ``s`` in ``{-1, 1}^k`` with independent coordinates,
   ``P(s_j = 1) = 1/2 + tau_j / (2 B0)``, so ``E[B0 s] = tau``;
2. ``u`` from ``Q(u | s) = q(m) / Z_k`` where ``m`` is the Hamming distance of
   ``u`` and ``s`` (``<u, s> = k - 2m``), ``q(m) = e^a`` if ``<u, s> > 0`` and 1
   otherwise ("optimal" design: the seed's two half-cubes with the tie points
   on the ``<= 0`` side and the side probability corrected so that
   ``max q / min q = e^a`` exactly; for odd k there are no ties and this is the
   seed's rule ``T ~ Bernoulli(e^a / (e^a + 1))``);
3. release ``Z = B u`` with ``B = B0 / gamma_k``, ``E[u | s] = gamma_k s``, so
   ``E[Z | x] = tau`` exactly.  Closed form:
   ``B = B0 (kappa C_k - 1{k even})``, ``kappa = (e^a + 1) / (e^a - 1)``,
   ``C_k = 2^(k-1) / binom(k-1, ceil(k/2) - 1)``.

Privacy: ``Q(u | x)`` is a mixture over ``s`` of ``Q(u | s)``, whose ratio is
at most ``e^a`` (MATH-DERIVATIONS F3).  The sampler draws ``s`` and ``m`` with
53-bit uniforms, so the probabilities it implements differ from these exact
ones by at most 2^-53 each: the mean is ``phi(x)`` to about ``B 2^-52`` and
the likelihood ratio is ``e^a`` to a relative 2^-50 (the tests enumerate the
exact channel and check the sampler against it by chi-square).  Sampling is exact and vectorised (the
"Hamming sampler"): draw ``m`` from ``P(m) = binom(k, m) q(m) / Z_k``, then flip
a uniformly random m-subset of the coordinates of ``s``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln, logsumexp


def distance_law(k: int, epsilon: float) -> np.ndarray:
    """``P(m)``, m = 0..k: the law of the Hamming distance between u and s."""
    m = np.arange(k + 1)
    log_binomial = gammaln(k + 1) - gammaln(m + 1) - gammaln(k - m + 1)
    log_weight = log_binomial + np.where(k - 2 * m > 0, epsilon, 0.0)
    return np.exp(log_weight - logsumexp(log_weight))


def gamma(k: int, epsilon: float) -> float:
    """``E[u_j s_j]``: the contraction of the channel."""
    m = np.arange(k + 1)
    return float(np.sum(distance_law(k, epsilon) * (k - 2 * m)) / k)


def closed_form_scale(k: int, epsilon: float, b0: float) -> float:
    """``B = B0 (kappa C_k - 1{k even})`` (MATH-DERIVATIONS.md, boxed formula)."""
    kappa = 1.0 / math.tanh(epsilon / 2)
    log_c = (k - 1) * math.log(2) - (gammaln(k) - gammaln(math.ceil(k / 2)) - gammaln(k - math.ceil(k / 2) + 1))
    return b0 * (kappa * math.exp(log_c) - (1.0 if k % 2 == 0 else 0.0))


def sample(tau: np.ndarray, b0: float, epsilon: float, rng) -> np.ndarray:
    """Signs ``u`` (int8, shape of ``tau``) with ``E[B u | tau] = tau`` for ``B = B0 / gamma``."""
    n, k = tau.shape
    s = np.where(rng.random((n, k)) < 0.5 + tau / (2 * b0), 1, -1).astype(np.int8)
    cdf = np.cumsum(distance_law(k, epsilon))
    cdf[-1] = np.inf  # guard against rounding: every uniform lands somewhere
    m = np.searchsorted(cdf, rng.random(n), side="right")
    order = np.argsort(rng.random((n, k)), axis=1)  # a uniformly random permutation per report
    flip = np.empty((n, k), dtype=bool)
    np.put_along_axis(flip, order, np.arange(k)[None, :] < m[:, None], axis=1)
    s[flip] *= -1
    return s


def channel_matrix(k: int, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """All ``2^k`` sign vectors and the exact ``Q(u | s)`` for every vertex s (rows) and u (columns)."""
    points = 1 - 2 * ((np.arange(2 ** k)[:, None] >> np.arange(k)[None, :]) & 1)
    m = (points[:, None, :] != points[None, :, :]).sum(axis=2)
    law = distance_law(k, epsilon)
    log_binomial = gammaln(k + 1) - gammaln(m + 1) - gammaln(k - m + 1)
    return points.astype(np.int8), law[m] / np.exp(log_binomial)
