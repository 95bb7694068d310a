"""The exact channels of the numeric mechanisms, in the units ``t in [-1, 1]`` (docs/numeric.md).

Every mechanism first rounds ``x in [low, high]`` without bias to a grid of ``steps + 1`` points
``t_j = -1 + 2 j / steps`` (``ldpest.privacy.exact.randomized_rounding``), then sends an integer
code drawn from a finite channel.  A code ``k`` stands for the number ``value[k]`` with
``E[value | t_j] = t_j`` at every grid point, so the mean of the values is unbiased for the mean
of ``t`` for any data (the rounding is unbiased too).

**Duchi et al. (2018), 1-D.**  Round to ``{-1, +1}`` (``steps = 1``), keep the sign with
probability ``p = T / 2^64``, ``T = keep_threshold(epsilon)`` (``p / (1 - p) <= e^epsilon``,
proven), else flip it: one word per report against a clamped integer threshold
(:meth:`DuchiLattice.sample`).  Code 1 is ``+C``, code 0 is ``-C`` with ``C = 1 / (2p - 1)``; at the float
``p = e^eps / (1 + e^eps)`` this is Duchi's ``C = (e^eps + 1) / (e^eps - 1)``.
``Var(value | t) = C^2 - t^2``.

**Piecewise (Wang et al. 2019), on a lattice.**  The continuous mechanism sends a number in
``[-C, C]``, ``C = (e^(eps/2) + 1) / (e^(eps/2) - 1)``, uniform on a window of width ``C - 1``
that slides with ``t`` with probability ``e^(eps/2) / (e^(eps/2) + 1)``, else uniform outside it.
Here the output is one of ``N = W + steps`` cells: the window of grid point ``j`` is the ``W``
cells ``j .. j + W - 1`` (``W = round(steps e^(-eps/2))``, at least 1: the window's share
``W / N`` is the continuous ``1 / (e^(eps/2) + 1)``), and the other ``steps`` cells are its
outside.  The cell falls in the window when a word is below ``T = window_threshold(eps, W,
steps)``, then uniformly there, else uniformly outside: each cell has the probability
``P_in = T / (2^64 W)`` or ``P_out = (2^64 - T) / (2^64 steps)``, a two-level channel whose ratio
``P_in / P_out <= e^epsilon`` is proven.  ``E[k | j] = A0 + A1 j`` with ``A1 = (P_in - P_out) W``
(the window's sum of indices moves by ``W`` per step), so ``value[k] = a (k - A0) - 1`` with
``a = 2 / (steps A1)`` is unbiased.  As ``steps`` grows the lattice tends to the continuous
mechanism, whose worst-case variance is ``1 / (e^(eps/2) - 1) + (e^(eps/2) + 3) / (3 (e^(eps/2) -
1)^2)`` (at ``|t| = 1``); at ``steps = 1024`` the lattice's is at most 0.1% above it (measured:
+0.003% at epsilon 1, -0.2% at 4, -1.2% at 8; tests/plugins/test_numeric.py).

**Hybrid (Wang et al. 2019).**  With probability ``alpha`` (a 64-bit threshold, independent of
the data) the piecewise lattice, else Duchi; codes ``0 .. N - 1`` are the piecewise cells and
``N``, ``N + 1`` Duchi's ``-C``, ``+C``.  A mixture of epsilon-private channels with weights that
do not depend on the data is epsilon-private.  ``alpha = 1 - e^(-eps/2)`` where that lowers the
worst-case variance below Duchi's (epsilon above ``epsilon_star()`` = 0.6094), else 0: then the
variance no longer depends on ``t``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cache, cached_property

import numpy as np

from ldpest.privacy.exact import WORD, keep_threshold, random_words, require_gap, window_threshold


def continuous_duchi_variance(epsilon: float) -> float:
    """Worst case over ``t in [-1, 1]`` of Duchi's ``Var = C^2 - t^2``: ``C^2`` (at ``t = 0``)."""
    return (math.expm1(epsilon) + 2) ** 2 / math.expm1(epsilon) ** 2


def piecewise_constant(epsilon: float) -> float:
    """``(e^(eps/2) + 3) / (3 (e^(eps/2) - 1)^2)``: the continuous piecewise variance at ``t = 0``."""
    half = math.expm1(epsilon / 2)
    return (half + 4) / (3 * half ** 2)


def continuous_piecewise_variance(epsilon: float) -> float:
    """Worst case over ``t`` of ``t^2 / (e^(eps/2) - 1) + piecewise_constant``: at ``|t| = 1``."""
    return 1 / math.expm1(epsilon / 2) + piecewise_constant(epsilon)


def hybrid_alpha(epsilon: float) -> float:
    """Wang et al.'s mixing: ``1 - e^(-eps/2)`` above :func:`epsilon_star`, else 0."""
    return -math.expm1(-epsilon / 2) if epsilon > epsilon_star() else 0.0


def continuous_hybrid_variance(epsilon: float) -> float:
    """``alpha piecewise_constant + (1 - alpha) C^2`` (the same at every ``t``), or Duchi's ``C^2``."""
    alpha = hybrid_alpha(epsilon)
    return alpha * piecewise_constant(epsilon) + (1 - alpha) * continuous_duchi_variance(epsilon)


def square_wave_width(epsilon: float) -> float:
    """Li et al. (2020)'s window ``2b`` on an input range of 1, ``b = (eps e^eps - e^eps + 1) / (2 e^eps
    (e^eps - 1 - eps))`` (the b that maximises the mutual information of input and output)."""
    e = math.exp(min(epsilon, 700.0))
    return 2 * (epsilon * e - e + 1) / (2 * e * (math.expm1(epsilon) - epsilon))


@cache
def epsilon_star() -> float:
    """Where the mixed variance at ``alpha = 1 - e^(-eps/2)`` equals Duchi's: ``piecewise_constant =
    C^2`` (0.6094).  A function, so that loading the plugin does not import scipy.optimize."""
    from scipy.optimize import brentq

    return brentq(lambda e: piecewise_constant(e) - continuous_duchi_variance(e), 0.1, 2.0, xtol=1e-15)


@dataclass(frozen=True)
class DuchiLattice:
    """Duchi's two codes (module docstring)."""

    epsilon: float

    @cached_property
    def threshold(self) -> int:
        return keep_threshold(self.epsilon)

    @cached_property
    def keep(self) -> Fraction:
        return Fraction(self.threshold, WORD)

    @cached_property
    def values(self) -> np.ndarray:
        """``value[code]``: ``-C`` and ``+C`` with ``C = 1 / (2p - 1)`` at the implemented ``p``."""
        gap = float(2 * self.keep - 1)
        require_gap(gap, self.epsilon, "duchi")
        return np.array([-1.0 / gap, 1.0 / gap])

    def sample(self, share: np.ndarray, rng) -> np.ndarray:
        """Codes for inputs at ``share = (t + 1) / 2`` in ``[0, 1]``: one coin each, 16 random bits
        and 48 more only on a tie (as :func:`ldpest.privacy.exact.words_below`).

        Rounding to a sign and then keeping it is the same as one coin with ``P(code 1) = (1 - p) +
        (2p - 1) share``.  With that probability as a float ``P``, the coin is ``word < T_x``,
        ``T_x = clamp(floor(P 2^64), 2^64 - T, T)``: every input's ratio ``P(code | x) / P(code |
        x')`` stays proven ``<= T / (2^64 - T)``, and the float moves ``P`` from the exact mixture
        by at most 2^-53, which costs no privacy, only that much unbiasedness (as the rounding coin
        does elsewhere).  ``T_x``'s top 16 bits are ``clamp(floor(P 2^16))`` (clamping commutes
        with the shift), so only ties need the rest: ``floor(frac(P 2^16) 2^48)``, exact in float."""
        low, high = WORD - self.threshold, self.threshold
        prob = (low / WORD) + np.asarray(share, dtype=np.float64) * ((high - low) / WORD)
        scaled = prob * 65536.0
        top = np.minimum(np.maximum(scaled.astype(np.int32), low >> 48), high >> 48).astype(np.uint16)
        count = top.size
        heads = random_words(rng, -(-count // 4)).view(np.uint16)[:count].reshape(top.shape)
        below = heads < top
        ties = np.flatnonzero(heads == top)
        if ties.size:
            tied = scaled.ravel()[ties]
            head = np.floor(tied)
            tail = np.floor((tied - head) * 2.0 ** 48)
            whole = head >= 65536  # P = 1: T_x = 2^64 before clamping
            head, tail = np.where(whole, 65535, head), np.where(whole, 2.0 ** 48 - 1, tail)
            raw = (head.astype(np.uint64) << np.uint64(48)) | tail.astype(np.uint64)
            exact = np.minimum(np.maximum(raw, np.uint64(low)), np.uint64(high))
            below.ravel()[ties] = ((random_words(rng, ties.size) >> np.uint64(16))
                                   < (exact & np.uint64((1 << 48) - 1)))
        return below.astype(np.uint8)

    def rows(self) -> list[list[Fraction]]:
        """The exact channel from ``t = -1, +1`` to codes 0, 1."""
        p = self.keep
        return [[p, 1 - p], [1 - p, p]]

    def variance(self, t) -> np.ndarray:
        """``Var(value | t) = C^2 - t^2 = ((1 - g^2) + g^2 (1 - t^2)) / g^2`` with ``g = 2p - 1``:
        ``1 - g^2`` exactly from the threshold, so that it stays positive when ``p`` rounds to 1."""
        gap = 2 * self.keep - 1
        t = np.asarray(t, dtype=np.float64)
        return float(1 - gap ** 2) / float(gap) ** 2 + (1 - t) * (1 + t)


@dataclass(frozen=True)
class PiecewiseLattice:
    """The piecewise mechanism on ``steps + 1`` inputs and ``W + steps`` cells (module docstring)."""

    epsilon: float
    steps: int
    window: float | None = None  # the window's width in units of the input range; None: piecewise's

    @cached_property
    def inside(self) -> int:
        """``W``, the cells of one window: ``steps e^(-eps/2)`` for piecewise (its share of the
        output is ``1 / (e^(eps/2) + 1)``), ``steps * window`` for square wave."""
        width = math.exp(-self.epsilon / 2) if self.window is None else self.window
        return max(1, round(self.steps * width))

    @property
    def cells(self) -> int:
        return self.inside + self.steps

    @cached_property
    def threshold(self) -> int:
        return window_threshold(self.epsilon, self.inside, self.steps)

    @cached_property
    def levels(self) -> tuple[Fraction, Fraction]:
        """``(P_in, P_out)``: the exact probability of a cell inside and outside the window."""
        return (Fraction(self.threshold, WORD * self.inside), Fraction(WORD - self.threshold, WORD * self.steps))

    @cached_property
    def _affine(self) -> tuple[float, float]:
        """``(A0, A1)`` of ``E[k | j] = A0 + A1 j``, from the exact levels."""
        p_in, p_out = self.levels
        w, cells = self.inside, self.cells
        a1 = (p_in - p_out) * w
        a0 = p_out * Fraction(cells * (cells - 1), 2) + (p_in - p_out) * Fraction(w * (w - 1), 2)
        require_gap(float(a1), self.epsilon, "piecewise")
        return float(a0), float(a1)

    @cached_property
    def values(self) -> np.ndarray:
        """``value[k] = a (k - A0) - 1``, ``a = 2 / (steps A1)``: unbiased for ``t_j``."""
        a0, a1 = self._affine
        scale = 2.0 / (self.steps * a1)
        return scale * (np.arange(self.cells, dtype=np.float64) - a0) - 1.0

    def pattern(self) -> np.ndarray:
        """``pattern[j, k]``: 0 where cell ``k`` is in the window of grid point ``j``, else 1."""
        j = np.arange(self.steps + 1)[:, None]
        k = np.arange(self.cells)[None, :]
        return np.where((k >= j) & (k < j + self.inside), 0, 1).astype(np.int8)

    def sample(self, j: np.ndarray, inside: np.ndarray, rng) -> np.ndarray:
        """The cell of each grid index ``j``, given the window coins ``inside`` (words below the
        threshold): uniform on the window, or uniform on the ``steps`` cells outside it."""
        code = np.empty(j.shape, dtype=np.int64)
        hit = np.flatnonzero(inside)
        code[hit] = j[hit] + rng.integers(0, self.inside, size=hit.size)
        miss = np.flatnonzero(~inside)
        other = rng.integers(0, self.steps, size=miss.size)
        code[miss] = other + (other >= j[miss]) * self.inside  # no branch per record
        return code

    def variance(self, t) -> np.ndarray:
        """``Var(value | t_j)`` at grid points ``t``: with ``q`` the window's probability (exact),
        ``Var(k | j) = q Var_in + (1 - q) Var_out + q (1 - q) (E_in - E_out)^2``, the window uniform
        on ``W`` consecutive cells (``Var_in = (W^2 - 1) / 12``) and the outside uniform on the other
        ``steps`` cells; no term cancels, so it stays positive when ``q`` is within 2^-64 of 1."""
        j = np.rint((np.asarray(t, dtype=np.float64) + 1) * self.steps / 2)
        w, steps, cells = self.inside, self.steps, self.cells
        q = Fraction(self.threshold, WORD)
        sums = lambda upto: (upto - 1) * upto / 2  # noqa: E731  sum of k for k < upto
        squares = lambda upto: (upto - 1) * upto * (2 * upto - 1) / 6  # noqa: E731  sum of k^2, k < upto
        mean_in = j + (w - 1) / 2
        mean_out = (sums(cells) - (sums(j + w) - sums(j))) / steps
        second_out = (squares(cells) - (squares(j + w) - squares(j))) / steps
        var_in, var_out = (w * w - 1) / 12, second_out - mean_out ** 2
        q_in, q_out = float(q), float(1 - q)
        variance = q_in * var_in + q_out * var_out + q_in * q_out * (mean_in - mean_out) ** 2
        scale = 2.0 / (steps * self._affine[1])
        return scale ** 2 * variance
