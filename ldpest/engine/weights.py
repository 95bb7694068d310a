"""Frequencies from reports of a weighted sample: design weights (survey weights, inverse inclusion
probabilities), docs/frequency-oracles.md "Survey weights".

For a frequency oracle whose report i *supports* category j or not (``s_ij`` in {0, 1}:
randomized response, unary encodings, subset selection, local hashing) with
``P(s_ij = 1) = q + g 1{x_i = j}``, ``u_ij = (s_ij - q) / g`` is an unbiased estimate of
``1{x_i = j}``.  The Hajek (ratio) estimate of the population frequency is

    theta_j = sum_i w_i u_ij / W,   W = sum_i w_i,

and its linearization variance, treating the sample as drawn with replacement in one stratum
(the standard design-based estimator, which holds the privacy noise as well as the sampling):

    v_j = n / (n - 1) sum_i w_i^2 (u_ij - theta_j)^2 / W^2
        = n / (n - 1) [B_j ((1 - q) / g - theta_j)^2 + (W_2 - B_j) (q / g + theta_j)^2] / W^2,

with ``B_j = sum_i w_i^2 s_ij`` and ``W_2 = sum_i w_i^2``: a sum of non-negative terms (no
cancellation).  It is never below the privacy noise alone, ``W_2 min(p (1 - p), q (1 - q)) /
(g W)^2``, which bounds it from below where few reports make it 0 (every report alike).  With
every weight 1, ``theta_j`` is the unweighted estimate and ``v_j = pi_j (1 - pi_j) / ((n - 1) g^2)``
at the observed ``pi_j``.
"""

from __future__ import annotations

import numpy as np

from ..contract.base import Mechanism
from ..contract.results import EstimateParts, build_dataset
from ..stats.projection import project_frequencies
from ..util.errors import DataError, ParameterError

METHOD = "Hajek estimate with design weights; linearization variance (with replacement, one stratum)"


def check_weights(weights, n: int) -> np.ndarray:
    """Design weights: ``n`` finite numbers >= 0, not all 0."""
    try:
        weights = np.asarray(weights, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise DataError("weights must be numbers, one per report") from None
    if weights.shape[0] != n:
        raise DataError(f"weights has {weights.shape[0]} value(s) for {n} reports")
    bad = ~np.isfinite(weights) | (weights < 0)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise DataError(f"weights must be finite and >= 0; {int(bad.sum())} are not", row=first)
    if not weights.sum() > 0:
        raise DataError("weights sum to 0: no report carries weight")
    return weights


def estimate_weighted(reports, weights, *, projection: str = "auto"):
    """The Hajek frequency estimate of reports ``reports`` with design ``weights`` (module docstring),
    as ldpest's result Dataset (``probability``, ``unprojected``, ``stderr``; attrs ``weights``)."""
    from ..contract.registry import estimator as registered_estimator

    mechanism: Mechanism = reports.mechanism
    if not hasattr(mechanism, "weighted_support") or not hasattr(mechanism, "binomial_model"):
        raise ParameterError(f"weights: mechanism {mechanism.name!r} has no per-report support to weight; design "
                             "weights work with randomized-response, unary-randomized-response, subset-selection "
                             "and local-hashing")
    if projection not in ("auto", "simplex", "positive", "none"):
        raise ParameterError(f"projection must be auto, simplex, positive or none, got {projection!r}")
    rule = {}
    if projection == "auto":  # the choice by estimated risk simulates unweighted statistics
        projection, rule = "simplex", {"projection_rule": "auto: simplex, the only candidate for design weights"}
    values = reports.values
    n = int(np.shape(values)[0])
    if n < 2:
        raise DataError("a weighted estimate needs at least 2 reports (its variance is estimated from them)")
    weights = check_weights(weights, n)
    offset, gap = mechanism.binomial_model()
    total, squares = float(weights.sum()), float(np.sum(weights * weights))
    weighted, weighted_squares = mechanism.weighted_support(values, weights)
    theta = (weighted / total - offset) / gap
    spread = (weighted_squares * ((1 - offset) / gap - theta) ** 2
              + np.maximum(squares - weighted_squares, 0.0) * (offset / gap + theta) ** 2)
    variance = n / (n - 1) * spread / total ** 2
    top = getattr(mechanism, "binomial_top_complement", lambda: None)()
    miss = 1 - (offset + gap) if top is None else top  # 1 - p, exact where p rounds to 1
    noise = min(miss * (1 - miss), offset * (1 - offset))
    variance = np.maximum(variance, squares * noise / (gap * total) ** 2)
    estimator = registered_estimator("frequency", projection=projection)
    parts = EstimateParts(
        variable="probability",
        estimate=project_frequencies(theta, projection),
        stderr=np.sqrt(variance),
        dims=("category",),
        coords={"category": mechanism.category_coordinate},
        projection=projection,
        unprojected=theta,
        stderr_method="linearization (design weights)",
        attrs={"weights": METHOD, "weight_sum": total, "effective_n": total ** 2 / squares, **rule},
    )
    return build_dataset(parts, mechanism=mechanism, estimator=estimator, n=n)
