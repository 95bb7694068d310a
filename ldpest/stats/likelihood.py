"""Maximum-likelihood frequencies from counts of a finite channel, by accelerated EM with a certified
stopping rule (docs/frequency-oracles.md, "After the unbiased estimate")."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .projection import project_simplex

MLE_GAP = 1e-3  # stop when the log-likelihood is provably this close to its maximum (an interval moves at 1.92)
MLE_MAX_ROUNDS = 20_000  # rounds of three EM steps


def channel_count_mle(counts, forward: Callable[[np.ndarray], np.ndarray],
                      adjoint: Callable[[np.ndarray], np.ndarray], d: int, *,
                      curvature: Callable[[np.ndarray], np.ndarray] | None = None, start=None,
                      gap: float | None = None, max_rounds: int | None = None) -> tuple[np.ndarray, dict]:
    """The frequencies ``theta`` on the simplex that maximise ``l(theta) = sum_z c_z log P_theta(z)``, with
    ``P_theta = forward(theta)`` the law of one report (linear in theta) and ``adjoint(w)_x =
    sum_z w_z Q(z | x)`` its transpose.

    ``grad l = adjoint(c / P_theta)`` and ``theta . grad l = n``; the log-likelihood is concave, so the
    Frank-Wolfe gap ``max_x grad_x l - n`` bounds ``l(theta*) - l(theta)``: the iteration stops when it is at
    most ``gap`` (default :data:`MLE_GAP`).

    * With ``curvature`` (``curvature(w)_xy = sum_z w_z Q(z | x) Q(z | y)``, so that ``-curvature(c /
      P_theta^2)`` is the Hessian of ``l``): projected Newton from ``start`` (default uniform). Each step
      maximises the second-order model of ``l`` over the simplex exactly (:func:`simplex_qp_active`) and
      halves the step until the likelihood rises (or stays within 1e-12 of itself, the sum's rounding); at
      most :data:`MLE_MAX_NEWTON` steps. A step that cannot raise it, or a singular model (rounding where
      the curvature is ill-conditioned), hands the iterate over to EM.
    * Else EM (the iterative Bayesian update ``F(theta) = theta g``, ``g = adjoint(c / P_theta) / n``),
      accelerated by SQUAREM (Varadhan and Roland 2008, scheme S3: two EM steps, an extrapolation along
      them, one EM step from there, kept only if the likelihood did not fall), for at most ``max_rounds``
      rounds (default :data:`MLE_MAX_ROUNDS`).

    Returns ``(theta, info)``: ``method``, ``iterations`` (Newton plus EM steps), ``likelihood_gap`` (the
    final bound) and ``converged``."""
    gap = MLE_GAP if gap is None else gap
    counts = np.asarray(counts, dtype=np.float64)
    theta = np.full(d, 1.0 / d) if start is None else np.asarray(start, dtype=np.float64)
    if curvature is None:
        theta, steps, bound = _em_count_mle(counts, forward, adjoint, theta, gap, max_rounds)
        method = EM_METHOD
    else:
        rows, newton, bounds, stalled = _newton_rows(counts[None], _on_rows(forward), _on_rows(adjoint),
                                                     _on_rows(curvature), theta[None], gap)
        theta, steps, bound, method = rows[0], int(newton[0]), bounds[0], NEWTON_METHOD
        if stalled[0]:
            theta, em_steps, bound = _em_count_mle(counts, forward, adjoint, theta, gap, max_rounds)
            steps, method = steps + em_steps, f"{method}, then {EM_METHOD}"
    return theta, {"method": method, "iterations": steps,
                   "likelihood_gap": max(float(bound), 0.0), "converged": bool(bound <= gap)}


def _count_gradient(counts, used, probability, adjoint) -> np.ndarray:
    """``grad l = adjoint(c / P)`` (0 weight where no report fell)."""
    weights = np.zeros_like(counts)
    weights[used] = counts[used] / probability[used]
    return adjoint(weights)


def _em_count_mle(counts, forward, adjoint, theta, gap: float, max_rounds: int | None):
    """SQUAREM-accelerated EM from ``theta``: ``(theta, EM steps, Frank-Wolfe gap)``."""
    max_rounds = MLE_MAX_ROUNDS if max_rounds is None else max_rounds
    n = counts.sum()
    used = counts > 0
    steps = 0

    def step(theta):
        """``(F(theta), l(theta), bound(theta))``."""
        nonlocal steps
        steps += 1
        probability = forward(theta)
        g = _count_gradient(counts, used, probability, adjoint) / n
        mapped = theta * g
        return mapped / mapped.sum(), float(counts[used] @ np.log(probability[used])), n * (float(g.max()) - 1.0)

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
    return theta, steps, bound


NEWTON_METHOD = "projected Newton with the exact curvature"
EM_METHOD = "EM accelerated by SQUAREM"
MLE_MAX_NEWTON = 100  # Newton steps of channel_count_mle (measured: 2-4 from the projected unbiased estimate)
NEWTON_HALVINGS = 40  # a step shortened this often without raising the likelihood hands over to EM


SUPPORT_SOLVE_CATEGORIES = 64  # below, every row's model is first solved on its support in one batched call


def _qp_on_supports(curvature, gradient, theta) -> tuple[np.ndarray, np.ndarray]:
    """``(z, settled)``: each row's model (:func:`simplex_qp_active`) maximised with ``z`` 0 off the row's
    support and ``sum z = 1``, in one batched solve of the full bordered systems (the coordinates off the
    support held at 0 by identity rows), and whether that is the row's maximiser over the simplex (feasible,
    and no zero coordinate's slope above the level): the first round of :func:`simplex_qp_active` for every
    row at once.  Only up to ``SUPPORT_SOLVE_CATEGORIES`` (d^3 per row, against the support's k^3 row by row:
    at d = 100 the batched solve was 2-8x slower); above, no row is settled."""
    count, d = theta.shape
    z = np.array(theta, dtype=np.float64)
    if d > SUPPORT_SOLVE_CATEGORIES:
        return z, np.zeros(count, dtype=bool)
    free = z > 0
    target = gradient + np.einsum("kij,kj->ki", curvature, z)
    system = np.zeros((count, d + 1, d + 1))
    system[:, :d, :d] = curvature * free[:, :, None] * free[:, None, :]
    system[:, np.arange(d), np.arange(d)] += ~free
    system[:, :d, d] = system[:, d, :d] = free
    right = np.concatenate([target * free, np.ones((count, 1))], axis=1)
    try:
        solution = np.linalg.solve(system, right[..., None])[..., 0]
    except np.linalg.LinAlgError:
        return z, np.zeros(count, dtype=bool)
    y, level = solution[:, :d] * free, solution[:, d]
    slope = target - np.einsum("kij,kj->ki", curvature, y)
    tolerance = 1e-12 * np.maximum(np.abs(target).max(axis=1), 1e-300)
    settled = np.all(y >= 0, axis=1) & ~np.any(~free & (slope > (level + tolerance)[:, None]), axis=1)
    settled &= np.all(np.isfinite(y), axis=1)
    z[settled] = y[settled]
    return z, settled


def simplex_qp_active(curvature: np.ndarray, gradient: np.ndarray, theta, *,
                      max_iterations: int | None = None) -> np.ndarray:
    """The maximiser over the simplex of the model ``gradient . (z - theta) - (z - theta)^T curvature
    (z - theta) / 2`` (``curvature`` positive definite on ``{sum z = 0}``) by a primal active-set method.
    On the free set ``W`` (at first ``theta``'s support) the model's maximiser with ``z = 0`` off ``W`` and
    ``sum z = 1`` solves one bordered linear system. Where that solution is below 0 somewhere, those
    coordinates leave ``W`` together (again while the solution without them is below 0 somewhere) if that
    ends at a solution no worse than the current point; otherwise the current point moves toward the
    solution up to the first coordinate that reaches 0, which leaves ``W`` (the textbook step, which always
    gains). A feasible solution is optimal unless some ``z_j = 0`` has a slope above the multiplier; those
    join ``W`` (all of them, or only the steepest where they would all block the next step at once). Exact
    up to rounding whatever the conditioning, where :func:`simplex_qp`'s gradient steps are slow (Hadamard
    response with several blocks: condition
    number 145-1934 on the simplex at d = 100-1000, epsilon 2)."""
    theta = np.asarray(theta, dtype=np.float64)
    d = theta.size
    target = gradient + curvature @ theta  # the model is target . z - z^T curvature z / 2 + constant

    def value(point):
        return float(target @ point - point @ (curvature @ point) / 2)

    def solve(index):
        k = index.size
        system = np.empty((k + 1, k + 1))
        system[:k, :k] = curvature[index[:, None], index]
        system[:k, k] = system[k, :k] = 1.0
        system[k, k] = 0.0
        right = np.empty(k + 1)
        right[:k], right[k] = target[index], 1.0
        solution = np.linalg.solve(system, right)
        return solution[:k], solution[k]

    tolerance = 1e-12 * max(float(np.abs(target).max()), 1e-300)
    z = theta.copy()
    free = z > 0
    joined = np.zeros(d, dtype=bool)
    steepest = -1
    for _ in range(4 * d + 20 if max_iterations is None else max_iterations):
        index = np.flatnonzero(free)
        y, level = solve(index)
        below = y < 0
        if below.any():
            kept, y_kept = index, y
            while kept.size and np.any(y_kept < 0):  # drop the negatives until the solution is feasible
                kept = kept[y_kept >= 0]
                if kept.size:
                    y_kept, level_kept = solve(kept)
            feasible = False
            if kept.size:
                candidate = np.zeros(d)
                candidate[kept] = y_kept
                feasible = value(candidate) >= value(z)
            if not feasible:
                direction = y - z[index]
                shares = z[index][below] / -direction[below]
                t = float(shares.min())
                if t <= 0 and joined[index[below]].any() and joined.sum() > 1:
                    # the coordinates that just joined block at once: let only the steepest of them in
                    free &= ~joined | (np.arange(d) == steepest)
                    joined[:] = False
                    continue
                z[index] = np.maximum(z[index] + t * direction, 0.0)
                z[index[below][shares <= t]] = 0.0
                free = z > 0
                joined[:] = False
                continue
            index, y, level = kept, y_kept, level_kept
            free = np.zeros(d, dtype=bool)
            free[kept] = True
        z[:] = 0.0
        z[index] = y
        slope = target - curvature @ z
        outside = ~free & (slope > level + tolerance)
        if not outside.any():
            break
        steepest = int(np.flatnonzero(outside)[np.argmax(slope[outside])])
        joined = outside
        free = free | outside
    return z


def channel_count_mle_rows(counts, forward, adjoint, curvature, start, *,
                           gap: float | None = None) -> tuple[np.ndarray, dict]:
    """:func:`channel_count_mle` with ``curvature`` for many histograms at once (rows of ``counts``, starts in
    the rows of ``start``; ``forward``, ``adjoint`` and ``curvature`` take rows): the same projected Newton
    (:func:`_newton_rows`), and EM row by row for a row whose step cannot raise its likelihood or whose model
    is singular.  ``info``: the method, the most steps of a row, the largest gap and whether every row
    converged."""
    gap = MLE_GAP if gap is None else gap
    counts = np.asarray(counts, dtype=np.float64)
    theta, steps, bound, stalled = _newton_rows(counts, forward, adjoint, curvature, start, gap)
    method = NEWTON_METHOD
    if stalled.any():
        method = f"{method}, then {EM_METHOD}"
    for row in np.flatnonzero(stalled):
        theta[row], em_steps, bound[row] = _em_count_mle(counts[row], lambda t: forward(t[None])[0],
                                                         lambda w: adjoint(w[None])[0], theta[row], gap, None)
        steps[row] += em_steps
    largest = max(float(np.max(bound, initial=0.0)), 0.0)
    return theta, {"method": method, "iterations": int(steps.max(initial=0)),
                   "likelihood_gap": largest, "converged": bool(largest <= gap)}


def _on_rows(function: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """``function`` of one vector applied to each row of an array."""
    return lambda rows: np.stack([function(row) for row in rows])


def _newton_rows(counts, forward, adjoint, curvature, start, gap: float):
    """Projected Newton (:func:`channel_count_mle`) on each row of ``counts`` from the rows of ``start``, with
    every row's law, gradient, curvature and line search computed together (``forward``, ``adjoint`` and
    ``curvature`` take rows) and each row's model maximised over the simplex by :func:`_qp_on_supports`, then
    :func:`simplex_qp_active` for the rows it leaves (systems the size of the row's support; one batched
    solve of every row's full system was 2-8x slower at d = 100).  Returns ``(theta, steps, Frank-Wolfe gap,
    stalled)`` by row; a stalled row's step could not raise its likelihood, or its model was singular."""
    theta = np.array(start, dtype=np.float64)
    used = counts > 0
    safe = np.where(used, counts, 0.0)

    def value(rows, points):
        probability = forward(points)
        return np.sum(safe[rows] * np.log(np.where(used[rows], probability, 1.0)), axis=-1), probability

    likelihood, probability = value(np.arange(len(theta)), theta)
    steps = np.zeros(len(theta), dtype=np.int64)
    bound = np.full(len(theta), np.inf)
    stalled = np.zeros(len(theta), dtype=bool)
    for _ in range(MLE_MAX_NEWTON + 1):
        gradient = adjoint(np.where(used, safe / probability, 0.0))
        bound = gradient.max(axis=-1) - np.einsum("ij,ij->i", theta, gradient)
        going = np.flatnonzero((bound > gap) & ~stalled & (steps < MLE_MAX_NEWTON))
        if not going.size:
            break
        model = curvature(np.where(used[going], safe[going] / probability[going] ** 2, 0.0))
        # a ridge of 1e-9 of the largest entry: few reports leave the curvature singular (the maximum is then
        # not unique), and the stopping rule, not the model, certifies the result
        ridge = 1e-9 * np.abs(model).max(axis=(1, 2))
        model[:, np.arange(model.shape[1]), np.arange(model.shape[1])] += ridge[:, None]
        target, settled = _qp_on_supports(model, gradient[going], theta[going])
        singular = np.zeros(going.size, dtype=bool)
        for at in np.flatnonzero(~settled):
            try:
                target[at] = simplex_qp_active(model[at], gradient[going[at]], theta[going[at]])
            except np.linalg.LinAlgError:
                singular[at] = True
        stalled[going[singular]] = True
        going, target = going[~singular], target[~singular]
        direction = target - theta[going]
        rounding = 1e-12 * (np.abs(likelihood[going]) + 1.0)  # the sum's rounding: a step too small to see
        waiting = np.arange(going.size)
        for _ in range(NEWTON_HALVINGS):
            following_likelihood, following_probability = value(going[waiting],
                                                                theta[going[waiting]] + direction[waiting])
            accepted = following_likelihood >= likelihood[going[waiting]] - rounding[waiting]
            rows = going[waiting[accepted]]
            theta[rows] += direction[waiting[accepted]]
            likelihood[rows], probability[rows] = following_likelihood[accepted], following_probability[accepted]
            steps[rows] += 1
            waiting = waiting[~accepted]
            if not waiting.size:
                break
            direction[waiting] /= 2
        stalled[going[waiting]] = True
    return theta, steps, bound, stalled


# -- the likelihood of reports whose likelihood is two-valued over the inputs (docs/frequency-oracles.md,
# -- "The maximum-likelihood estimate from the reports")
SUPPORT_BLOCK_CELLS = 1 << 17  # report cells converted to float32 at a time (512 KiB: stays in cache)
SUPPORT_BLOCK_ROWS = 1 << 12  # ... and at most this many reports, so that every block sum below is exact
SUPPORT_GROUP_BLOCKS = 8  # blocks kept as floats while their reports' weights are made in one step (4 MiB; 16 was
# no faster at d = 1000, 32 twice as slow: docs/benchmarks.md, "The maximum-likelihood estimate from the reports")
THETA_BITS = 40  # the iterate's frequencies are multiples of 2^-40: theta(S_i) is then exact in any order
UNIT_BITS = 30  # per-report terms keep 30 significant bits (a relative change below 1e-9), summed exactly
# ... as integers split into limbs of 24 - log2(block rows) bits (12 at d <= 32, 16 at d = 1000: _limb_bits), so that
# a block's float32 sum of limbs is exact
THETA_LIMB_BITS = 10  # the iterate's units in 10-bit limbs: theta(S_i) is a float32 sum of at most 2^11 of them
LOG_ROWS = 1 << 22  # per-report log T_i (below 2^40 units) summed as int64 this many at a time
SUPPORT_MAX_RATIO = 2.0 ** 400  # beyond, the squared weights' units leave float64


def lattice_frequencies(theta) -> np.ndarray:
    """``theta`` (non-negative, summing to 1) rounded to multiples of ``2^-THETA_BITS`` that sum to exactly 1
    (the largest frequency takes the rounding's remainder)."""
    scale = float(2 ** THETA_BITS)
    units = np.rint(np.maximum(np.asarray(theta, dtype=np.float64), 0.0) / np.sum(theta) * scale)
    units[int(np.argmax(units))] += scale - units.sum()
    return units / scale


def _weight_bits(ratio: float, power: int) -> int:
    """``w^power`` with ``w = 1 / T_i >= 1 / ratio`` is kept in units of ``2^-bits``: at least 2^30 units."""
    return UNIT_BITS + math.ceil(power * math.log2(ratio))


def _block_rows(d: int) -> int:
    """Reports per block of :func:`support_statistics` at ``d`` categories."""
    return max(1, min(SUPPORT_BLOCK_ROWS, SUPPORT_BLOCK_CELLS // max(d, 1)))


def _limb_bits(d: int) -> int:
    """The widest limbs whose sum over a block of ``_block_rows(d) <= 2^k`` reports stays below 2^24."""
    return 24 - (_block_rows(d) - 1).bit_length()


def _limbs(columns: list[tuple[np.ndarray, int]], bits: int) -> np.ndarray:
    """Each column ``(units, count)`` of integer-valued float64 ``units`` as ``count`` limbs of ``bits`` bits,
    lowest first, the columns' limbs side by side, as float32 (exact)."""
    counts = [count for _, count in columns]
    if max(counts) * bits <= 63:  # one shift per limb of int64 units
        units = np.empty((columns[0][0].shape[0], len(columns)), dtype=np.int64)
        for index, (values, _) in enumerate(columns):
            units[:, index] = values
        which, shift = _limb_layout(tuple(counts), bits)
        return ((units[:, which] >> shift) & ((1 << bits) - 1)).astype(np.float32)
    out = np.empty((columns[0][0].shape[0], sum(counts)), dtype=np.float32)
    limb = 0
    for rest, count in columns:
        for _ in range(count):
            low = np.fmod(rest, float(2 ** bits))
            out[:, limb] = low
            rest = (rest - low) / float(2 ** bits)
            limb += 1
    return out


@functools.lru_cache(maxsize=64)
def _limb_layout(counts: tuple[int, ...], bits: int) -> tuple[np.ndarray, np.ndarray]:
    """For :func:`_limbs`: the column of the units and the shift that make each limb."""
    which = np.repeat(np.arange(len(counts)), counts)
    return which, np.concatenate([np.arange(count, dtype=np.int64) * bits for count in counts])


def _unlimb(limbs, bits: int, limb_bits: int) -> np.ndarray:
    """The value of int64 limb sums (limbs of ``limb_bits`` along the first axis) in units of ``2^-bits``."""
    limbs = np.asarray(limbs)
    weights = np.array([math.ldexp(1.0, limb_bits * limb - bits) for limb in range(limbs.shape[0])])
    return np.tensordot(weights, limbs.astype(np.float64), axes=(0, 0))


def support_statistics(members: np.ndarray, ratio: float, theta) -> dict[str, object]:
    """Additive statistics of reports with ``P(y_i | x) = c(y_i) (1 + (ratio - 1) members[i, x])`` at the
    frequencies ``theta`` (:func:`lattice_frequencies`): with ``T_i = 1 + (ratio - 1) theta(S_i)``,
    ``theta(S_i)`` the frequency of the categories that report ``i`` favours, ``loglik = sum_i log T_i``
    (the log-likelihood up to a constant), ``weight_sum = sum_i 1 / T_i``, ``weight_square_sum = sum_i 1 /
    T_i^2``, ``support = sum_i members_i / T_i`` and ``support_square = sum_i members_i / T_i^2``, read by
    :func:`support_value`.

    Exact in any order, so that chunks, files, dask and Spark agree bit for bit, and in float32 matrix
    products (twice as fast as float64): ``theta(S_i)`` is a sum of 10-bit limbs of ``theta``'s lattice units,
    exact; each weight is rounded to 30 significant bits (``1 / T_i >= 1 / ratio``) and split into limbs of
    ``_limb_bits(d)`` bits (12 at d <= 32, 16 at d = 1000), whose block sums (one product) are integers below
    2^24; blocks add exactly in float64 (up to 2^29 reports a call), ``loglik`` (in units of 2^-30) as an
    :class:`ExactSum`.  At most 2048 categories.  ``members`` is an (n, d) array, a list of contiguous
    column-major blocks of at most ``_block_rows(d)`` reports each (:func:`unpack_supports`), its blocks, or
    :class:`SparseSupports` (the same statistics to the bit, :func:`_sparse_statistics`)."""
    theta = np.asarray(theta, dtype=np.float64)
    d = theta.size
    if d > 1 << (24 - THETA_LIMB_BITS - 1):
        raise ValueError(f"support_statistics takes at most 2048 categories, got {d}")
    if isinstance(members, SparseSupports):
        return _sparse_statistics(members, ratio, theta)
    rows = _block_rows(d)
    if isinstance(members, list):  # blocks of at most `rows` reports, each contiguous and column-major
        if any(len(block) > rows for block in members):
            raise ValueError(f"support_statistics takes blocks of at most {rows} reports at d = {d}")
        order = "F"
        starts = np.cumsum([0] + [len(block) for block in members]).tolist()
        parts, n = list(zip(starts, members, strict=False)), starts[-1]
        rows = max((len(block) for block in members), default=1)
    else:
        n = members.shape[0]
        # blocks in the members' own layout: the copies stay contiguous (a column-major block is d short runs,
        # one run as a tile of pack_supports)
        order = "F" if _column_major(members) else "C"
        parts = [(at, members[at:at + rows]) for at in range(0, n, rows)]
    scale = float(ratio) - 1.0
    units = np.rint(np.ldexp(theta, THETA_BITS))
    # a frequency of 1 is 2^40 units, one bit above four 10-bit limbs: a fifth limb at a vertex only (it costs 8%)
    theta_limbs = _limbs([(units, THETA_BITS // THETA_LIMB_BITS + int(units.max() >= 2.0 ** THETA_BITS))],
                         THETA_LIMB_BITS)
    theta_scales = np.array([math.ldexp(1.0, THETA_LIMB_BITS * limb - THETA_BITS)
                             for limb in range(theta_limbs.shape[1])])
    count, square_count = _weight_limb_counts(ratio, d)
    blocks = [np.empty((min(rows, n), d), dtype=np.float32, order=order)
              for _ in range(max(1, min(SUPPORT_GROUP_BLOCKS, len(parts))))]
    theta_sums = np.empty((min(rows * len(blocks), n), theta_limbs.shape[1]), dtype=np.float32)
    report_totals = np.empty(n, dtype=np.float64)  # T_i
    limbs = np.empty((n, count + square_count), dtype=np.float32)
    # integers: block sums below 2^24 add exactly; with column-major blocks, (d, limbs) (block^T limbs is 1.7x
    # faster than limbs^T block there)
    sums = np.zeros((count + square_count, d) if order == "C" else (d, count + square_count), dtype=np.float64)
    for first in range(0, len(parts), len(blocks)):  # a group of blocks at a time: the weights' twenty small calls
        group = parts[first:first + len(blocks)]  # once per group
        start, stop = group[0][0], group[-1][0] + len(group[-1][1])
        views = []
        for block, (at, source) in zip(blocks, group, strict=False):
            block = block[:len(source)]
            np.copyto(block, source, casting="unsafe")
            np.matmul(block, theta_limbs, out=theta_sums[at - start:at - start + len(source)])
            views.append((block, at))
        total = report_totals[start:stop]
        np.matmul(theta_sums[:stop - start].astype(np.float64), theta_scales, out=total)
        total *= scale
        total += 1.0
        limbs[start:stop] = _weight_limbs(total, ratio, d)
        for block, at in views:
            sums += limbs[at:at + block.shape[0]].T @ block if order == "C" else block.T @ limbs[at:at + block.shape[0]]
    return _statistics(report_totals, limbs, sums.T if order == "F" else sums, count)


def _weight_limb_counts(ratio: float, d: int) -> tuple[int, int]:
    """How many limbs of ``_limb_bits(d)`` bits carry a report's weight ``1 / T_i`` and its square."""
    limb_bits = _limb_bits(d)
    return _weight_bits(ratio, 1) // limb_bits + 1, _weight_bits(ratio, 2) // limb_bits + 1


def _weight_limbs(total: np.ndarray, ratio: float, d: int) -> np.ndarray:
    """The limbs (float32, exact) of each report's weight ``1 / T_i`` and its square, from ``T_i``."""
    count, square_count = _weight_limb_counts(ratio, d)
    weight = 1.0 / total
    return _limbs([(np.rint(np.ldexp(weight, _weight_bits(ratio, 1))), count),
                   (np.rint(np.ldexp(weight * weight, _weight_bits(ratio, 2))), square_count)], _limb_bits(d))


def _statistics(report_totals: np.ndarray, limbs: np.ndarray, sums: np.ndarray, count: int) -> dict[str, object]:
    """The statistics of :func:`support_statistics` from every report's ``T_i``, its weight limbs and their
    (limbs, d) sums over the reports that favour each category (integer-valued floats)."""
    from .exactsum import ExactSum

    n = report_totals.size
    loglik = sum(int(np.rint(np.log(report_totals[start:start + LOG_ROWS]) * float(2 ** UNIT_BITS))
                     .astype(np.int64).sum()) for start in range(0, n, LOG_ROWS))  # log T_i < 2^10: int64 sums
    totals = limbs.sum(axis=0, dtype=np.float64).astype(np.int64)  # limbs below 2^24: exact below 2^29 reports
    sums = sums.astype(np.int64)
    return {"loglik": ExactSum(np.array([loglik], dtype=object), -UNIT_BITS, ()),
            "weight_sum": totals[:count], "weight_square_sum": totals[count:],
            "support": sums[:count], "support_square": sums[count:]}


class SparseSupports(NamedTuple):
    """0/1 supports of ``reports`` reports over ``categories`` categories, category by category (compressed
    columns, :func:`sparse_supports`): the reports that favour category ``j`` are
    ``favouring[starts[j]:starts[j + 1]]``, ascending."""

    starts: np.ndarray
    favouring: np.ndarray
    reports: int
    categories: int

    @property
    def nbytes(self) -> int:
        return self.starts.nbytes + self.favouring.nbytes

    def __len__(self) -> int:
        return self.reports


def sparse_supports(members: np.ndarray) -> SparseSupports:
    """Supports ``members`` ((n, d), 0 or 1) as :class:`SparseSupports`: ``2 s n d`` bytes at a share ``s`` of
    favoured cells (``4 s n d`` above 2^16 reports), against ``n d / 8`` as bits.  From a column-major array
    (local hashing's) one ``flatnonzero`` of its transpose, 0.34 ns a cell at d = 1000 and epsilon 4; from a
    row-major one (unary reports) a ``flatnonzero`` and a stable (radix) sort of the favoured cells by category."""
    n, d = members.shape
    report_type = np.uint16 if n <= 1 << 16 else np.int32
    if _column_major(members):
        flat = np.flatnonzero(_as_bool(members.T))
        starts = np.searchsorted(flat, np.arange(d + 1, dtype=np.int64) * n)
        favouring = flat - np.repeat(np.arange(d, dtype=np.int64) * n, np.diff(starts))
        return SparseSupports(starts, favouring.astype(report_type), n, d)
    flat = np.flatnonzero(_as_bool(np.ascontiguousarray(members)))
    category = (flat % d).astype(np.uint16 if d <= 1 << 16 else np.int32)
    order = np.argsort(category, kind="stable")  # a radix sort of 16-bit keys; reports stay ascending
    starts = np.concatenate([[0], np.cumsum(np.bincount(category, minlength=d))])
    return SparseSupports(starts, (flat // d)[order].astype(report_type), n, d)


def _as_bool(members: np.ndarray) -> np.ndarray:
    """0/1 supports as a boolean view where they are bytes (``flatnonzero`` is then fastest)."""
    return members.view(bool) if members.dtype in (np.uint8, np.int8) else members


def _sparse_statistics(supports: SparseSupports, ratio: float, theta: np.ndarray) -> dict[str, object]:
    """:func:`support_statistics` of :class:`SparseSupports`, the same to the bit: ``theta(S_i)`` is the same exact
    lattice sum and the limb sums the same integers, here as float64 products of a sparse matrix (exact below 2^53),
    whose cost goes with the favoured cells only (at epsilon 4 local hashing favours 1 in 56)."""
    from scipy import sparse

    d, n = supports.categories, supports.reports
    count, square_count = _weight_limb_counts(ratio, d)
    matrix = sparse.csc_array((np.ones(supports.favouring.size), supports.favouring.astype(np.int32),
                               supports.starts.astype(np.int32)), shape=(n, d))
    lattice = np.ldexp(np.rint(np.ldexp(theta, THETA_BITS)), -THETA_BITS)
    report_totals = matrix @ lattice  # exact: sums of multiples of 2^-40 below 2
    report_totals *= float(ratio) - 1.0
    report_totals += 1.0
    limbs = np.empty((n, count + square_count), dtype=np.float32)
    for start in range(0, n, LOG_ROWS):
        limbs[start:start + LOG_ROWS] = _weight_limbs(report_totals[start:start + LOG_ROWS], ratio, d)
    sums = (matrix.T @ limbs.astype(np.float64)).T  # below 2^(limb bits) n: exact
    return _statistics(report_totals, limbs, sums, count)


class PackedSupports(NamedTuple):
    """0/1 supports as bits (:func:`pack_supports`): ``layout`` "rows" (``bits`` along each report's categories)
    or "tiles" (``bits`` of whole tiles of ``tile`` reports, each tile along its reports, category by
    category; ``rest`` the last ``rest_reports`` reports so)."""

    layout: str
    bits: np.ndarray
    rest: np.ndarray
    tile: int
    rest_reports: int
    categories: int

    @property
    def nbytes(self) -> int:
        return self.bits.nbytes + self.rest.nbytes


def _column_major(members: np.ndarray) -> bool:
    return members.flags.f_contiguous and not members.flags.c_contiguous


def pack_supports(members: np.ndarray) -> PackedSupports:
    """Supports ``members`` ((n, d), 0 or 1) as bits along their contiguous axis (0.04 ns a cell at d = 1000).
    Column-major ones (local hashing's) are cut into tiles of ``_block_rows(d)`` reports rounded down to a
    multiple of 8, so that each tile unpacks into one contiguous column-major block of
    :func:`support_statistics`, whose copy is then one run (d runs of a block's reports otherwise)."""
    n, d = members.shape
    if not _column_major(members):
        return PackedSupports("rows", np.packbits(members, axis=1), np.empty(0, np.uint8), 0, 0, d)
    tile = max(8, _block_rows(d) // 8 * 8)
    whole = n // tile
    bits = np.packbits(members.T, axis=1)  # (d, ceil(n / 8)): whole tiles, then the rest
    tiles = np.ascontiguousarray(bits[:, :whole * tile // 8].reshape(d, whole, tile // 8).transpose(1, 0, 2))
    return PackedSupports("tiles", tiles, np.ascontiguousarray(bits[:, whole * tile // 8:]), tile, n - whole * tile, d)


def unpack_supports(packed: PackedSupports):
    """The supports of :func:`pack_supports`: an (n, d) uint8 array ("rows"), or a list of contiguous
    column-major blocks ("tiles"), both what :func:`support_statistics` takes (0.05-0.09 ns a cell)."""
    if packed.layout == "rows":
        return np.unpackbits(packed.bits, axis=1, count=packed.categories)
    count, d = packed.bits.shape[0], packed.categories
    tiles = np.unpackbits(packed.bits.reshape(count, d * packed.tile // 8), axis=1).reshape(count, d, packed.tile)
    blocks = [tile.T for tile in tiles]
    if packed.rest_reports:
        blocks.append(np.unpackbits(packed.rest, axis=1, count=packed.rest_reports).T)
    return blocks


def support_value(stats, name: str, ratio: float):
    """The float value of statistic ``name`` of :func:`support_statistics` (``loglik``: ``sum_i log T_i``)."""
    if name == "loglik":
        return float(stats["loglik"].to_float())
    power = 2 if name.endswith("square_sum") or name == "support_square" else 1
    return _unlimb(stats[name], _weight_bits(ratio, power), _limb_bits(np.shape(stats["support"])[-1]))


def support_gradient(stats, ratio: float) -> np.ndarray:
    """``grad l`` of the log-likelihood written homogeneously, ``l(theta) = sum_i log(R_i . theta)`` with
    ``R_i = 1 + (ratio - 1) members_i``: ``weight_sum + (ratio - 1) support``.  Then ``theta . grad l = n`` on
    the simplex, and ``max_j grad_j l - theta . grad l`` (the Frank-Wolfe gap) bounds ``l(theta*) - l(theta)``."""
    return float(support_value(stats, "weight_sum", ratio)) + (float(ratio) - 1.0) * support_value(stats, "support",
                                                                                                   ratio)


def support_model(stats, ratio: float, member_products) -> tuple[np.ndarray, np.ndarray]:
    """``(gradient, curvature)`` of the log-likelihood (:func:`support_gradient`), both divided by ``(ratio -
    1)^2`` (which leaves the Newton step unchanged and keeps large epsilons finite); ``curvature`` is
    ``-Hessian = sum_i R_i R_i^T / T_i^2``, built from the statistics and ``member_products``, an estimate of
    ``sum_i members_i members_i^T / T_i^2`` whose diagonal is replaced by its exact value ``support_square``
    (members are 0/1)."""
    scale = float(ratio) - 1.0
    square = support_value(stats, "support_square", ratio)
    curvature = np.array(member_products, dtype=np.float64)
    np.fill_diagonal(curvature, square)
    curvature += (square[:, None] + square[None, :]) / scale
    curvature += float(support_value(stats, "weight_square_sum", ratio)) / scale / scale
    gradient = float(support_value(stats, "weight_sum", ratio)) / scale / scale + support_value(stats, "support",
                                                                                                 ratio) / scale
    return gradient, curvature


def off_diagonal_rank_one(matrix, *, iterations: int = 500, tolerance: float = 1e-12) -> np.ndarray:
    """``a a^T`` with ``a`` minimising ``sum_{j != k} (matrix_jk - a_j a_k)^2`` (the diagonal left out), for a
    symmetric ``matrix`` with non-negative entries: alternating least squares ``a_j = sum_{k != j} matrix_jk
    a_k / sum_{k != j} a_k^2``, each step rescaled to the best multiple ``s`` of its direction ``u`` (``s^2 =
    sum_{j != k} matrix_jk u_j u_k / sum_{j != k} u_j^2 u_k^2``; without it the scale flips), from the root of
    the row means."""
    matrix = np.asarray(matrix, dtype=np.float64)
    diagonal = np.diag(matrix).copy()
    d = matrix.shape[0]

    def off_product(vector):
        return matrix @ vector - diagonal * vector

    a = np.sqrt(np.maximum((matrix.sum(axis=1) - diagonal) / max(d - 1, 1), 0.0))
    for _ in range(iterations):
        squares = a * a
        direction = off_product(a) / np.maximum(squares.sum() - squares, 1e-300)
        direction_squares = direction * direction
        fit = direction @ off_product(direction)
        norm = direction_squares.sum() ** 2 - (direction_squares ** 2).sum()
        following = direction * np.sqrt(max(fit, 0.0) / norm) if norm > 0 else direction
        change = np.abs(following - a).max()
        a = following
        if change <= tolerance * max(np.abs(a).max(), 1e-300):
            break
    return np.outer(a, a)


QP_POWER_STEPS = 30  # power iterations for simplex_qp's step (2.3 ms at d = 1000, against 41 ms for eigvalsh)


def simplex_qp(curvature: np.ndarray, gradient: np.ndarray, theta, *, gap: float,
               max_iterations: int = 20_000) -> np.ndarray:
    """The maximiser over the simplex of the model ``gradient . (z - theta) - (z - theta)^T curvature
    (z - theta) / 2`` (``curvature`` positive semi-definite), by projected gradient steps of ``1 / lambda``
    (linear convergence at rate ``1 - 1 / kappa``: the curvature of these likelihoods has condition number
    about 2 on the simplex, measured at d = 1000); stops when the model's Frank-Wolfe gap is at most ``gap``.

    ``lambda`` is the Rayleigh quotient after ``QP_POWER_STEPS`` power iterations, at most ``lambda_max``
    (within 2-9% of it at d = 1000). Steps below ``2 / lambda_max`` raise the model's value at every step;
    if one lowers it, the step was too long, and the iteration starts again with ``lambda_max`` itself."""
    theta = np.asarray(theta, dtype=np.float64)
    # steps stay on {sum z = 1}: the curvature there is P A P (P the projection orthogonal to 1), and its
    # largest eigenvalue, not A's (large along 1), sets the step
    rows = curvature.mean(axis=0)
    curvature = curvature - rows[None, :] - rows[:, None] + rows.mean()
    gradient = gradient - gradient.mean()
    step, exact = 1.0 / max(_power_eigenvalue(curvature), 1e-300), False
    z, value = theta.copy(), 0.0
    for _ in range(max_iterations):
        change = z - theta
        slope = gradient - curvature @ change
        both = gradient + slope
        following = 0.5 * float(change @ both)  # the model's value at z, and below its rounding
        if following < value - 1e-9 * float(np.abs(change) @ np.abs(both)) and not exact:
            step, exact = 1.0 / max(float(np.linalg.eigvalsh(curvature)[-1]), 1e-300), True
            z, value = theta.copy(), 0.0
            continue
        if float(slope.max() - z @ slope) <= gap:
            break
        value = following
        z = project_simplex(z + step * slope)
    return z


def _power_eigenvalue(matrix: np.ndarray) -> float:
    """A lower estimate of the largest eigenvalue of a symmetric positive semi-definite ``matrix`` whose rows
    sum to 0: the Rayleigh quotient after ``QP_POWER_STEPS`` power iterations from a fixed start orthogonal
    to 1."""
    vector = np.random.default_rng(0).standard_normal(matrix.shape[0])
    vector -= vector.mean()
    quotient = 0.0
    for _ in range(QP_POWER_STEPS):
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:
            break
        vector /= norm
        image = matrix @ vector
        quotient = float(vector @ image)
        vector = image
    return quotient


def secant_update(curvature: np.ndarray, step: np.ndarray, change: np.ndarray) -> np.ndarray:
    """BFGS: ``curvature`` corrected so that ``curvature @ step = change`` (``change = grad l`` before the
    step minus after it), kept positive definite; unchanged where the pair shows no curvature."""
    if change @ step <= 1e-12 * np.sqrt((change @ change) * (step @ step)):
        return curvature
    mapped = curvature @ step
    return curvature - np.outer(mapped, mapped) / (step @ mapped) + np.outer(change, change) / (change @ step)
