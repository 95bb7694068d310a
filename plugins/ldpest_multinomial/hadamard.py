"""Hadamard response (Acharya, Sun and Zhang 2019; docs/frequency-oracles.md).

The ``d`` categories are split into ``B`` blocks of at most ``L`` categories; a
block is a ``b x b`` Sylvester-Hadamard matrix ``H`` (``b`` the smallest power of
two above ``L``) whose rows ``1..L`` stand for its categories.  The output
alphabet is ``K = B b`` symbols ``z = m b + y``.  Category ``x`` (block ``m``,
row ``r``) owns the ``s = b / 2`` symbols ``C_x = {m b + y : H[r, y] = +1}``
(``H[r, y] = (-1)^popcount(r & y)``).  The report is a symbol of ``C_x`` with
total probability ``P_in``, otherwise a symbol outside ``C_x``, each uniform:
every symbol has probability ``alpha = P_in / s`` (in ``C_x``) or
``beta = (1 - P_in) / (K - s)``, and ``P_in = T / 2^64`` with ``T`` the largest
integer for which ``alpha / beta <= e^a`` is proven.

Decoding: ``W_ij = H[r_j, y_i]`` if report i falls in j's block, else 0.
Distinct rows of ``H`` agree on exactly half the columns, so
``E W_ij = theta_j s (alpha - beta)`` and ``theta_j = mean_i W_ij / (s (alpha - beta))``
is unbiased; ``sum_i W_ij`` for all j is one fast Walsh-Hadamard transform of
each block's histogram: O(n + K log b).  With ``Theta_m`` the mass of j's block,
``beta_in = s (alpha + beta)`` and ``beta_out = b beta``,

    n Var(theta_j) = (Theta_m beta_in + (1 - Theta_m) beta_out) / (s (alpha - beta))^2 - theta_j^2.

``blocks`` defaults to the number that minimises the worst case of the summed
variance (about ``(e^a - 1) / 2`` blocks at large epsilon, one block below
epsilon ~ 1, which is Acharya et al.'s high-privacy scheme).
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np

from ldpest import Channel, DataError, ParameterError
from ldpest.privacy.exact import (
    WORD,
    largest_threshold,
    random_words,
    ratio_within,
    require_gap,
    select,
    too_small,
    uniform_below,
)
from ldpest.stats.intervals import clopper_pearson
from ldpest.stats.likelihood import channel_count_mle, channel_count_mle_rows
from ldpest.stats.projection import project_simplex
from ldpest.stats.sufficient import count_indices
from ldpest.stats.transforms import fwht
from ldpest.util.labels import smallest_index_dtype
from ldpest.util.validation import check_positive_int

from .mechanisms import _CategoricalMechanism, _row_blocks

_CHANNEL_LIMIT = 1 << 12
NEWTON_CATEGORIES = 4096  # frequency_mle's Newton keeps d x d matrices (128 MiB each here); above, EM (measured
# at n = 10^6, epsilon 4: d = 2048 Newton 0.32 s against EM 0.62 s, d = 4096 0.60 s against EM unconverged after
# 1.28 s; /tmp scripts of session 31, figures in docs/frequency-oracles.md)
AUTO_MLE_CATEGORIES = 128  # "auto" considers the MLE up to here: where Stein prefers it, an estimate costs 5-6 ms
# at d = 10 and 30-54 ms at d = 100 (bench/results/frequency-auto.txt); its 60 simulated MLEs 0.07-0.13 s at d = 128
_SYMBOL_BLOCK = (1 << 12, 1 << 15)  # rows per privatise block: n / 128 within these (see _privatize)


class _Layout:
    """Blocks of ``load`` categories in blocks of ``width`` symbols (a power of two).

    ldpest's layout spreads the categories evenly over ``blocks`` (no empty block); pure-ldp's
    (:func:`pure_ldp_layout`) fills blocks of ``width - 1`` categories in order and keeps empty ones."""

    def __init__(self, d: int, blocks: int, load: int | None = None):
        self.load = -(-d // blocks) if load is None else load
        self.blocks = -(-d // self.load) if load is None else blocks
        self.width = 1 << self.load.bit_length()  # smallest power of two > load
        self.half = self.width // 2
        self.symbols = self.blocks * self.width
        self.loads = np.clip(d - np.arange(self.blocks) * self.load, 0, self.load)


def pure_ldp_layout(d: int, epsilon: float) -> _Layout:
    """pure-ldp's ``HadamardResponseClient``: one block of ``2^ceil(log2(d + 1))`` symbols at
    epsilon <= 1 (Hadamard_Rand_high_priv); above, ``B = 2^floor(log2(min(2d, e^eps)))`` blocks of
    ``b = 2^ceil(log2(d / B + 1))`` symbols, ``b - 1`` categories each, empty blocks kept
    (Hadamard_Rand_general_original), computed with the same float expressions as pure-ldp."""
    if epsilon <= 1:
        return _Layout(d, 1)
    blocks = int(math.pow(2, int(math.floor(math.log(min(2 * d, math.exp(min(epsilon, 700.0))), 2)))))
    width = int(math.pow(2, int(math.ceil(math.log(float(d) / float(blocks) + 1, 2)))))
    return _Layout(d, blocks, load=width - 1)


def _symbol_probabilities(layout: _Layout, epsilon: float) -> tuple[float, float]:
    """Float ``(alpha, beta)`` of the unquantised scheme: ``alpha / beta = e^a``."""
    s, K = layout.half, layout.symbols
    e = math.exp(min(epsilon, 700.0))
    return e / (s * e + K - s), 1 / (s * e + K - s)


def _block_masses(loads: np.ndarray, c: float) -> np.ndarray:
    """The block masses ``Theta_m >= 0``, ``sum Theta_m = 1``, that maximise
    ``sum_m (c L_m Theta_m - Theta_m^2 / L_m)``: water-filling ``Theta_m = L_m max(0, c L_m - lam) / 2``.

    The largest loads are active.  On an active set with integer sums ``S1 = sum L_i`` and
    ``S2 = sum L_i^2``, ``c L_m - lam = (c (L_m S1 - S2) + 2) / S1``, where ``L_m S1 - S2`` is an
    exact integer: no cancellation, so a huge ``c`` (epsilon near 0) gives finite masses, not 0 / 0
    (a bisection on ``lam`` lost every digit there)."""
    order = np.argsort(-loads, kind="stable")
    ordered = loads[order].astype(np.int64)
    s1, s2 = np.cumsum(ordered), np.cumsum(ordered * ordered)
    # block k joins while c (L_k S1_k - S2_k) + 2 > 0; L_k S1_k - S2_k <= 0 falls with k, and is 0 at k = 1
    active = int(np.count_nonzero(c * (ordered * s1 - s2) + 2 > 0))
    top, total, squares = ordered[:active], s1[active - 1], s2[active - 1]
    masses = np.zeros(loads.shape, dtype=np.float64)
    masses[order[:active]] = top * (c * (top * total - squares) + 2) / (2 * total)
    return masses


def _worst_cases(layout: _Layout, alpha: float, beta: float) -> tuple[float, float]:
    """``(max sum_j n Var_j, max_j n Var_j)`` over the simplex (module docstring).

    The total is ``d beta_out / g^2 + sum_m (c L_m Theta_m - Theta_m^2 / L_m)``, maximised over the
    block masses by water-filling (:func:`_block_masses`).
    """
    s, b = layout.half, layout.width
    g = s * (alpha - beta)
    if not g > 0:
        return math.inf, math.inf
    inside, outside = s * (alpha + beta), b * beta
    c = (inside - outside) / g ** 2
    loads = layout.loads[layout.loads > 0]  # empty blocks (pure-ldp's layout) hold no mass
    theta_block = _block_masses(loads, c)
    loads = loads.astype(np.float64)
    total = loads.sum() * outside / g ** 2 + float(np.sum(c * loads * theta_block - theta_block ** 2 / loads))
    if layout.load >= 2:  # all mass on another category of the block: Theta = 1, theta_j = 0
        single = inside / g ** 2
    else:  # Theta_m = theta_j
        t = min(max((inside - outside) / (2 * g ** 2), 0.0), 1.0)
        single = (t * inside + (1 - t) * outside) / g ** 2 - t ** 2
    return total, single


def default_blocks(epsilon: float, d: int) -> int:
    """The number of blocks with the smallest worst-case summed variance (each load tried once)."""
    best = None
    for load in sorted({-(-d // blocks) for blocks in _block_candidates(d)}):
        layout = _Layout(d, -(-d // load))
        worst = _worst_cases(layout, *_symbol_probabilities(layout, epsilon))[0]
        if best is None or worst < best[0]:
            best = (worst, layout.blocks)
    return best[1]


def _block_candidates(d: int):
    """Block counts giving every distinct load ``ceil(d / B)`` (O(sqrt d) of them)."""
    root = math.isqrt(d)
    yield from range(1, root + 2)
    yield from (-(-d // load) for load in range(1, root + 2))


class HadamardResponse(_CategoricalMechanism):
    """Report one symbol of ``K = B b``, favouring the ``b / 2`` symbols of the true category's
    Hadamard row; decoded by a fast Walsh-Hadamard transform (module docstring for the maths).

    Reports are symbol indices ``0..K-1``.  Parameter ``blocks`` (default: the variance-optimal one),
    or ``layout="pure-ldp"``: pure-ldp's ``HadamardResponseClient`` layout (:func:`pure_ldp_layout`),
    whose reports are then estimated as they are (its input permutation: give the categories in
    the order of ``server.hr.reverse``, docs/other-libraries.md).
    """

    parameter_help = {"epsilon": "privacy level epsilon > 0 of each report",
                      "categories": "the possible answers (labels), in order",
                      "blocks": "the blocks the categories are split into (default: the smallest worst-case variance)",
                      "layout": "'ldpest' (default) or 'pure-ldp': pure-ldp's blocks of b - 1 categories, empty "
                                "blocks kept (categories in the order of its server.hr.reverse)"}
    name = "hadamard-response"

    def __init__(self, *, epsilon, categories, blocks=None, layout="ldpest"):
        super().__init__(epsilon=epsilon, categories=categories)
        d = self.d
        if layout not in ("ldpest", "pure-ldp"):
            raise ParameterError(f"layout must be 'ldpest' or 'pure-ldp', got {layout!r}")
        if layout == "pure-ldp":
            if blocks is not None:
                raise ParameterError("layout='pure-ldp' fixes the blocks (pure-ldp's rule); do not give blocks")
            layout = pure_ldp_layout(d, self.epsilon)
            self._set_params(epsilon=self.epsilon, categories=self.categories, layout="pure-ldp")
        else:
            blocks = default_blocks(self.epsilon, d) if blocks is None else check_positive_int("blocks", blocks)
            if blocks > d:
                raise ParameterError(f"blocks must be between 1 and d = {d}, got {blocks}")
            layout = _Layout(d, blocks)
            self._set_params(epsilon=self.epsilon, categories=self.categories, blocks=layout.blocks)
        self._layout = layout
        s, K = layout.half, layout.symbols
        e = math.exp(min(self.epsilon, 700.0))
        def ok(t: int) -> bool:
            return ratio_within(t * (K - s), (WORD - t) * s, self.epsilon)

        if not ok(WORD * s // K):
            raise too_small(self.epsilon, self.name)
        self._in = largest_threshold(ok, WORD * s // K, WORD - 1, guess=min(WORD * s * e / (s * e + K - s), WORD - 1))
        p_in = Fraction(self._in, WORD)
        self._exact = (p_in / s, (1 - p_in) / (K - s))
        self._alpha, self._beta = float(self._exact[0]), float(self._exact[1])
        self._p_in, self._p_out = float(p_in), float(1 - p_in)  # P(report in C_x) and its complement, exactly
        require_gap(self._alpha - self._beta, self.epsilon, self.name)
        self._index_dtype = np.int32 if K <= 1 << 31 else np.int64  # the sampler's arithmetic: 1.6x in int32
        codes = np.arange(d, dtype=self._index_dtype)
        self._block_of, self._row_of = codes // layout.load, codes % layout.load + 1

    @property
    def iterative_mle_categories(self) -> int:
        """``AUTO_MLE_CATEGORIES`` with several blocks, 0 with one: there the MLE was never the best fixed
        choice on ``bench_frequency_auto.py``'s grid (epsilon 0.5 and 1, d = 10 and 100), and its Stein risk
        estimate sits 4-6 standard errors above its risk at n = 2000 (docs/frequency-oracles.md)."""
        return AUTO_MLE_CATEGORIES if self._layout.blocks > 1 else 0

    @property
    def symbols(self) -> int:
        """``K``, the number of possible reports."""
        return self._layout.symbols

    @property
    def symbol_probabilities(self) -> tuple[Fraction, Fraction]:
        """``(alpha, beta)``: the probability of each symbol in and outside ``C_x``, exactly."""
        return self._exact

    def _insert(self, rows, free, parity):
        """The ``free``-th (0..s-1) column of the block whose entry in each row has ``parity``
        (0: +1, 1: -1): insert a bit at the lowest set bit of the row, chosen to fix the parity."""
        lowest = rows & -rows
        below = free & (lowest - 1)
        column = free - below
        column <<= 1
        column |= below
        np.bitwise_and(rows, column, out=below)
        wrong = (np.bitwise_count(below) & 1) != parity
        lowest *= wrong
        column |= lowest
        return column

    @property
    def symbol_dtype(self) -> np.dtype:
        """Stored type of a report: the smallest unsigned type that holds ``K - 1``."""
        return smallest_index_dtype(self.symbols)

    def _privatize(self, codes, rng):
        """Symbols in :attr:`symbol_dtype`, block by block (temporaries bounded by one block)."""
        n = codes.shape[0]
        out = np.empty(n, dtype=self.symbol_dtype)
        # a block costs about 25 calls of numpy (9.8 ns a report in blocks of 2^15 rows, 16.8 in 2^12 at d = 20,
        # n = 10^6) and holds about 30 bytes a row: n / 128 rows keep the peak under 1.3x one-byte reports
        rows_per_block = min(max(n >> 7, _SYMBOL_BLOCK[0]), _SYMBOL_BLOCK[1])
        for rows in _row_blocks(n, 1, rows_per_block):
            out[rows] = self._privatize_block(codes[rows], rng)
        return out

    def _privatize_block(self, codes, rng):
        """One block of reports, in place where it can be (about 30 bytes of temporaries a row)."""
        n, layout, dtype = codes.shape[0], self._layout, self._index_dtype
        s, b, K = layout.half, layout.width, layout.symbols
        width_bits = dtype(b.bit_length() - 1)  # b is a power of two: z = m b + y is (m << width_bits) | y
        inside = random_words(rng, n) < np.uint64(self._in)
        free = uniform_below(rng, s, n, dtype)
        other = uniform_below(rng, K - s, n, dtype)  # uniform over the K - s symbols outside C_x
        own_block = other >= K - b  # outside C_x, the last s values are x's own block
        own_block |= inside
        # in x's block: column ``free`` of C_x (parity 0) or ``other - (K - b)`` outside it (parity 1)
        free = select(inside, free, other - dtype(K - b))
        column = self._insert(self._row_of[codes], free, np.logical_not(inside, out=inside))
        del free, inside
        block = self._block_of[codes]
        column |= block << width_bits
        other_block = other >> width_bits
        other_block += other_block >= block
        other_block <<= width_bits
        other &= dtype(b - 1)
        other |= other_block
        return select(own_block, column, other)

    def encode_reports(self, values):
        values = np.asarray(values)
        if values.ndim != 1:
            raise DataError(f"reports of {self.name!r} must be a 1-D array of symbols, got shape {values.shape}")
        if values.dtype.kind == "f" and (not np.all(np.isfinite(values)) or np.any(values != np.round(values))):
            raise DataError(f"reports of {self.name!r} must be integer symbols")
        if values.dtype.kind not in "iuf":
            raise DataError(f"reports of {self.name!r} must be integer symbols, got dtype {values.dtype}")
        bad = (values < 0) | (values >= self.symbols)
        if bad.any():
            raise DataError(f"{int(bad.sum())} report(s) are not symbols in 0..{self.symbols - 1}",
                            row=int(np.flatnonzero(bad)[0]))
        return values.astype(self.symbol_dtype)

    def _signs(self) -> np.ndarray:
        """``H[r_x, y]`` over each category's own block: shape (d, b)."""
        columns = np.arange(self._layout.width)
        return 1 - 2 * (np.bitwise_count(self._row_of[:, None] & columns[None, :]) & 1).astype(np.int64)

    def channel(self) -> Channel:
        K = self.symbols
        if K > _CHANNEL_LIMIT:
            raise ParameterError(f"the channel has {K} outputs; enumerate it for K <= {_CHANNEL_LIMIT}")
        b = self._layout.width
        member = np.zeros((self.d, K), dtype=bool)
        positive = self._signs() > 0
        for x in range(self.d):
            start = self._block_of[x] * b
            member[x, start:start + b] = positive[x]
        alpha, beta = self._exact
        matrix = np.where(member, np.array(alpha, dtype=object), np.array(beta, dtype=object))
        return Channel(self.categories, np.arange(K), matrix)

    def frequency_statistics(self, reports):
        return {"symbols": count_indices(reports, self.symbols)}

    def _agreement(self, histogram) -> np.ndarray:
        """``sum_i W_ij`` for every j: per-block Walsh-Hadamard transforms of the histogram."""
        layout = self._layout
        histogram = np.asarray(histogram, dtype=np.int64)
        spectra = fwht(histogram.reshape(*histogram.shape[:-1], layout.blocks, layout.width))
        return spectra[..., self._block_of, self._row_of]

    def _gap(self) -> float:
        return self._layout.half * (self._alpha - self._beta)

    def frequency_estimate(self, stats, n):
        theta = self._agreement(stats["symbols"]) / (n * self._gap())
        clipped = np.clip(theta, 0.0, 1.0)
        return theta, np.sqrt(self.frequency_variance(clipped) / n)

    def count_model(self, stats):
        """With one block every report is in it, so ``N+_j`` (reports in ``C_j``) ``= (n + sum_i W_ij) / 2``
        is ``Binomial(n, 1/2 + theta_j g / 2)``, ``g = s (alpha - beta)``: exact intervals.  Several blocks:
        None (:meth:`frequency_interval`)."""
        if self._layout.blocks != 1:
            return None
        histogram = np.asarray(stats["symbols"], dtype=np.int64)
        return (int(histogram.sum()) + self._agreement(histogram)) // 2, 0.5, self._gap() / 2

    def interval_counts(self, stats):
        """Several blocks: ``positive_count`` ``N+_j`` (reports in ``C_j``) and ``block_count`` ``M_j``
        (reports in j's block), which :meth:`frequency_interval` reads."""
        if self._layout.blocks == 1:
            return {}
        layout = self._layout
        histogram = np.asarray(stats["symbols"], dtype=np.int64)
        in_block = histogram.reshape(layout.blocks, layout.width).sum(axis=1)[self._block_of]
        return {"positive_count": (in_block + self._agreement(histogram)) // 2, "block_count": in_block}

    def frequency_interval(self, result, level):
        """Several blocks: exact.  ``M_j`` (reports in j's block) is ``Binomial(n, pi)``, ``pi = 2 s beta +
        g Theta`` with ``Theta`` the block's mass, and ``N+_j`` given ``M_j`` is ``Binomial(M_j, rho)``,
        ``rho = 1/2 + g theta_j / (2 pi)``, so ``theta_j = (2 rho - 1) pi / g``:

        * j alone in its block (``Theta = theta_j``): ``N+_j ~ Binomial(n, s beta + g theta_j)``, and
          Clopper-Pearson at ``level`` on it is exact and not conservative;
        * otherwise Clopper-Pearson for ``rho`` given ``M_j`` at ``1 - 0.8 (1 - level)`` and for ``pi`` at
          ``1 - 0.2 (1 - level)`` hold together with probability at least ``level``, and the interval is
          ``theta_j`` over that box (conservative: ``Theta`` is a nuisance)."""
        if "positive_count" not in result:
            return None
        alpha = 1.0 - level
        n, g, s = int(result.attrs["n"]), self._gap(), self._layout.half
        positive, block = result["positive_count"].values, result["block_count"].values
        rho_low, rho_high = clopper_pearson(positive, block, 1.0 - 0.8 * alpha)
        pi_low, pi_high = clopper_pearson(block, n, 1.0 - 0.2 * alpha)
        floor = 2 * s * self._beta  # pi at Theta = 0
        pi_low, pi_high = np.clip(pi_low, floor, floor + g), np.clip(pi_high, floor, floor + g)
        low, high = 2 * rho_low - 1, 2 * rho_high - 1
        lower = low * np.where(low < 0, pi_high, pi_low) / g
        upper = high * np.where(high > 0, pi_high, pi_low) / g
        alone_low, alone_high = clopper_pearson(positive, n, level)
        alone = self._layout.loads[self._block_of] == 1
        lower = np.where(alone, (alone_low - s * self._beta) / g, lower)
        upper = np.where(alone, (alone_high - s * self._beta) / g, upper)
        return lower, upper, "exact (Clopper-Pearson on the counts in the category's block and symbols)"

    def _symbol_law(self, theta) -> np.ndarray:
        """``P(z) = beta + (alpha - beta) sum_{x : z in C_x} theta_x`` for every symbol: one transform per block
        (frequencies in rows: one law per row)."""
        layout = self._layout
        theta = np.asarray(theta, dtype=np.float64)
        rows = np.zeros((*theta.shape[:-1], layout.blocks, layout.width))
        rows[..., self._block_of, self._row_of] = theta
        in_sets = (rows.sum(axis=-1, keepdims=True) + fwht(rows)) / 2  # sum of theta_x with H[r_x, y] = +1
        return (self._beta + (self._alpha - self._beta) * in_sets).reshape(*theta.shape[:-1], layout.symbols)

    def _symbol_adjoint(self, weights) -> np.ndarray:
        """``sum_z w_z Q(z | x)`` for every category x: ``beta sum_z w_z + (alpha - beta) sum_{z in C_x} w_z``
        (weights in rows: one per row)."""
        layout = self._layout
        weights = np.asarray(weights, dtype=np.float64)
        blocks = weights.reshape(*weights.shape[:-1], layout.blocks, layout.width)
        in_set = (blocks.sum(axis=-1)[..., self._block_of] + fwht(blocks)[..., self._block_of, self._row_of]) / 2
        return self._beta * weights.sum(axis=-1, keepdims=True) + (self._alpha - self._beta) * in_set

    def frequency_cross_covariance(self, theta, vector):
        """For ``j != l`` in one block ``W_j W_l = H[r_j xor r_l, y]``, whose mean is ``g theta_k`` with ``k`` the
        block's category of row ``r_j xor r_l`` (0 if that row is no category), so ``n Cov(theta_j, theta_l) =
        theta_k / g - theta_j theta_l``; across blocks ``W_j W_l = 0`` and it is ``-theta_j theta_l``.  The sums
        over ``l`` are XOR convolutions: three transforms per block."""
        layout = self._layout
        theta, vector = np.asarray(theta, dtype=np.float64), np.asarray(vector, dtype=np.float64)
        rows_theta, rows_vector = np.zeros((2, layout.blocks, layout.width))
        rows_theta[self._block_of, self._row_of] = theta
        rows_vector[self._block_of, self._row_of] = vector
        within = fwht(fwht(rows_theta) * fwht(rows_vector)) / layout.width  # row 0 holds no category: l = j adds 0
        return within[self._block_of, self._row_of] / self._gap() - theta * (theta @ vector - theta * vector)

    def _symbol_curvature(self, weights) -> np.ndarray:
        """``sum_z w_z Q(z | x) Q(z | y)`` for every pair of categories (a d x d matrix), from one transform
        ``T`` of each block's weights: with ``Q(z | x) = beta + (alpha - beta) [z in C_x]``, it is ``beta^2
        sum w + beta (alpha - beta) (E_x + E_y) + (alpha - beta)^2 F_xy``, ``E_x = sum_{C_x} w = (T[0] +
        T[r_x]) / 2`` and, within one block, ``F_xy = sum_{C_x and C_y} w = (T[0] + T[r_x] + T[r_y] +
        T[r_x xor r_y]) / 4`` (``[z in C_x] = (1 + H[r_x, y]) / 2``, ``H[r_x, y] H[r_y, y] = H[r_x xor r_y,
        y]``); ``F_xy = 0`` across blocks, so ``F`` is block-diagonal: O(d^2 + d L + K log b)."""
        layout = self._layout
        load, used = layout.load, int(self._block_of[-1]) + 1  # categories fill the blocks in order
        weights = np.asarray(weights, dtype=np.float64)
        lead = weights.shape[:-1]  # weights in rows: one matrix per row
        spectra = fwht(weights.reshape(-1, layout.blocks, layout.width))
        rows = np.arange(1, load + 1)
        totals, own = spectra[:, :used, :1], spectra[:, :used, rows]  # (rows, used, 1), (rows, used, load)
        in_sets = ((totals + own) / 2).reshape(len(spectra), -1)  # E over used * load slots (extra ones dropped)
        both = (totals[..., None] + own[..., :, None] + own[..., None, :]
                + spectra[:, :used][..., rows[:, None] ^ rows]) / 4
        gap = self._alpha - self._beta
        curvature = (self._beta ** 2 * spectra[:, :, 0].sum(axis=1)[:, None, None]
                     + self._beta * gap * (in_sets[:, :, None] + in_sets[:, None, :]))
        blocks = np.arange(used)
        curvature.reshape(-1, used, load, used, load)[:, blocks, :, blocks, :] += gap ** 2 * both.transpose(1, 0, 2, 3)
        return curvature[:, :self.d, :self.d].reshape(*lead, self.d, self.d)

    def frequency_mle(self, stats, n):
        """The symbol histogram is sufficient: projected Newton over it from the simplex projection of the
        unbiased estimate, with the exact curvature (:meth:`_symbol_curvature`, O(d^2 + K log b)), stopped
        when the log-likelihood is provably within 0.001 of its maximum
        (:func:`ldpest.stats.likelihood.channel_count_mle_rows`); above ``NEWTON_CATEGORIES`` categories (a
        d x d curvature), accelerated EM from the uniform distribution
        (:func:`ldpest.stats.likelihood.channel_count_mle`).  Histograms in rows (a leading axis of draws) give
        one MLE per row, their Newton steps taken together, and ``info`` their largest steps and gap."""
        histogram = np.asarray(stats["symbols"], dtype=np.int64)
        if self.d > NEWTON_CATEGORIES:
            if histogram.ndim == 2:
                found = [channel_count_mle(row, self._symbol_law, self._symbol_adjoint, self.d) for row in histogram]
                return np.vstack([theta for theta, _ in found]), {
                    "method": found[0][1]["method"], "iterations": max(info["iterations"] for _, info in found),
                    "likelihood_gap": max(info["likelihood_gap"] for _, info in found),
                    "converged": all(info["converged"] for _, info in found)}
            return channel_count_mle(histogram, self._symbol_law, self._symbol_adjoint, self.d)
        totals = np.maximum(histogram.sum(axis=-1, keepdims=True), 1)
        start = project_simplex(self._agreement(histogram) / (totals * self._gap()))
        # a leading axis of draws (the "auto" bootstrap) takes all rows' Newton steps at once
        found, info = channel_count_mle_rows(histogram.reshape(-1, self.symbols), self._symbol_law,
                                             self._symbol_adjoint, self._symbol_curvature, start.reshape(-1, self.d))
        return found.reshape(start.shape), info

    def frequency_mle_divergence(self, stats, n, mle, covariance):
        """``E[g . (x - theta)]`` for the MLE ``g`` of the histogram ``c`` and the unbiased ``x = A c``: by
        Stein's identity for the counts (normal, covariance ``Sigma_c``) it is ``tr(A Sigma_c J^T)``, with
        ``J = dg / dc``, which stands in for ``tr(Sigma J)`` in the risk estimate (the MLE reads more of the
        histogram than ``x``). On the MLE's support ``S`` the optimality conditions ``grad_S l = n 1`` give
        ``J = M B``: ``B_jz = Q(z | j) / P_z`` and ``M`` the top-left block of the inverse of ``[I 1; 1^T
        0]``, ``I = Q diag(c / P^2) Q^T`` on ``S`` (:meth:`_symbol_curvature`). With ``Sigma_c`` estimated by
        ``diag(c) - c c^T / n``, and ``B c = n 1``, ``M 1 = 0``, it is ``tr(M C)``, ``C = B diag(c) A^T``, and
        only the part of ``C`` within blocks remains: ``C_jl = (alpha - beta) (T[r_l] + T[r_j xor r_l]) / (2 n
        g)`` for ``T`` the block's transform of ``c / P`` (``beta`` times a matrix ``1 a^T``, which ``M``
        annihilates, is left out). None where ``[I 1; 1^T 0]`` is singular to working precision (few
        reports: the maximum is not unique) or above ``NEWTON_CATEGORIES``."""
        if self.d > NEWTON_CATEGORIES:
            return None
        import scipy.linalg  # here, not at import: workers that only reduce reports never load scipy (0.5 s)

        histogram = np.asarray(stats["symbols"], dtype=np.float64)
        probability = self._symbol_law(mle)
        used = histogram > 0
        weights = np.zeros_like(histogram)
        weights[used] = histogram[used] / probability[used]
        support = np.flatnonzero(np.asarray(mle) > 0)
        information = self._symbol_curvature(weights / probability)[np.ix_(support, support)]
        layout = self._layout
        spectra = fwht(weights.reshape(layout.blocks, layout.width))
        block, row = self._block_of[support], self._row_of[support]
        within = (spectra[block, row][None, :] + spectra[block[None, :], row[:, None] ^ row[None, :]]) / 2
        cross = np.where(block[:, None] == block[None, :], within, 0.0) * (self._alpha - self._beta) / (n * self._gap())
        k = support.size
        bordered = np.zeros((k + 1, k + 1))
        bordered[:k, :k], bordered[:k, k], bordered[k, :k] = information, 1.0, 1.0
        with warnings.catch_warnings():
            warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
            try:  # [M C; .] = [I 1; 1^T 0]^-1 [C; 0]
                solved = scipy.linalg.solve(bordered, np.vstack([cross, np.zeros((1, k))]), assume_a="sym")
            except (np.linalg.LinAlgError, scipy.linalg.LinAlgWarning):
                return None  # few reports: the maximum is not unique, and the MLE not a function of them
        divergence = float(np.trace(solved[:k]))
        return divergence if math.isfinite(divergence) else None

    def frequency_variance(self, theta):
        """``n Var(theta_j)`` (module docstring), summed without cancellation: with ``P = P_in``,
        ``c = 1 - P`` exactly and ``sb = s beta``, ``E W^2 - (E W)^2 = P (Theta - theta^2) + theta^2 P c
        + sb (Theta + 2 theta^2 P - theta^2 sb) + (1 - Theta) b beta``, every term >= 0, so it stays
        positive where ``P`` rounds to 1 (large epsilon)."""
        theta = np.asarray(theta, dtype=np.float64)
        starts = np.arange(0, theta.shape[-1], self._layout.load)  # categories fill the blocks in order
        block_mass = np.clip(np.add.reduceat(theta, starts, axis=-1), 0.0, 1.0)
        s, b, g = self._layout.half, self._layout.width, self._gap()
        mass = np.maximum(block_mass[..., self._block_of], theta)
        p_in, c = self._p_in, self._p_out
        sb = s * self._beta
        square = theta ** 2
        second = (p_in * (mass - square) + square * p_in * c + sb * (mass + 2 * square * p_in - square * sb)
                  + (1 - mass) * b * self._beta)
        return second / g ** 2

    def worst_case_variance(self):
        return _worst_cases(self._layout, self._alpha, self._beta)[0]

    def worst_case_category_variance(self):
        return _worst_cases(self._layout, self._alpha, self._beta)[1]

    def report_bits(self):
        return math.log2(self.symbols)

    def simulate_frequency_statistics(self, theta, n, rng, draws=None):
        """Exact: the histogram of symbols is Multinomial(n, P(z)), ``P(z) = beta + (alpha - beta)
        sum_{x : z in C_x} theta_x``, the inner sums from one transform per block; ``draws`` histograms (rows)
        if given."""
        probabilities = self._symbol_law(theta)
        return {"symbols": rng.multinomial(n, probabilities / probabilities.sum(), size=draws).astype(np.int64)}
