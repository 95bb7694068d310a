"""Mechanisms for bounded numbers: ``duchi``, ``piecewise`` and ``hybrid`` (docs/numeric.md).

Each maps ``x in [low, high]`` to ``t = 2 (x - low) / (high - low) - 1 in [-1, 1]``, rounds ``t``
without bias to a grid and sends one integer code from an exact finite channel
(:mod:`ldpest_numeric.lattice`).  ``mechanism.values(codes)`` turns codes into unbiased numbers
in the data's units.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cached_property

import numpy as np

from ldpest import Channel, DataError, ParameterError
from ldpest.privacy.exact import WORD, random_words, randomized_rounding, rounding_mixture, words_below
from ldpest.util.validation import check_positive_int

from .bounds import BoundedMechanism
from .lattice import (
    DuchiLattice,
    PiecewiseLattice,
    continuous_duchi_variance,
    continuous_hybrid_variance,
    continuous_piecewise_variance,
    hybrid_alpha,
    square_wave_width,
)

DEFAULT_STEPS = 1024


class NumericMechanism(BoundedMechanism):
    """Mechanisms that send one integer code whose value is unbiased for the (rounded) number."""

    default_estimator = "mean"
    parameter_help = {
        **BoundedMechanism.parameter_help,
        "low": "smallest value the data can take (the mean's lower bound)",
        "square_share": "share of devices that send x^2 instead of x (by a coin that ignores x), so that "
                        "the 'variance' estimator has both moments; 0 sends x only",
    }

    def __init__(self, *, epsilon, low, high, outside="refuse", units=None, square_share=0.0, names=None, **more):
        try:
            share = float(square_share)
        except (TypeError, ValueError):
            share = math.nan
        if isinstance(square_share, bool) or not 0 <= share < 1:
            raise ParameterError(f"square_share must be a number in [0, 1), got {square_share!r}")
        super().__init__(epsilon=epsilon, low=low, high=high, outside=outside, units=units, names=names,
                         square_share=share, **more)
        self._split = round(share * WORD)  # a device sends x^2 when a word is below it

    # -- the two parts: x, and (with square_share) x^2 through the same mechanism ---------------
    @property
    def square_bounds(self) -> tuple[float, float]:
        """The range of ``x^2`` for ``x in [low, high]``."""
        ends = (self.low ** 2, self.high ** 2)
        return (0.0 if self.low < 0 < self.high else min(ends)), max(ends)

    @cached_property
    def squares(self) -> NumericMechanism | None:
        """The same mechanism on ``x^2`` (its bounds :attr:`square_bounds`), or None without
        ``square_share``."""
        if self._split == 0:
            return None
        low, high = self.square_bounds
        params = {k: v for k, v in self._params.items() if k not in ("low", "high", "square_share", "units")}
        return type(self)(**params, low=low, high=high)

    @property
    def code_count(self) -> int:
        """Codes a report can take: the mechanism's own, twice with ``square_share`` (the second
        half for x^2)."""
        return len(self.code_values) * (2 if self._split else 1)

    def report_alphabet_size(self) -> int:
        """Reports are codes ``0 .. code_count - 1`` (Spark counts them where they are stored)."""
        return self.code_count

    @property
    def code_dtype(self):
        count = self.code_count
        return np.uint8 if count <= 1 << 8 else np.uint16 if count <= 1 << 16 else np.uint32

    def _privatize(self, x, rng):
        if self._split == 0:
            return self.sample_codes(x, rng).astype(self.code_dtype)
        squared = random_words(rng, x.shape[0]) < np.uint64(self._split)
        codes = np.empty(x.shape[0], dtype=self.code_dtype)
        first, second = np.flatnonzero(~squared), np.flatnonzero(squared)
        codes[first] = self.sample_codes(x[first], rng)
        codes[second] = len(self.code_values) + self.squares.sample_codes(x[second] ** 2, rng).astype(self.code_dtype)
        return codes

    def sample_codes(self, x, rng) -> np.ndarray:
        """The mechanism's code for each number of ``x`` (in ``[low, high]``)."""
        raise NotImplementedError

    def base_channel(self) -> Channel:
        """The channel of one number (without the x^2 split)."""
        raise NotImplementedError

    def channel(self) -> Channel:
        """Without ``square_share``, :meth:`base_channel`.  With it, the inputs are the pairs ``(j,
        k)`` of a grid point of x and one of x^2 that some x reaches (rounding x and x^2 each to its
        grid), and ``Q((part, code) | j, k) = (1 - s) Q_x(code | j)`` or ``s Q_x2(code | k)``: a
        number's law is the mixture of the pairs its two roundings give."""
        if self._split == 0:
            return self.base_channel()
        share = Fraction(self._split, WORD)
        first, second = (_levels_form(m.base_channel()) for m in (self, self.squares))
        pairs = self._square_pairs()
        levels = [(1 - share) * level for level in first[0]] + [share * level for level in second[0]]
        j, k = (np.array(side) for side in zip(*pairs, strict=True))
        pattern = np.concatenate([first[1][j], second[1][k] + len(first[0])], axis=1)
        inputs = [(float(a), float(b)) for a, b in zip(self.to_data_units(self.grid()[j]),
                                                        self.squares.to_data_units(self.squares.grid()[k]),
                                                        strict=True)]
        return Channel.from_levels(inputs, np.arange(self.code_count), levels, pattern)

    @cached_property
    def _pair_index(self) -> dict:
        return {pair: i for i, pair in enumerate(self._square_pairs())}

    def _square_pairs(self) -> list[tuple[int, int]]:
        """Every ``(j, k)`` that the roundings of some x in ``[low, high]`` can give together."""
        steps, square = len(self.grid()) - 1, self.squares
        square_steps = len(square.grid()) - 1
        edges = self.to_data_units(self.grid())
        pairs = set()
        for j in range(steps):
            a, b = edges[j], edges[j + 1]
            ys = [a * a, b * b] + ([0.0] if a < 0 < b else [])
            scaled = [(y - square.low) * (square_steps / (square.high - square.low)) for y in (min(ys), max(ys))]
            for k in range(max(math.floor(scaled[0]) - 1, 0), min(math.ceil(scaled[1]) + 1, square_steps) + 1):
                pairs.update({(j, k), (j + 1, k)})
        return sorted(pairs)

    def channel_mixture(self, x):
        rows, weights = rounding_mixture(x, self.low, self.high, len(self.grid()) - 1)
        if self._split == 0:
            return rows, weights
        square = self.squares
        rows2, weights2 = rounding_mixture(float(x) ** 2, square.low, square.high, len(square.grid()) - 1)
        index = self._pair_index
        pairs = [index[(int(j), int(k))] for j in rows for k in rows2]
        return np.array(pairs), np.outer(weights, weights2).ravel()

    # -- codes ---------------------------------------------------------------------------------
    @property
    def code_values(self) -> np.ndarray:
        """``value[code]`` in units of ``t``: unbiased for ``t`` (``E[value[code] | t] = t``)."""
        raise NotImplementedError

    @property
    def sign_code(self) -> int | None:
        """The code of Duchi's ``+C`` when every report is a Duchi sign (``duchi``, or ``hybrid`` at
        epsilon <= epsilon*): then the count of that code is Binomial(n, (1 - p) + p' (mu + 1) / 2)
        and the mean has an exact variance and interval.  None otherwise."""
        return None

    @property
    def keep(self) -> Fraction:
        """The implemented probability that a Duchi sign is kept."""
        raise NotImplementedError

    def sign_variance(self, t) -> np.ndarray:
        """``Var(value | t)`` of a Duchi sign report: ``C^2 - t^2`` (exact where p is near 1)."""
        raise NotImplementedError

    def values(self, codes) -> np.ndarray:
        """The unbiased number each report stands for, in the data's units; with ``square_share``,
        reports of x^2 (codes from ``len(code_values)`` on) stand for x^2, in squared units."""
        codes = self.encode_reports(codes).astype(np.int64)
        size = len(self.code_values)
        out = self.to_data_units(self.code_values[np.minimum(codes, size - 1)])
        if self._split:
            second = codes >= size
            out[second] = self.squares.to_data_units(self.code_values[codes[second] - size])
        return out

    def encode_reports(self, values) -> np.ndarray:
        values = np.asarray(values)
        if values.ndim == 2 and values.shape[1] == 1:
            values = values[:, 0]
        codes = self.code_count
        if values.ndim != 1 or values.dtype.kind not in "iuf":
            raise DataError(f"reports of {self.name!r} must be one column of integer codes 0..{codes - 1}")
        bad = ~np.isin(values, np.arange(codes)) if values.dtype.kind == "f" else (values < 0) | (values >= codes)
        if bad.any():
            raise DataError(f"reports of {self.name!r} must be integer codes 0..{codes - 1} (this epsilon and "
                            f"steps), got {values[bad][0]!r}", row=int(np.flatnonzero(bad)[0]))
        return values.astype(self.code_dtype)

    def check_encoded_reports(self, values):
        return self.encode_reports(values)

    # -- variances -----------------------------------------------------------------------------
    def grid(self) -> np.ndarray:
        """The grid points ``t_j`` the input is rounded to."""
        raise NotImplementedError

    def report_variance(self, t) -> np.ndarray:
        """``Var(value | t)`` at grid points ``t`` (units of ``t``), from the implemented channel."""
        raise NotImplementedError

    def rounding_variance(self) -> float:
        """The most the unbiased rounding adds to ``Var(value | x)`` off the grid: ``(step / 2)^2``."""
        return (1.0 / (len(self._grid) - 1)) ** 2

    def worst_case_variance(self) -> float:
        """``max_x Var(value | x)`` in units of ``t``: n times the variance of the mean of t's."""
        return self._grid_variances[1] + self.rounding_variance()

    def least_variance(self) -> float:
        """``min_x Var(value | x)``: every data law's report variance is at least this."""
        return self._grid_variances[0]

    def least_variance_at(self, mean_t) -> np.ndarray:
        """The least ``Var(value)`` of any data law whose mean (units of ``t``) is ``mean_t``.

        Randomized rounding turns every input into a law on the grid with the same mean, so the
        reports' law is always that of some grid law ``w``; their second moment is
        ``sum_j w_j m(t_j)`` with ``m(t) = Var(value | t) + t^2``.  Its least value at mean ``mu``
        is the lower convex envelope of ``m`` at ``mu``; ``m`` is convex on the grid (a quadratic
        for piecewise and hybrid, a constant for Duchi), so that is the linear interpolation, and
        the bound is ``m_interp(mu) - mu^2`` (docs/numeric.md, "The estimate").  Means outside
        ``[-1, 1]`` are taken at the nearest bound."""
        mean_t = np.clip(np.asarray(mean_t, dtype=np.float64), -1.0, 1.0)
        return np.interp(mean_t, self._grid, self._second_moments) - mean_t ** 2

    @cached_property
    def _grid(self) -> np.ndarray:
        """:meth:`grid`, once (the mechanism is immutable)."""
        return self.grid()

    @cached_property
    def _second_moments(self) -> np.ndarray:
        """``m(t_j) = Var(value | t_j) + t_j^2`` on the grid, once."""
        second = self.report_variance(self._grid) + self._grid ** 2
        if np.any(np.diff(second, 2) < -1e-12 * np.abs(second).max()):  # the envelope would not be the interpolation
            raise AssertionError(f"{self.name}: the reports' second moment is not convex on the grid")
        return second

    @cached_property
    def _grid_variances(self) -> tuple[float, float]:
        """The least and the largest ``Var(value | t_j)`` over the grid (once: the mechanism is immutable)."""
        variances = self.report_variance(self.grid())
        return float(variances.min()), float(variances.max())

    def continuous_worst_case_variance(self) -> float:
        """The published closed form of the continuous mechanism (the anchor of docs/numeric.md)."""
        raise NotImplementedError



class Duchi(NumericMechanism):
    """Duchi, Jordan and Wainwright (2018), 1-D: ``+-C`` by randomized response on the sign of the
    rounded input (:class:`ldpest_numeric.lattice.DuchiLattice`).  Worst-case variance ``C^2``."""

    name = "duchi"
    sign_code = 1

    def __init__(self, *, epsilon, low, high, outside="refuse", units=None, square_share=0.0, names=None):
        super().__init__(epsilon=epsilon, low=low, high=high, outside=outside, units=units, square_share=square_share,
                         names=names)
        self._lattice = DuchiLattice(self.epsilon)
        self._lattice.values  # noqa: B018  refuse an epsilon too small for the 64-bit threshold now

    @property
    def keep(self) -> Fraction:
        return self._lattice.keep

    def sign_variance(self, t):
        return self._lattice.variance(t)

    @property
    def code_values(self):
        return self._lattice.values

    def grid(self):
        return np.array([-1.0, 1.0])

    def report_variance(self, t):
        return self._lattice.variance(t)

    def continuous_worst_case_variance(self):
        return continuous_duchi_variance(self.epsilon)

    def sample_codes(self, x, rng):
        return self._lattice.sample((x - self.low) / (self.high - self.low), rng)

    def base_channel(self):
        return Channel([self.low, self.high], np.array([0, 1]), np.array(self._lattice.rows(), dtype=object))


class _Lattice(NumericMechanism):
    """A mechanism whose input is rounded to ``steps + 1`` grid points."""

    parameter_help = {**NumericMechanism.parameter_help,
                      "steps": "grid steps the input is rounded to (unbiased); at 1024 the worst-case "
                               "variance is at most 0.1% above the continuous mechanism's"}

    def __init__(self, *, epsilon, low, high, outside="refuse", units=None, square_share=0.0, names=None,
                 steps=DEFAULT_STEPS):
        steps = check_positive_int("steps", steps)
        if steps > 1 << 15:
            raise ParameterError(f"steps must be at most 2^15 = 32768, got {steps}")
        super().__init__(epsilon=epsilon, low=low, high=high, outside=outside, units=units,
                         square_share=square_share, names=names, steps=steps)
        self._piecewise = PiecewiseLattice(self.epsilon, steps, self.window_width())
        self._piecewise.values  # noqa: B018  refuse an epsilon too small for the 64-bit threshold now

    def window_width(self) -> float | None:
        """The output window's width in units of the input range (None: the piecewise one)."""
        return None

    @property
    def lattice(self) -> PiecewiseLattice:
        """The piecewise lattice (of the piecewise branch, for the hybrid)."""
        return self._piecewise

    def grid(self):
        steps = self._params["steps"]
        return -1.0 + 2.0 * np.arange(steps + 1) / steps

    def _grid_inputs(self) -> list[float]:
        return self.to_data_units(self.grid()).tolist()


class Piecewise(_Lattice):
    """Wang et al. (2019)'s piecewise mechanism on a lattice of ``W + steps`` cells
    (:class:`ldpest_numeric.lattice.PiecewiseLattice`)."""

    name = "piecewise"

    @property
    def code_values(self):
        return self._piecewise.values

    def report_variance(self, t):
        return self._piecewise.variance(t)

    def continuous_worst_case_variance(self):
        return continuous_piecewise_variance(self.epsilon)

    def sample_codes(self, x, rng):
        j = randomized_rounding(x, self.low, self.high, self._params["steps"], rng)
        inside = words_below(rng, x.shape[0], self._piecewise.threshold)
        return self._piecewise.sample(j, inside, rng)

    def base_channel(self):
        lattice = self._piecewise
        return Channel.from_levels(self._grid_inputs(), np.arange(lattice.cells), lattice.levels, lattice.pattern())


class SquareWave(Piecewise):
    """Li, Wang, Lopuhaa-Zwakenberg, Skoric and Li (2020)'s square wave on a lattice: the piecewise
    lattice with the window ``2b`` of the continuous square wave (``square_wave_width``), whose
    reports are made for the ``ems`` distribution estimator.  Its codes keep the affine unbiased
    values, so ``mean`` (and ``variance``) work on them too."""

    name = "square-wave"
    default_estimator = "ems"
    example_params = {"low": 0, "high": 1}

    def window_width(self):
        return square_wave_width(self.epsilon)

    def continuous_worst_case_variance(self):
        raise NotImplementedError("square wave is made for distributions; its mean's variance is the lattice's")


class Hybrid(_Lattice):
    """Wang et al. (2019)'s hybrid: the piecewise lattice with probability ``alpha``, else Duchi
    (:mod:`ldpest_numeric.lattice`).  Codes ``0 .. N - 1`` are piecewise cells, ``N`` and ``N + 1``
    Duchi's ``-C`` and ``+C``."""

    name = "hybrid"

    def __init__(self, **params):
        super().__init__(**params)
        self._duchi = DuchiLattice(self.epsilon)
        self._mix = round(hybrid_alpha(self.epsilon) * WORD)  # piecewise when a word is below it
        self._duchi.values  # noqa: B018

    @property
    def sign_code(self):
        return self._piecewise.cells + 1 if self._mix == 0 else None

    @property
    def keep(self) -> Fraction:
        return self._duchi.keep

    def sign_variance(self, t):
        return self._duchi.variance(t)

    @property
    def alpha(self) -> Fraction:
        """The implemented probability of the piecewise branch."""
        return Fraction(self._mix, WORD)

    @cached_property
    def code_values(self):
        values = np.concatenate([self._piecewise.values, self._duchi.values])
        values.flags.writeable = False  # shared by every estimate of this mechanism
        return values

    def report_variance(self, t):
        """``alpha Var_PM(t) + (1 - alpha) Var_Duchi(t)``: both branches are unbiased for ``t``, so
        the mixture adds no spread between them (and nothing cancels when alpha is near 1)."""
        alpha = self.alpha
        return float(alpha) * self._piecewise.variance(t) + float(1 - alpha) * self._duchi.variance(t)

    def continuous_worst_case_variance(self):
        return continuous_hybrid_variance(self.epsilon)

    def sample_codes(self, x, rng):
        """Each record's branch first (a word against ``alpha 2^64``), then each branch on its records."""
        steps, cells = self._params["steps"], self._piecewise.cells
        piecewise = random_words(rng, x.shape[0]) < np.uint64(self._mix) if self._mix < WORD else np.ones(len(x), bool)
        codes = np.empty(x.shape[0], dtype=np.uint32)
        chosen, others = np.flatnonzero(piecewise), np.flatnonzero(~piecewise)
        j = randomized_rounding(x[chosen], self.low, self.high, steps, rng)
        inside = words_below(rng, chosen.size, self._piecewise.threshold)
        codes[chosen] = self._piecewise.sample(j, inside, rng)
        signs = self._duchi.sample((x[others] - self.low) / (self.high - self.low), rng)
        codes[others] = cells + signs.astype(np.uint32)
        return codes

    def base_channel(self):
        """Levels: the two piecewise levels times alpha, and Duchi's ``P(code | x)`` times
        ``1 - alpha`` at each grid point (a record's law is the mixture of the grid points' rows
        that its rounding to the grid gives: Duchi's probability is affine in x)."""
        steps, lattice = self._params["steps"], self._piecewise
        alpha, p = self.alpha, self._duchi.keep
        duchi_plus = [(1 - alpha) * ((1 - p) + (2 * p - 1) * Fraction(j, steps)) for j in range(steps + 1)]
        levels = [alpha * lattice.levels[0], alpha * lattice.levels[1], *duchi_plus]
        j = np.arange(steps + 1)
        pattern = np.concatenate([lattice.pattern().astype(np.int64),
                                  (2 + steps - j)[:, None], (2 + j)[:, None]], axis=1)  # P(-C | j) = P(+C | steps - j)
        return Channel.from_levels(self._grid_inputs(), np.arange(lattice.cells + 2), levels, pattern)


def code_law(mechanism: NumericMechanism, points, weights) -> np.ndarray:
    """The law of one report's code when the data is ``points[i]`` with probability ``weights[i]``:
    the channel's rows mixed as the rounding mixes them (exact counts of n reports are then one
    multinomial draw; the tests' coverage studies use it)."""
    channel = mechanism.channel()
    law = np.zeros(channel.shape[1])
    for point, weight in zip(points, weights, strict=True):
        rows, mix = mechanism.channel_mixture(point)
        for row, share in zip(rows, mix, strict=True):
            law += weight * share * channel.row(int(row))
    return law / law.sum()


def _levels_form(channel: Channel) -> tuple[list, np.ndarray]:
    """``(levels, pattern)`` of a channel, dense or structured (a dense one's distinct entries)."""
    if channel.levels is not None:
        return list(channel.levels), np.asarray(channel.pattern)
    dense = channel.dense()
    levels = sorted(set(dense.ravel().tolist()))
    rank = {level: i for i, level in enumerate(levels)}
    return levels, np.vectorize(rank.__getitem__, otypes=[np.int64])(dense)
