"""Maximum-likelihood frequencies from counts of a finite channel, by accelerated EM with a certified
stopping rule (docs/frequency-oracles.md, "After the unbiased estimate")."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

MLE_GAP = 1e-3  # stop when the log-likelihood is provably this close to its maximum (an interval moves at 1.92)
MLE_MAX_ROUNDS = 20_000  # rounds of three EM steps


def channel_count_mle(counts, forward: Callable[[np.ndarray], np.ndarray],
                      adjoint: Callable[[np.ndarray], np.ndarray], d: int, *,
                      gap: float | None = None, max_rounds: int | None = None) -> tuple[np.ndarray, dict]:
    """The frequencies ``theta`` on the simplex that maximise ``l(theta) = sum_z c_z log P_theta(z)``, with
    ``P_theta = forward(theta)`` the law of one report (linear in theta) and ``adjoint(w)_x =
    sum_z w_z Q(z | x)`` its transpose.

    EM (iterative Bayesian update) is ``F(theta) = theta g`` with ``g = adjoint(c / P_theta) / n``; it is
    accelerated by SQUAREM (Varadhan and Roland 2008, scheme S3: two EM steps, an extrapolation
    along them, one EM step from there, kept only if the likelihood did not fall).  The
    log-likelihood is concave, ``grad l = n g`` and ``sum_x theta_x g_x = 1``, so the Frank-Wolfe gap
    ``n (max_x g_x - 1)`` bounds ``l(theta*) - l(theta)``: the iteration stops when it is at most
    ``gap`` (default :data:`MLE_GAP`), or after ``max_rounds`` (default :data:`MLE_MAX_ROUNDS`).
    Returns ``(theta, info)``: ``iterations`` (EM steps),
    ``likelihood_gap`` (the final bound) and ``converged``."""
    gap = MLE_GAP if gap is None else gap
    max_rounds = MLE_MAX_ROUNDS if max_rounds is None else max_rounds
    counts = np.asarray(counts, dtype=np.float64)
    n = counts.sum()
    used = counts > 0
    steps = 0

    def step(theta):
        """``(F(theta), l(theta), bound(theta))``."""
        nonlocal steps
        steps += 1
        probability = forward(theta)
        weights = np.zeros_like(counts)
        weights[used] = counts[used] / probability[used]
        g = adjoint(weights) / n
        mapped = theta * g
        return mapped / mapped.sum(), float(counts[used] @ np.log(probability[used])), n * (float(g.max()) - 1.0)

    theta = np.full(d, 1.0 / d)
    for _ in range(max_rounds):
        first, likelihood, bound = step(theta)
        if bound <= gap:
            break
        second, _, _ = step(first)
        r, v = first - theta, second - 2 * first + theta
        scale = min(-np.sqrt((r @ r) / (v @ v)), -1.0) if v @ v > 0 else -1.0
        # extrapolate; a frequency pushed below 0 keeps a share of its EM value (EM cannot revive a 0)
        candidate = np.maximum(theta - 2 * scale * r + scale * scale * v, 1e-3 * second)
        candidate /= candidate.sum()
        stabilised, candidate_likelihood, _ = step(candidate)
        theta = stabilised if candidate_likelihood >= likelihood else second
    else:
        _, _, bound = step(theta)  # the bound of the theta returned
    return theta, {"method": "EM accelerated by SQUAREM", "iterations": steps,
                   "likelihood_gap": max(float(bound), 0.0), "converged": bool(bound <= gap)}
