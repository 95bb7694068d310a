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
    (:meth:`ldpest.FrequencyOracle.frequency_cross_covariance`, divided by n)."""

    def __init__(self, variance, cross: Callable[[np.ndarray], np.ndarray]):
        self.diagonal = np.asarray(variance, dtype=np.float64)
        self._cross = cross

    def __matmul__(self, vector) -> np.ndarray:
        vector = np.asarray(vector, dtype=np.float64)
        return self.diagonal * vector + self._cross(vector)


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


def plug_in_risks(truth, draw: Callable[[np.ndarray, np.random.Generator], dict[str, np.ndarray]], draws: int,
                  rng: np.random.Generator) -> dict[str, float]:
    """The mean squared error ``E ||g_k - truth||^2`` of every candidate over ``draws`` simulations at
    ``truth`` (the parametric bootstrap): ``draw(truth, rng)`` returns the candidates' estimates from
    one simulated set of statistics."""
    totals: dict[str, float] = {}
    for _ in range(draws):
        for name, estimate in draw(truth, rng).items():
            difference = estimate - truth
            totals[name] = totals.get(name, 0.0) + float(difference @ difference)
    return {name: total / draws for name, total in totals.items()}


def gaussian_sampler(covariance: CovarianceOperator, size: int) -> Callable[[np.ndarray, np.random.Generator],
                                                                               np.ndarray]:
    """``sample(mean, rng)``: a normal vector with ``covariance`` (formed densely from ``size`` products and
    factored once by its eigenvalues, negative rounding clipped to 0)."""
    dense = np.column_stack([covariance @ unit for unit in np.eye(size)])
    values, vectors = np.linalg.eigh((dense + dense.T) / 2)
    root = vectors * np.sqrt(np.maximum(values, 0.0))
    return lambda mean, rng: mean + root @ rng.standard_normal(size)


def estimate_seed(unbiased, n: int) -> int:
    """A seed that is a function of the statistics alone (through their unbiased estimate and count),
    so that a bootstrap choice is reproducible, and the same for streamed and one-shot estimates."""
    import hashlib

    digest = hashlib.blake2b(np.ascontiguousarray(unbiased, dtype=np.float64).tobytes(), digest_size=8)
    digest.update(int(n).to_bytes(8, "little"))
    return int.from_bytes(digest.digest(), "little")
