"""The l-infinity sampling mechanism's exact law and sampler
(Duchi et al. strategy (20); MATH.md section 3, MATH-DERIVATIONS.md 4.2).

Given ``tau = phi(x)`` in ``[-B0, B0]^k``:

1. a vertex ``s`` in ``{-1, 1}^k`` with independent coordinates,
   ``P(s_j = 1) = 1/2 + tau_j / (2 B0)``, so ``E[B0 s] = tau``;
2. ``u`` in ``{-1, 1}^k`` from ``Q(u | s) = q(u, s) / Z_k``, with ``q = 1`` when
   ``<u, s> > 0`` and ``q = a = A / 2^64`` otherwise ("optimal" design: the
   seed's two half-cubes with the ties on the ``<= 0`` side; for odd k there
   are no ties and this is the seed's rule);
3. release ``Z = B u`` with ``B = B0 / gamma_k``, ``gamma_k = E[u_j s_j]``, so
   ``E[Z | x] = tau``.

Exactness.  Step 2 is drawn by rejection: ``u`` uniform (k fair bits of random
64-bit words), accepted at once when ``<u, s> > 0`` and otherwise when a fresh
word is below the integer ``A``; so the implemented ``Q(u | s)`` is exactly
``q(u, s) / Z_k`` and its likelihood ratio is exactly ``2^64 / A``, proven
``<= e^epsilon`` (:func:`acceptance_threshold`).  Acceptance is at least
about 1/2.  ``Q(u | x)`` is a mixture over ``s`` of ``Q(u | s)``, so its ratio
is at most that too, whatever the (float) law of step 1.  ``gamma_k`` and
``B`` come from the same exact law; for the ideal ``a = e^-epsilon``,
``B = B0 (kappa C_k - 1{k even})``, ``kappa = (e^a + 1) / (e^a - 1)``,
``C_k = 2^(k-1) / binom(k-1, ceil(k/2) - 1)`` (:func:`closed_form_scale`).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from ldpest.privacy.exact import (
    WORD,
    random_words,
    ratio_within,
    smallest_threshold,
    too_small,
)


@functools.lru_cache(maxsize=256)
def acceptance_threshold(epsilon: float) -> int:
    """The smallest ``A`` in ``[1, 2^64]`` with ``2^64 / A <= e^epsilon`` (proven)."""
    guess = WORD * math.exp(-min(epsilon, 700.0))
    if not ratio_within(WORD, WORD - 1, epsilon):  # not even A = 2^64 - 1: the far side is always accepted
        raise too_small(epsilon, "linf-sampling")
    return smallest_threshold(lambda a: ratio_within(WORD, a, epsilon), 1, WORD, guess=min(guess, WORD))


def _weights(k: int, epsilon: float) -> tuple[list[int], Fraction]:
    """``binom(k, m)`` and the acceptance ``a`` of the far side."""
    binomials = [math.comb(k, m) for m in range(k + 1)]
    return binomials, Fraction(acceptance_threshold(epsilon), WORD)


def distance_law(k: int, epsilon: float) -> list[Fraction]:
    """``P(m)``, m = 0..k, exactly: the law of the Hamming distance between u and s."""
    binomials, a = _weights(k, epsilon)
    weights = [b * (1 if k - 2 * m > 0 else a) for m, b in enumerate(binomials)]
    total = sum(weights)
    return [w / total for w in weights]


@functools.lru_cache(maxsize=256)
def gamma(k: int, epsilon: float) -> Fraction:
    """``E[u_j s_j]`` of the implemented law, exactly: the contraction of the channel."""
    return sum(p * (k - 2 * m) for m, p in enumerate(distance_law(k, epsilon))) / k


@functools.lru_cache(maxsize=256)
def smallest_covariance_eigenvalue(k: int, epsilon: float) -> float:
    """Lower bound on the eigenvalues of ``Cov(u)`` for any input, exactly from the law.

    ``Cov(u | s) = (1 - rho) I + (rho - gamma^2) s s^T`` with ``rho = E[u_i s_i u_j s_j]`` (i != j),
    so its eigenvalues are ``1 - rho`` (k - 1 times) and ``1 - rho + k (rho - gamma^2)``; mixing
    over s and x only adds covariance."""
    law = distance_law(k, epsilon)
    g = gamma(k, epsilon)
    if k == 1:
        return float(1 - g ** 2)
    rho = sum(p * ((k - 2 * m) ** 2 - k) for m, p in enumerate(law)) / (k * (k - 1))
    return float(min(1 - rho, 1 - rho + k * (rho - g ** 2)))


def closed_form_scale(k: int, epsilon: float, b0: float) -> float:
    """``B = B0 (kappa C_k - 1{k even})`` for the ideal design (MATH-DERIVATIONS.md, boxed formula)."""
    kappa = 1.0 / math.tanh(epsilon / 2)
    half = math.ceil(k / 2)
    log_c = (k - 1) * math.log(2) - (math.lgamma(k) - math.lgamma(half) - math.lgamma(k - half + 1))
    return b0 * (kappa * math.exp(log_c) - (1.0 if k % 2 == 0 else 0.0))


def _pack(bits: np.ndarray, words: int) -> np.ndarray:
    """(n, k) booleans -> (n, words) uint64, bit j of the row in bit j % 64 of word j // 64."""
    packed = np.packbits(bits, axis=1, bitorder="little")
    padded = np.zeros((bits.shape[0], 8 * words), dtype=np.uint8)
    padded[:, :packed.shape[1]] = packed
    return padded.view("<u8")


def sample(tau: np.ndarray, b0: float, epsilon: float, rng) -> np.ndarray:
    """Signs ``u`` (int8, shape of ``tau``) with ``E[B u | tau] = tau`` for ``B = B0 / gamma``."""
    n, k = tau.shape
    threshold = acceptance_threshold(epsilon)
    if threshold >= WORD:
        raise ValueError("epsilon is too small: the channel would be uniform")
    words = (k + 63) // 64
    top_mask = np.uint64((1 << (k - 64 * (words - 1))) - 1) if k % 64 else np.uint64(WORD - 1)
    vertex = _pack(rng.random((n, k)) < 0.5 + tau / (2 * b0), words)
    chosen = np.empty((n, words), dtype=np.uint64)
    pending = np.arange(n)
    while pending.size:
        u = random_words(rng, (pending.size, words))
        u[:, -1] &= top_mask
        distance = np.bitwise_count(u ^ vertex[pending]).sum(axis=1, dtype=np.int64)
        accept = (2 * distance < k) | (random_words(rng, pending.size) < np.uint64(threshold))
        chosen[pending[accept]] = u[accept]
        pending = pending[~accept]
    bits = np.unpackbits(chosen.view(np.uint8), axis=1, bitorder="little", count=k)
    return (2 * bits.astype(np.int8) - 1).astype(np.int8)


def channel_points(k: int) -> np.ndarray:
    """All ``2^k`` sign vectors, point ``i`` having ``-1`` where bit ``j`` of ``i`` is set."""
    return (1 - 2 * ((np.arange(2 ** k)[:, None] >> np.arange(k)[None, :]) & 1)).astype(np.int8)


def channel_levels(k: int, epsilon: float) -> tuple[np.ndarray, tuple[Fraction, Fraction], np.ndarray]:
    """The sign vectors and the exact implemented ``Q(u | s)`` in structured form: two levels
    (``<u, s> > 0``: near; otherwise far) and the level of every vertex s (rows) and output u."""
    points = channel_points(k)
    inner = points.astype(np.int64) @ points.T.astype(np.int64)
    binomials, a = _weights(k, epsilon)
    total = sum(b * (1 if k - 2 * m > 0 else a) for m, b in enumerate(binomials))
    return points, (Fraction(1) / total, a / total), np.where(inner > 0, 0, 1)


def channel_matrix(k: int, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """All ``2^k`` sign vectors and the exact implemented ``Q(u | s)`` (Fractions) for every
    vertex s (rows) and output u (columns): :func:`channel_levels` as a dense matrix."""
    points, levels, pattern = channel_levels(k, epsilon)
    return points, np.array(levels, dtype=object)[pattern]


def vertex_mixture(tau: np.ndarray, b0: float) -> np.ndarray:
    """The law of step 1 for one ``tau``: the probability of each vertex of :func:`channel_points`,
    ``prod_j (1/2 + s_j tau_j / (2 B0))``."""
    up = 0.5 + np.asarray(tau, dtype=np.float64) / (2 * b0)
    points = channel_points(len(up))
    return np.prod(np.where(points > 0, up, 1 - up), axis=1)
