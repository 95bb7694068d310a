"""An exactly analysed discrete Laplace law and its sampler (docs/privacy.md).

The integer noise ``K`` has ``P(K = k) = f(|k|) / (2 - f(0))``, where the
magnitude law ``f`` is given by integer tables:

* ``M = sum_i U_i D_i + U_T J``: independent digits ``D_i`` of mixed radix
  ``N_i = 2^bits_i`` (``U_i = N_0 ... N_{i-1}``) drawn from alias tables
  (:mod:`ldpest.privacy.alias`) with ``P(D_i = d) = w_i[d] / 2^63``, and a top value
  ``J`` drawn from the last table, whose last symbol is a *carry*: drawing it
  adds ``N_T - 1`` and draws again, so ``J = (N_T - 1) V + d`` with ``V``
  geometric, ``P(V = v) = tau^v (1 - tau)``, ``tau = w_T[carry] / 2^63``.  The
  law has infinite support and no cut-off tail.
* ``K = S M`` with a fair sign ``S`` taken from a spare bit of the first word;
  ``(S = -1, M = 0)`` is rejected and drawn again, so ``+0`` and ``-0`` are one
  outcome and the law is symmetric.

For an ideal geometric ``f(m) ∝ r^m`` this is exactly the discrete Laplace law
``P(K = k) ∝ r^|k|`` (digits of a geometric variable are independent).  The
integer weights approximate ``r^d`` with ``r = exp(-lambda)`` and ``lambda``
a hair below the privacy budget per lattice step; what counts is the law the
tables implement, and :meth:`DiscreteLaplaceLaw.loss_per_step` computes its
worst adjacent log ratio ``max_m |log f(m) / f(m + 1)|`` *exactly*, from the
tables themselves.  Because a shift by ``s`` steps is ``s`` adjacent steps,
``|log P(K = k) / P(K = k + s)| <= |s| * loss_per_step`` for every ``k``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .alias import TOTAL_BITS, AliasTable
from .exact import random_words

TOTAL = 1 << TOTAL_BITS
LOWER_LEVEL_BITS = 12
MIN_TOP_BITS, MAX_TOP_BITS = 12, 16
MAX_STEPS_PER_UNIT_LOSS = 1 << 30  # beyond, the margin needed for exact rounding would cost > 1.6% noise
SAMPLE_BLOCK = 1 << 16  # values per block: temporaries stay in cache


@dataclass(frozen=True)
class Level:
    bits: int
    weights: tuple[int, ...]  # exact P(symbol) * 2^63; the top level's last symbol is the carry
    table: AliasTable
    unit: int  # U_i: the value of one unit of this digit, in lattice steps
    top: bool

    @property
    def size(self) -> int:
        return 1 << self.bits


def _level_sizes(steps_per_unit_loss: float) -> list[int]:
    """Bits per level.  One table covering 4 to 16 scales when it fits in 2^16 symbols (rare
    carries); otherwise lower digits of at most 12 bits under a 12-bit top table that covers 2 to
    4 scales, so that its smallest weights stay large next to the rounding margin."""
    t = steps_per_unit_loss
    if 4 * t < 1 << MAX_TOP_BITS:
        return [min(MAX_TOP_BITS, max(MIN_TOP_BITS, math.ceil(math.log2(4 * t + 1))))]
    low = math.ceil(math.log2(t)) - 11  # the top table then sees t / 2^low in [1024, 2048)
    chunks = math.ceil(low / LOWER_LEVEL_BITS)
    sizes = [low // chunks + (1 if i < low % chunks else 0) for i in range(chunks)]
    return sizes + [MIN_TOP_BITS]


def _geometric_weights(log_ratio: float, count: int, tail: bool) -> list[int]:
    """Integer weights summing to 2^63 for ``P(d) ∝ exp(-log_ratio d)``, d < count.

    With ``tail``, the last of the ``count`` symbols is the carry and takes the
    mass of ``d >= count - 1`` (exactly what is left); otherwise the law is
    truncated to ``count`` symbols and the rounding remainder goes to ``d = 0``.
    """
    d = np.arange(count - 1 if tail else count, dtype=np.float64)
    first = -math.expm1(-log_ratio)  # 1 - r
    if not tail:
        first /= -math.expm1(-log_ratio * count)  # normalise the truncated law
    weights = [int(w) for w in np.floor(np.exp(math.log(first) - log_ratio * d) * TOTAL)]
    left = TOTAL - sum(weights)
    if tail:
        weights.append(left)
    else:
        weights[0] += left
    return weights


@functools.lru_cache(maxsize=64)
def discrete_laplace_law(steps_per_unit_loss: float) -> DiscreteLaplaceLaw:
    """The tables for a per-step budget ``1 / steps_per_unit_loss`` (cached: building costs ~10-100 ms)."""
    return DiscreteLaplaceLaw(steps_per_unit_loss)


class DiscreteLaplaceLaw:
    """Integer-table discrete Laplace noise with at most ``1 / t`` privacy loss per lattice step
    (``t = steps_per_unit_loss``; module doc)."""

    def __init__(self, steps_per_unit_loss: float):
        t = float(steps_per_unit_loss)
        if not 1.0 <= t <= MAX_STEPS_PER_UNIT_LOSS:
            raise ValueError(f"steps_per_unit_loss must be in [1, 2^30], got {t}")
        self.steps_per_unit_loss = t
        # a relative margin below the budget absorbs the rounding of the integer weights
        self.margin = max(2.0 ** -20, t * 2.0 ** -44)
        design = (1.0 - self.margin) / t
        levels, unit = [], 1
        sizes = _level_sizes(t)
        for i, bits in enumerate(sizes):
            top = i == len(sizes) - 1
            weights = _geometric_weights(design * unit, 1 << bits, tail=top)
            if min(weights) < 1:
                raise AssertionError("a weight rounded to zero")  # cannot happen for t in range
            levels.append(Level(bits, tuple(weights), AliasTable.build(weights, bits), unit, top))
            unit <<= bits
        self.levels = tuple(levels)
        self._survivals: dict[int, float] = {}  # survival(k), memoised: estimators ask for a few k on every call

    # -- the exact law -------------------------------------------------------------------
    @property
    def top(self) -> Level:
        return self.levels[-1]

    @property
    def carry_probability(self) -> Fraction:
        """``tau``: probability that the top table's draw is the carry."""
        return Fraction(self.top.weights[-1], TOTAL)

    @functools.cached_property
    def zero_probability(self) -> Fraction:
        """``f(0) = P(M = 0)``."""
        p = Fraction(1)
        for level in self.levels:
            p *= Fraction(level.weights[0], TOTAL)
        return p

    def magnitude_pmf(self, m: int) -> Fraction:
        """``f(m) = P(M = m)`` exactly."""
        p = Fraction(1)
        for level in self.levels[:-1]:
            p *= Fraction(level.weights[(m // level.unit) % level.size], TOTAL)
        top = self.top
        value = m // top.unit
        carries, digit = divmod(value, top.size - 1)
        return p * self.carry_probability ** carries * Fraction(top.weights[digit], TOTAL)

    def pmf(self, k: int) -> Fraction:
        """``P(K = k)`` exactly."""
        return self.magnitude_pmf(abs(int(k))) / (2 - self.zero_probability)

    @functools.cached_property
    def adjacent_ratio_range(self) -> tuple[Fraction, Fraction]:
        """``(min, max)`` over all m >= 0 of ``f(m) / f(m + 1)``, exactly.

        Going from m to m + 1 rolls the digits below some level j over from
        ``N_i - 1`` to 0 and raises digit j by one (for the top level: one more
        in ``J``, which may start a new carry block); so every adjacent ratio is
        ``prod_{i<j} w_i[N_i - 1] / w_i[0]`` times a ratio of two neighbouring
        weights of level j, or for the top level the wrap
        ``w[N_T - 2] / (tau w[0])``.  The set is finite and enumerated here.
        """
        low, high = None, None
        prefix = Fraction(1)
        for level in self.levels:
            w = level.weights
            if level.top:
                num, den = list(w[:-2]), list(w[1:-1])
                candidates = _extreme_ratios(num, den)
                wrap = Fraction(w[-2] * TOTAL, w[-1] * w[0])
                candidates = (min(candidates[0], wrap), max(candidates[1], wrap))
            else:
                candidates = _extreme_ratios(list(w[:-1]), list(w[1:]))
            level_low, level_high = prefix * candidates[0], prefix * candidates[1]
            low = level_low if low is None else min(low, level_low)
            high = level_high if high is None else max(high, level_high)
            prefix *= Fraction(w[-1], w[0])
        return low, high

    @functools.cached_property
    def loss_per_step(self) -> tuple[Fraction, Fraction]:
        """``(a, b)`` with ``max_m |log f(m)/f(m+1)| = log(a / b)``, exactly (as a ratio >= 1)."""
        low, high = self.adjacent_ratio_range
        inverse = 1 / low
        return (high.numerator, high.denominator) if high >= inverse else (inverse.numerator, inverse.denominator)

    @functools.cached_property
    def second_moment(self) -> Fraction:
        """``E[K^2]`` exactly (``E[K] = 0`` by symmetry)."""
        mean, variance = Fraction(0), Fraction(0)
        for level in self.levels:
            w = level.weights
            if level.top:
                body = w[:-1]
                mass = sum(body)
                d_mean = Fraction(sum(i * x for i, x in enumerate(body)), mass)
                d_var = Fraction(sum(i * i * x for i, x in enumerate(body)), mass) - d_mean ** 2
                tau = self.carry_probability
                carry = level.size - 1
                j_mean = carry * tau / (1 - tau) + d_mean
                j_var = carry ** 2 * tau / (1 - tau) ** 2 + d_var
            else:
                j_mean = Fraction(sum(i * x for i, x in enumerate(w)), TOTAL)
                j_var = Fraction(sum(i * i * x for i, x in enumerate(w)), TOTAL) - j_mean ** 2
            mean += level.unit * j_mean
            variance += level.unit ** 2 * j_var
        magnitude_second = variance + mean ** 2
        return 2 * magnitude_second / (2 - self.zero_probability)

    def survival(self, k: int) -> float:
        """``P(K > k)`` for an integer ``k`` (one-level tables; float, correctly up to rounding)."""
        if len(self.levels) != 1:
            raise NotImplementedError("survival() is implemented for one-level tables")
        k = int(k)
        known = self._survivals.get(k)
        if known is not None:
            return known
        if k < 0:
            return self._survivals.setdefault(k, 1.0 - self.survival(-k - 1))
        top = self.top
        carries, digit = divmod(k, top.size - 1)  # P(M > k) = tau^V (2^63 - cum(d)) / 2^63
        above = TOTAL - sum(top.weights[:digit + 1])
        log_tau = math.log(top.weights[-1]) - TOTAL_BITS * math.log(2)
        magnitude_above = math.exp(carries * log_tau) * above / TOTAL
        return self._survivals.setdefault(k, magnitude_above / (2 - float(self.zero_probability)))

    def cdf(self, k: int) -> float:
        """``P(K <= k)``."""
        return 1.0 - self.survival(k)

    def pmf_array(self, k) -> np.ndarray:
        """``P(K = k)`` as floats for an integer array ``k`` (one-level tables; each value correct up
        to float rounding): ``f(|k|) / (2 - f(0))`` with ``f(m) = tau^c w[d] / 2^63``, ``(c, d) =
        divmod(m, N_T - 1)``."""
        if len(self.levels) != 1:
            raise NotImplementedError("pmf_array() is implemented for one-level tables")
        top = self.top
        carries, digit = np.divmod(np.abs(np.asarray(k, dtype=np.int64)), top.size - 1)
        w = np.array(top.weights[:-1], dtype=np.float64) / TOTAL
        log_tau = math.log(top.weights[-1]) - TOTAL_BITS * math.log(2)
        return np.exp(carries * log_tau) * w[digit] / (2 - float(self.zero_probability))

    # -- sampling ------------------------------------------------------------------------
    def sample(self, shape, rng) -> np.ndarray:
        """Integer noise ``K`` (int64) of the given shape, in cache-sized blocks.
        Integers have no signed zero, so no output can be -0.0."""
        out = np.empty(shape, dtype=np.int64)
        self.fill(out.reshape(-1), rng)
        return out

    def fill(self, flat: np.ndarray, rng) -> None:
        """Draw K into the 1-D int64 array ``flat`` (reusable buffer, no allocation per call)."""
        rejected = []
        for start in range(0, flat.size, SAMPLE_BLOCK):
            stop = min(flat.size, start + SAMPLE_BLOCK)
            block, again = self._block(stop - start, rng)
            flat[start:stop] = block
            if again.size:
                rejected.append(again + start)
        redo = np.concatenate(rejected) if rejected else np.empty(0, dtype=np.int64)
        while redo.size:  # (S = -1, M = 0) is rejected and drawn again: zero has one sign
            block, again = self._block(redo.size, rng)
            flat[redo] = block
            redo = redo[again]

    def _block(self, count: int, rng) -> tuple[np.ndarray, np.ndarray]:
        """``count`` draws of ``S M`` and the positions of the rejected ``(S = -1, M = 0)``."""
        if len(self.levels) == 1:
            return self._one_level_block(count, rng)
        words = random_words(rng, count)
        first = self.levels[0]
        sign = -((words >> np.uint64(first.table.low_bits)) & np.uint64(1)).view(np.int64)  # 0 or -1
        symbol = first.table.symbols(words)
        magnitude = symbol
        for level in self.levels[1:]:
            symbol = level.table.symbols(random_words(rng, count))
            magnitude = magnitude + level.unit * symbol
        top = self.top
        carry = top.size - 1
        # the carry symbol adds N_T - 1 units and draws the top digit again (memoryless)
        pending = np.flatnonzero(symbol == carry)
        while pending.size:
            again = top.table.symbols(random_words(rng, pending.size))
            magnitude[pending] += top.unit * again
            pending = pending[again == carry]
        noise = (magnitude ^ sign) - sign  # M or -M
        zeros = np.flatnonzero(noise == 0)
        return noise, zeros[sign[zeros] != 0]

    def _one_level_block(self, count: int, rng) -> tuple[np.ndarray, np.ndarray]:
        """The same draw as the general path, with the sign folded into the table lookup."""
        table = self.top.table
        carry = self.top.size - 1
        noise = table.signed_symbols(random_words(rng, count))
        rare = np.flatnonzero(np.abs(noise) >= carry)  # a carry, or the marker -2^bits (one scan of the block)
        rejected = rare[noise[rare] == -(1 << table.bits)]
        pending = rare[np.abs(noise[rare]) == carry]
        while pending.size:  # carries keep their sign: S (M + N - 1 + ...)
            again = table.symbols(random_words(rng, pending.size))
            noise[pending] += np.sign(noise[pending]) * again
            pending = pending[again == carry]
        return noise, rejected

    def sum_of_samples(self, n: int, shape, rng) -> np.ndarray:
        """The sum of ``n`` iid draws of K, drawn from its exact law in O(table size) per entry
        (one-level tables): zeros, signs and magnitudes given M >= 1 by binomial,
        multinomial and negative binomial counts."""
        if len(self.levels) != 1:
            raise NotImplementedError("sum_of_samples() is implemented for one-level tables")
        w = np.array(self.top.weights, dtype=np.float64)
        f0 = float(self.zero_probability)
        zeros = rng.binomial(n, f0 / (2 - f0), size=shape)
        positive = rng.binomial(n - zeros, 0.5)
        return self._sum_nonzero(positive, w, rng) - self._sum_nonzero(n - zeros - positive, w, rng)

    def _sum_nonzero(self, counts: np.ndarray, w: np.ndarray, rng) -> np.ndarray:
        """Sums of ``counts`` iid magnitudes conditioned on M >= 1 (one-level table)."""
        counts = np.asarray(counts, dtype=np.int64)
        carry = w.size - 1
        body = w[:-1]
        # given M >= 1: either no carry and d >= 1, or at least one carry (V - 1 geometric)
        no_carry = rng.binomial(counts, (body.sum() - body[0]) / (TOTAL - body[0]))
        with_carry = counts - no_carry
        tau = w[-1] / TOTAL
        extra = np.zeros_like(with_carry)
        active = with_carry > 0
        extra[active] = rng.negative_binomial(with_carry[active], 1.0 - tau)
        total = carry * (with_carry + extra)
        digits = np.arange(carry, dtype=np.int64)
        total += (rng.multinomial(no_carry, body[1:] / body[1:].sum()) @ digits[1:]).reshape(total.shape)
        total += (rng.multinomial(with_carry, body / body.sum()) @ digits).reshape(total.shape)
        return total


def _extreme_ratios(num: list[int], den: list[int]) -> tuple[Fraction, Fraction]:
    """Exact min and max of ``num[i] / den[i]``: floats shortlist, integers decide."""
    approx = np.array(num, dtype=np.float64) / np.array(den, dtype=np.float64)
    out = []
    for pick in (np.min, np.max):
        extreme = pick(approx)
        close = np.flatnonzero(np.abs(approx - extreme) <= 1e-9 * abs(extreme))
        exact = [Fraction(num[i], den[i]) for i in close]
        out.append(min(exact) if pick is np.min else max(exact))
    return out[0], out[1]
