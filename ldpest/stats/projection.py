"""Projections applied to unbiased estimates (MATH.md section 1 and 2).

Both are named options recorded in the result's attrs; the unprojected
estimate is always kept beside the projected one.
"""

from __future__ import annotations

import numpy as np


def project_simplex(values, total: float = 1.0) -> np.ndarray:
    """Euclidean projection onto ``{theta >= 0, sum(theta) = total}`` along the last axis.

    Sort-based algorithm of MATH.md section 1: with ``u`` sorted descending and
    ``c`` its cumulative sums, ``rho = max{j : u_j - (c_j - total) / j > 0}``,
    ``tau = (c_rho - total) / rho`` and the projection is ``max(v - tau, 0)``.
    O(d log d); rows of at least ``_LARGEST_FROM`` values sort only their values above a guess of ``tau``
    (:func:`_by_largest`, the same result to the bit).  The simplex contains the true theta, so the projection never
    increases the Euclidean error.
    """
    v = np.asarray(values, dtype=np.float64)
    if total <= 0:
        raise ValueError("total must be positive")
    v = v - v.max(axis=-1, keepdims=True)  # the projection commutes with shifts; this keeps extremes exact
    return _in_row_blocks(v, lambda rows: _project_rows(rows, total))


_SIMPLEX_BLOCK = 1 << 17  # values per block of rows that project_simplex and affine_count_mle take at once (1 MiB:
# in cache; 60 rows of 10^5 values 99 -> 64 ms, 10^4 9.9 -> 5.8 ms, the same values to the bit)


def _in_row_blocks(values: np.ndarray, function) -> np.ndarray:
    """``function`` (of rows along the last axis) of ``values``, in blocks of about ``_SIMPLEX_BLOCK`` values."""
    if values.size <= _SIMPLEX_BLOCK:
        return function(values)
    rows = values.reshape(-1, values.shape[-1])
    out = np.empty_like(rows)
    block = max(1, _SIMPLEX_BLOCK // values.shape[-1])
    for start in range(0, rows.shape[0], block):
        out[start:start + block] = function(rows[start:start + block])
    return out.reshape(values.shape)


def _project_rows(v: np.ndarray, total: float) -> np.ndarray:
    """:func:`project_simplex` of the (shifted) rows of ``v``, in place, returned; one row (every result's
    estimate) by plain indexing (12 against 17 us on 3 values)."""
    if v.shape[-1] >= _LARGEST_FROM:
        for row in v.reshape(-1, v.shape[-1]):
            cumulative, rho = _by_largest(row, lambda u, share=1.0: _simplex_level(u, total * share),
                                          lambda solution: solution[0] / solution[1])
            row -= cumulative / rho
        return np.maximum(v, 0.0, out=v)
    u = np.sort(v, axis=-1)[..., ::-1]  # descending
    cumulative, rho = _simplex_level(u, total)
    v -= cumulative / rho
    return np.maximum(v, 0.0, out=v)


def _simplex_level(u: np.ndarray, total: float):
    """``(c_rho, rho)`` of MATH.md section 1 for rows ``u`` sorted descending (``tau = c_rho / rho``, with
    ``total`` taken off ``c``); ``[..., None]``-shaped for a batch of rows, scalars for one row."""
    cumulative = np.cumsum(u, axis=-1)
    cumulative -= total
    condition = np.divide(cumulative, np.arange(1, u.shape[-1] + 1))
    np.subtract(u, condition, out=condition)
    condition = condition > 0
    condition[..., 0] = True  # u_1 - (u_1 - total) = total > 0, whatever the rounding
    if u.ndim == 1:
        rho = u.shape[0] - int(np.argmax(condition[::-1]))  # the last index where it holds
        return cumulative[rho - 1], rho
    rho = u.shape[-1] - np.argmax(condition[..., ::-1], axis=-1)
    return np.take_along_axis(cumulative, (rho - 1)[..., None], axis=-1), rho[..., None]


_LARGEST_FROM = 1 << 13  # rows at least this long sort only their largest values (:func:`_by_largest`)
_SAMPLE_STRIDE = 64  # ... found from every 64th value ...
_SAMPLE_SHARE = 4.0  # ... solved for 4 times the sample's share of the total (more values than needed)
_GUESS_BELOW = 2.0 ** -20  # ... and taken a little lower


def _by_largest(row: np.ndarray, solve, level_of):
    """``solve(u)`` (of the values sorted descending) of a long ``row`` from its largest values only, to the
    bit; ``level_of(solution)`` is the value at or below which a value takes no part in it.

    The solution depends on the values above its level only, and those are a prefix of the sorted row, with
    the same cumulative sums.  So only the values above a guess ``g`` of the level are sorted; where the
    level they give is above ``g``, no other value can reach it and the solution is that of the whole row.
    The guess is the level of every ``_SAMPLE_STRIDE``-th value, solved for ``_SAMPLE_SHARE`` times their
    share of the total (``solve(u, share)``); where that is too high, the sample's own level (a lower bound of
    the row's, as any subset's is) and at last the whole row are sorted.  About O(d) where the level leaves
    few values above it."""
    sample = np.sort(row[::_SAMPLE_STRIDE])[::-1]
    for share in (_SAMPLE_SHARE / _SAMPLE_STRIDE, 1.0):
        guess = level_of(solve(sample, share))
        guess -= abs(guess) * _GUESS_BELOW  # a row value at the sample's level takes part where it does
        largest = row[row > guess]
        if largest.size:
            solution = solve(np.sort(largest)[::-1])
            if level_of(solution) > guess:
                return solution
    return solve(np.sort(row)[::-1])


def project_frequencies(theta, projection: str) -> np.ndarray:
    """A frequency estimate after ``projection``: ``"simplex"`` (:func:`project_simplex`),
    ``"positive"`` (clip at 0 and renormalise, :func:`project_positive`) or ``"none"``."""
    if projection == "simplex":
        return project_simplex(theta)
    return project_positive(theta) if projection == "positive" else np.asarray(theta, dtype=np.float64)


def project_positive(masses) -> np.ndarray:
    """Gyorfi-Kroll positive projection of cell masses: ``m+ / sum(m+)``, along the last axis.

    If no mass is positive the uniform vector is returned (MATH-DERIVATIONS.md
    section 5, a documented choice).  When the input sums to one this never
    increases the L1 error.
    """
    m = np.asarray(masses, dtype=np.float64)
    positive = np.maximum(m, 0.0)
    total = positive.sum(axis=-1, keepdims=True)
    return np.divide(positive, total, out=np.full_like(positive, 1.0 / m.shape[-1]), where=total > 0)


def affine_count_mle(counts, offset: float) -> np.ndarray:
    """The maximiser over the probability simplex of ``sum_j c_j log(offset + theta_j)`` (``offset > 0``):
    the maximum-likelihood frequencies from counts ``c_j ~ Multinomial(n, gap (offset + theta_j))``,
    as k-ary randomized response gives them (``offset = q / (p - q)``).

    The problem is concave and separable under one constraint, so its KKT conditions give it in
    closed form (docs/frequency-oracles.md): ``theta_j = max(0, t c_j - offset)`` with ``t`` the water level at
    which the sum is 1.  With ``c`` sorted descending and ``S_k`` its cumulative sums,
    ``t_k = (1 + k offset) / S_k`` and ``k`` the largest with ``c_k t_k > offset``.  O(d log d), long rows
    by their largest counts (:func:`_by_largest`); where every ``theta_j`` is positive it is the unbiased
    estimate.  Along the last axis of ``counts``."""
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim < 1 or np.any(c.sum(axis=-1) <= 0) or np.any(c < 0) or not offset > 0:
        raise ValueError("affine_count_mle needs non-negative counts with a positive total and offset > 0")
    return _in_row_blocks(c, lambda rows: _count_mle_rows(rows, offset))


def _count_mle_rows(c: np.ndarray, offset: float) -> np.ndarray:
    """:func:`affine_count_mle` of the rows of ``c``."""
    if c.shape[-1] >= _LARGEST_FROM:
        out = np.empty_like(c)
        for row, estimate in zip(c.reshape(-1, c.shape[-1]), out.reshape(-1, c.shape[-1]), strict=True):
            water, _ = _by_largest(row, lambda ordered, share=1.0: _water_level(ordered, offset / share),
                                   lambda solution: solution[1] / solution[0])
            np.multiply(row, water, out=estimate)
    else:
        out = _water_level(np.sort(c, axis=-1)[..., ::-1], offset)[0] * c
    out -= offset
    return np.maximum(out, 0.0, out=out)


def _water_level(ordered: np.ndarray, offset: float):
    """``(t, offset)``: the water level ``t`` of :func:`affine_count_mle` for counts sorted descending
    (``[..., None]``-shaped for a batch of rows, a scalar for one row); counts at or below ``offset / t`` are 0."""
    level = np.cumsum(ordered, axis=-1)
    with np.errstate(divide="ignore"):  # inf while the leading counts are 0
        np.divide(1 + np.arange(1, ordered.shape[-1] + 1) * offset, level, out=level)
    active = ordered * level > offset
    active[..., 0] = True  # the largest count is always positive: it carries the whole mass if alone
    top = ordered.shape[-1] - np.argmax(active[..., ::-1], axis=-1)  # the last k where the condition holds
    if ordered.ndim == 1:
        return level[top - 1], offset
    return np.take_along_axis(level, (top - 1)[..., None], axis=-1), offset


def ibu_fixed_point(unbiased, offset: float) -> np.ndarray:
    """The fixed point of the iterative Bayesian update (IBU, multi-freq-ldpy's ``IBU``) on support counts
    ``c_j`` with ``E c_j = n gap (offset + theta_j)``, from the unbiased estimate ``x = c / (n gap) - offset``:
    IBU with ``A = (p - q) I + q 1 1^T`` (``p`` on the diagonal, ``q`` off it) is EM for the multinomial
    likelihood ``sum_j c_j log((A theta)_j)``, which on the simplex is ``sum_j c_j log(offset + theta_j)`` up to
    a constant (``offset = q / (p - q)``), so its limit is
    :func:`affine_count_mle` of ``x + offset`` (docs/frequency-oracles.md, "Post-processings").  For
    randomized response the counts are multinomial and this is the MLE; for unary encodings, subset
    selection and local hashing it is a pseudo-likelihood estimate.  Uniform where every count is 0.  Along the
    last axis."""
    counts = np.maximum(np.asarray(unbiased, dtype=np.float64) + offset, 0.0)
    empty = counts.sum(axis=-1, keepdims=True) <= 0
    if not empty.any():
        return affine_count_mle(counts, offset)
    return np.where(empty, 1.0 / counts.shape[-1], affine_count_mle(np.where(empty, 1.0, counts), offset))


def shrink_to_uniform(unbiased, total_variance: float) -> tuple[np.ndarray, float]:
    """``(estimate, weight)``: the positive-part James-Stein shrinkage of the unbiased estimate ``x`` toward
    the uniform distribution ``u``, projected onto the simplex (docs/frequency-oracles.md, "The default
    estimate"): ``project_simplex(u + w (x - u))`` with ``w = max(0, 1 - tr(Sigma) / ||x - u||^2)``,
    ``tr(Sigma)`` the estimate's total variance.  ``w`` minimises Stein's risk estimate of
    ``u + w (x - u)`` at a fixed weight: it shrinks all the way where ``x`` is within its noise of uniform,
    and hardly at all where the data are far from it.  Along the last axis: ``weight`` is then an array."""
    x = np.asarray(unbiased, dtype=np.float64)
    away = x - 1.0 / x.shape[-1]
    spread = np.einsum("...j,...j->...", away, away)
    if total_variance <= 0:
        weights = np.ones_like(spread)
    else:  # no spread at all: nothing to keep
        weights = np.maximum(0.0, 1.0 - np.divide(total_variance, spread, out=np.full_like(spread, np.inf),
                                                  where=spread > 0))
    estimate = project_simplex(1.0 / x.shape[-1] + weights[..., None] * away)
    return estimate, (float(weights) if x.ndim == 1 else weights)
