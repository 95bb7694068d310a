"""Stein's unbiased risk estimates of the projected frequency estimates (docs/frequency-oracles.md,
"The default estimate").

For ``x`` the unbiased estimate with covariance ``Sigma`` and ``g`` a weakly differentiable map,
Stein's identity gives, when ``x`` is normal,

    E ||g(x) - theta||^2 = E [ ||g(x) - x||^2 + 2 tr(Sigma J_g(x)) - tr(Sigma) ],

``J_g`` the Jacobian of ``g``.  The bracket (SURE) is computable from ``x`` alone; at a fixed ``Sigma`` it is
unbiased for Gaussian ``x`` and, with the central limit theorem, close to it for the counts of frequency
oracles.  ``Sigma`` enters only through its diagonal and one product ``Sigma 1_S``
(:class:`CovarianceOperator`), so every risk costs O(d) (plus the oracle's product).

Each map is piecewise smooth; on its support ``S`` (the categories it leaves positive, ``k = |S|``):

* simplex projection ``g = x - tau`` on ``S``: ``J = I - 1 1^T / k``, so
  ``tr(Sigma J) = sum_S Sigma_ii - 1_S^T Sigma 1_S / k``;
* clip and renormalise ``g = x / s`` on ``S = {x > 0}``, ``s = sum_S x``: ``J_ij = delta_ij / s - x_i / s^2``,
  so ``tr(Sigma J) = sum_S Sigma_ii / s - x_S^T (Sigma 1_S)_S / s^2`` (0 where nothing is positive: uniform);
* the closed-form MLE of randomized response (:func:`affine_mle_divergence`), and the same form for the
  fixed point of the iterative Bayesian update on support counts;
* James-Stein shrinkage toward the uniform distribution, then the simplex projection
  (:func:`shrink_divergence`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


class CovarianceOperator:
    """``Sigma``, the covariance of an unbiased frequency estimate, as ``diagonal`` (its variances) and
    ``Sigma @ v = diagonal * v + cross(v)``, ``cross`` an oracle's off-diagonal product
    (:meth:`ldpest.FrequencyOracle.frequency_cross_covariance`, divided by n); ``columns``: ``cross``
    multiplies each column of a matrix (``FrequencyOracle.cross_covariance_columns``); ``factors``: ``(V, S)``
    with ``cross`` the off-diagonal part of ``V S V^T`` (``FrequencyOracle.frequency_cross_covariance_factors``,
    ``S`` divided by n), or None."""

    def __init__(self, variance, cross: Callable[[np.ndarray], np.ndarray], *, columns: bool = False,
                 factors: tuple[np.ndarray, np.ndarray] | None = None):
        self.diagonal = np.asarray(variance, dtype=np.float64)
        self._cross = cross
        self._columns = columns
        self.factors = factors

    def __matmul__(self, vector) -> np.ndarray:
        vector = np.asarray(vector, dtype=np.float64)
        return self.diagonal * vector + self._cross(vector)

    def dense(self) -> np.ndarray:
        """``Sigma`` as a symmetric matrix: one product with the identity where ``cross`` takes matrices, else
        one product per unit vector."""
        units = np.eye(self.diagonal.size)
        matrix = self @ units if self._columns else np.column_stack([self @ unit for unit in units])
        return (matrix + matrix.T) / 2


def stein_risk(unbiased, estimate, variance, divergence: float) -> float:
    """``||g(x) - x||^2 + 2 tr(Sigma J) - tr(Sigma)``: Stein's unbiased estimate of ``E ||g(x) - theta||^2``."""
    difference = np.asarray(estimate, dtype=np.float64) - np.asarray(unbiased, dtype=np.float64)
    return float(difference @ difference + 2 * divergence - np.sum(variance))


def simplex_divergence(estimate, covariance: CovarianceOperator) -> float:
    """``tr(Sigma J)`` of the Euclidean projection onto the simplex at a point it maps to ``estimate``."""
    support = (np.asarray(estimate) > 0).astype(np.float64)
    inside = covariance @ support
    k = support.sum()
    return float(support @ covariance.diagonal - support @ inside / k)


def positive_divergence(unbiased, covariance: CovarianceOperator) -> float:
    """``tr(Sigma J)`` of clip-and-renormalise (``max(x, 0) / sum max(x, 0)``) at ``x``."""
    x = np.asarray(unbiased, dtype=np.float64)
    support = (x > 0).astype(np.float64)
    total = x @ support
    if total <= 0:
        return 0.0  # the uniform vector: a constant map
    inside = covariance @ support
    return float(support @ covariance.diagonal / total - (x * support) @ inside / total ** 2)


def shrink_divergence(unbiased, estimate, weight: float, total_variance: float,
                      covariance: CovarianceOperator) -> float:
    """``tr(Sigma J)`` of :func:`ldpest.stats.projection.shrink_to_uniform` at ``x`` (``estimate`` and ``weight``
    its output, ``total_variance`` the ``c = tr(Sigma)`` it used, held fixed).  With ``v = x - u`` and
    ``s = ||v||^2``, the shrinkage ``u + w v``, ``w = 1 - c / s`` has Jacobian ``w I + (2 c / s^2) v v^T``
    (0 where ``w = 0``), and the projection after it ``P = diag(1_S) - 1_S 1_S^T / k`` on its support, so
    ``tr(Sigma P J) = w tr(Sigma P) + (2 c / s^2) (Sigma v)^T P v``."""
    if weight <= 0:
        return 0.0  # the uniform vector: a constant map
    x = np.asarray(unbiased, dtype=np.float64)
    away = x - 1.0 / x.size
    spread = float(away @ away)
    support = (np.asarray(estimate) > 0).astype(np.float64)
    projected = support * away - support * (support @ away) / support.sum()
    slope = 2 * total_variance / spread ** 2 if total_variance > 0 else 0.0  # w's gradient is slope v
    return float(weight * simplex_divergence(estimate, covariance) + slope * (covariance @ away) @ projected)


def affine_mle_divergence(unbiased, mle, offset: float, covariance: CovarianceOperator) -> float:
    """``tr(Sigma J)`` of the maximum-likelihood frequencies ``max(0, t (x_j + r) - r)`` of counts
    ``Multinomial(n, gap (r + theta))`` (:func:`ldpest.stats.projection.affine_count_mle`, ``r = offset``), as
    a function of the unbiased estimate ``x``: on the support ``S`` (``k`` categories) ``t = (1 + k r) /
    (sum_S x + k r)`` and ``J_ij = t delta_ij - t^2 (x_i + r) / (1 + k r)``."""
    x = np.asarray(unbiased, dtype=np.float64)
    support = (np.asarray(mle) > 0).astype(np.float64)
    k = support.sum()
    level = x @ support + k * offset  # the counts' total on S: 0 where every count is 0
    if level <= 0:
        return 0.0  # no count at all: the uniform vector (ibu_fixed_point), a constant map
    t = (1 + k * offset) / level
    inside = covariance @ support
    return float(t * (support @ covariance.diagonal)
                 - t * t / (1 + k * offset) * ((x + offset) * support) @ inside)


def plug_in_risks(truth, estimates: dict[str, np.ndarray]) -> dict[str, float]:
    """The mean squared error ``E ||g_k - truth||^2`` of every candidate ``k`` at ``truth`` (the parametric
    bootstrap), from ``estimates[k]``: its estimates from simulated statistics at ``truth``, one per row."""
    return {name: float(np.square(np.asarray(found) - truth).sum(axis=-1).mean()) for name, found in estimates.items()}


def gaussian_sampler(covariance: CovarianceOperator) -> Callable[[np.ndarray, np.random.Generator, int], np.ndarray]:
    """``sample(mean, rng, draws)``: ``draws`` normal vectors (rows) with ``covariance``, ``mean + z L^T`` for
    any factor ``L L^T = Sigma``.  Cholesky's where ``Sigma`` is positive definite, or where its only null
    direction is ``1`` (the estimate's sum is fixed, as with subset selection): then ``L`` factors ``Sigma +
    s 1 1^T / d`` and each draw loses its component along ``1``, which leaves ``P (Sigma + s 1 1^T / d) P =
    Sigma``.  Otherwise (singular elsewhere, or rounding) by the eigenvalues, negative rounding clipped to 0.
    (With Cholesky and the one-call covariance, subset selection's ``auto`` at d = 1000 went from 168 to
    62 ms: bench/bench_fixed_cost.py.)  Where the covariance declares low-rank ``factors``, by
    :func:`low_rank_root` instead, in O(d r) per draw."""
    found = low_rank_root(covariance)
    if found is not None:
        scale, basis, stretch = found

        def sample_low_rank(mean, rng, draws):
            noise = rng.standard_normal((draws, scale.size))
            noise += ((noise @ basis) * stretch) @ basis.T
            return mean + noise * scale
        return sample_low_rank
    matrix = covariance.dense()
    size = matrix.shape[0]
    scale = float(np.abs(matrix).max(initial=0.0))
    fixed_sum = np.abs(matrix.sum(axis=1)).max(initial=0.0) <= 1e-12 * scale * size
    try:
        root = np.linalg.cholesky(matrix + scale / size if fixed_sum else matrix)
    except np.linalg.LinAlgError:
        values, vectors = np.linalg.eigh(matrix)
        root, fixed_sum = vectors * np.sqrt(np.maximum(values, 0.0)), False

    def sample(mean, rng, draws):
        noise = rng.standard_normal((draws, size)) @ root.T
        if fixed_sum:
            noise -= noise.mean(axis=1, keepdims=True)
        return mean + noise
    return sample


ROOT_PROBES = 2  # random vectors on which low_rank_root's R R^T is compared with Sigma ...
ROOT_TOLERANCE = 1e-9  # ... relative to the largest entry of Sigma v


def low_rank_root(covariance: CovarianceOperator) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(scale, basis, stretch)`` with ``R = diag(scale) (I + basis diag(stretch) basis^T)`` a square root
    of ``Sigma`` (``R R^T = Sigma``), where the covariance declares ``factors`` ``(V, S)``: ``Sigma = D + V S
    V^T`` with ``D`` the diagonal less that of ``V S V^T``.  Where ``D > 0``, ``Sigma = D^(1/2) (I + W S W^T)
    D^(1/2)`` with ``W = D^(-1/2) V = Q T`` (QR) and ``T S T^T = E diag(lambda) E^T``; the symmetric root of
    ``I + Q E diag(lambda) E^T Q^T`` is ``I + Q E diag(sqrt(1 + lambda) - 1) E^T Q^T`` (``1 + lambda >= 0``
    as ``Sigma`` is a covariance; rounding below 0 is clipped).  None without factors, where ``D`` is not
    positive, or where ``R R^T`` misses ``Sigma`` on ``ROOT_PROBES`` random vectors by more than
    ``ROOT_TOLERANCE`` (``D`` cancels to a few units in the last place where a category has no variance to
    speak of: subset selection at epsilon 30 and a corner truth)."""
    if covariance.factors is None:
        return None
    vectors, core = (np.asarray(part, dtype=np.float64) for part in covariance.factors)
    rest = covariance.diagonal - np.einsum("ir,rs,is->i", vectors, core, vectors)
    if not np.all(rest > 0):
        return None
    scale = np.sqrt(rest)
    q, t = np.linalg.qr(vectors / scale[:, None])
    values, turn = np.linalg.eigh(t @ core @ t.T)
    basis, stretch = q @ turn, np.sqrt(np.maximum(1.0 + values, 0.0)) - 1.0

    def stretched(columns):  # (I + B diag(F) B^T) columns
        return columns + basis @ (stretch[:, None] * (basis.T @ columns))
    probes = np.random.default_rng(0).standard_normal((scale.size, ROOT_PROBES))
    squared = stretched(stretched(probes * scale[:, None])) * scale[:, None]  # R R^T v, R^T = (I + B F B^T) D^(1/2)
    wanted = np.column_stack([covariance @ probe for probe in probes.T])
    if np.abs(squared - wanted).max() > ROOT_TOLERANCE * np.abs(wanted).max():
        return None
    return scale, basis, stretch


def estimate_seed(unbiased, n: int) -> int:
    """A seed that is a function of the statistics alone (through their unbiased estimate and count),
    so that a bootstrap choice is reproducible, and the same for streamed and one-shot estimates."""
    import hashlib

    digest = hashlib.blake2b(np.ascontiguousarray(unbiased, dtype=np.float64).tobytes(), digest_size=8)
    digest.update(int(n).to_bytes(8, "little"))
    return int.from_bytes(digest.digest(), "little")
