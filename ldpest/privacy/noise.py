"""Laplace noise on a dyadic lattice with an exactly verified privacy loss
(defence against Mironov 2012; docs/privacy.md).

Textbook Laplace noise drawn as floats leaks the input through the low-order
bits of ``x + noise``.  ldpest never adds float noise.  Every Laplace
mechanism releases

    Z = g * clamp(round(v) + K, -2^52, 2^52)

on the lattice ``g * Z`` (``g = 2^-m``, about 2^-8 of the noise scale, and at
most 1/2 when inputs are lattice points such as one-hot vectors):

* ``round(v)`` is ``v / g`` for lattice inputs, else unbiased randomised
  rounding onto the lattice (``E[round(v)] = v / g``);
* ``K`` is the integer discrete Laplace noise of
  :mod:`ldpest.privacy.discrete_laplace`, drawn from integer tables with 64-bit words;
* the clamp never changes an output in practice (it would need about 2^40
  carries in a row) but makes every output an exact float: it is
  post-processing, so it cannot weaken privacy.

Privacy, proven from the tables at construction (:meth:`LatticeLaplace.verify`):
two inputs differ after rounding by at most ``L`` lattice steps in l1
(``L = sensitivity / g`` for lattice inputs; ``floor(sensitivity / g) + 2 width``
with rounding), and the implemented law changes by at most
``loss_per_step = max_m |log f(m) / f(m + 1)|`` per step, so the worst log
likelihood ratio of any output is at most ``L * loss_per_step <= epsilon``:
delta = 0 exactly, tails, signs and zeros included.

The noise variance the estimators use is the implemented law's exact
``g^2 E[K^2]`` (within about 1e-6 of the continuous ``2 b^2``, ``b = sensitivity
/ epsilon``).  Outputs are dyadic rationals, so sums over reports are exact
(:class:`~ldpest.stats.exactsum.ExactSum`) whatever the order.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..util.errors import ParameterError
from .discrete_laplace import (
    MAX_STEPS_PER_UNIT_LOSS,
    DiscreteLaplaceLaw,
    discrete_laplace_law,
)
from .exact import log_ratio, ratio_within

STEP_BITS = 8  # the lattice step is 2^-8 to 2^-9 of the noise scale (or of a coordinate's range)
OUTPUT_LIMIT = 1 << 52  # |output| in lattice steps: every such integer times g is an exact float
MAX_EPSILON = 2.0 ** 32  # beyond, lattice inputs would come close to OUTPUT_LIMIT
_ROW_BLOCK_ELEMENTS = 1 << 18  # noise values per block of one-hot reports


def lattice_step(scale: float, coordinate_range: float | None = None, *, on_lattice: bool = True) -> float:
    """``g = 2^(floor(log2 reference) - 8)`` with ``reference = min(scale, coordinate_range)``,
    at most 1/2 for lattice inputs (so that 1 and 1/2 are lattice points)."""
    reference = scale if coordinate_range is None else min(scale, coordinate_range)
    exponent = math.floor(math.log2(reference)) - STEP_BITS
    if on_lattice:
        exponent = min(exponent, -1)
    return math.ldexp(1.0, exponent)


class LatticeLaplace:
    """Laplace noise for inputs of l1 sensitivity ``sensitivity`` at level ``epsilon``.

    ``on_lattice=True`` promises that inputs are lattice points (one-hot
    vectors, or the zero vector), so no rounding happens.  Otherwise
    ``width`` coordinates are randomly rounded, which adds at most 2 steps per
    coordinate to the sensitivity, and the step is also at most 2^-8 of one
    coordinate's range ``sensitivity / width`` so that this costs < 1%.
    ``one_level=True`` (one-hot mechanisms) asks for a one-table law, which
    has an exact CDF and an exact aggregate simulation.
    """

    def __init__(self, epsilon: float, sensitivity: float, *, on_lattice: bool, width: int = 0,
                 one_level: bool = False):
        self.epsilon = float(epsilon)
        if self.epsilon > MAX_EPSILON:
            raise ParameterError(f"epsilon = {self.epsilon:g} is above the largest supported for Laplace noise "
                                 f"({MAX_EPSILON:g})")
        self.nominal_scale = float(sensitivity) / self.epsilon  # b of the continuous mechanism
        self.on_lattice = bool(on_lattice)
        coordinate_range = None if on_lattice else float(sensitivity) / width
        self.step = lattice_step(self.nominal_scale, coordinate_range, on_lattice=on_lattice)
        in_steps = float(sensitivity) / self.step  # exact: the step is a power of two
        if on_lattice:
            if not in_steps.is_integer():
                raise ValueError(f"sensitivity {sensitivity} is not a multiple of the lattice step {self.step}")
            self.sensitivity_steps = int(in_steps)
        else:
            self.sensitivity_steps = math.floor(in_steps) + 2 * int(width)
        self.sensitivity = self.sensitivity_steps * self.step  # effective l1 sensitivity on the lattice
        self.steps_per_unit_loss = self.sensitivity_steps / self.epsilon  # t
        if self.steps_per_unit_loss > MAX_STEPS_PER_UNIT_LOSS or (
                one_level and 4 * self.steps_per_unit_loss >= 1 << 16):
            limit = self.sensitivity_steps / (MAX_STEPS_PER_UNIT_LOSS if not one_level else (1 << 14))
            raise ParameterError(f"epsilon = {self.epsilon:g} is too small for exact Laplace noise here: "
                                 f"epsilon must be greater than {limit:.6g}")
        # the integer tables round their weights; where that rounding eats the margin (t near the top
        # of its range: up to 3e-4 relative), the budget per step shrinks by the excess measured, and
        # the tables are rebuilt until the proof holds (the noise wider by as much)
        for _ in range(8):
            self.law: DiscreteLaplaceLaw = discrete_laplace_law(self.steps_per_unit_loss)
            if self.proven():
                break
            self.steps_per_unit_loss *= self.privacy_loss / self.epsilon * (1 + 2.0 ** -20)
            if self.steps_per_unit_loss > MAX_STEPS_PER_UNIT_LOSS:
                raise ParameterError(f"epsilon = {self.epsilon:g} is too small for exact Laplace noise here: "
                                     f"its integer tables cannot prove it (epsilon must be greater than "
                                     f"{self.sensitivity_steps / MAX_STEPS_PER_UNIT_LOSS * 1.001:.6g})")
        self.verify()

    # -- the privacy proof ---------------------------------------------------------------
    @property
    def privacy_loss(self) -> float:
        """The proven worst log likelihood ratio, ``L * loss_per_step`` (<= epsilon)."""
        num, den = self.law.loss_per_step
        return self.sensitivity_steps * log_ratio(num, den)

    def proven(self) -> bool:
        """``L * loss_per_step <= epsilon``, proven from the tables (exact integers, 60-digit logs)."""
        num, den = self.law.loss_per_step
        return ratio_within(num, den, self.epsilon, power=self.sensitivity_steps)

    def verify(self) -> None:
        """Refuse to run unless :meth:`proven`: a ParameterError naming the epsilon."""
        if not self.proven():
            raise ParameterError(f"epsilon = {self.epsilon:g} cannot be proven for exact Laplace noise with "
                                 f"{self.sensitivity_steps} lattice steps (loss {self.privacy_loss:.17g}); "
                                 "use a slightly larger epsilon")

    # -- the law ---------------------------------------------------------------------------
    @property
    def variance(self) -> float:
        """Exact variance of one noise coordinate: ``g^2 E[K^2]``."""
        return self.step ** 2 * float(self.law.second_moment)

    def pmf_steps(self, k: int) -> Fraction:
        """``P(K = k)`` of the integer noise, exactly."""
        return self.law.pmf(k)

    def cdf_steps(self, k: int) -> float:
        """``P(K <= k)`` (one-level laws)."""
        return self.law.cdf(int(k))

    def sum_of_noise(self, n: int, shape, rng) -> np.ndarray:
        """The sum of ``n`` iid integer noises, drawn from its exact law in O(table) per entry."""
        return self.law.sum_of_samples(int(n), shape, rng)

    # -- sampling ----------------------------------------------------------------------------
    def integer_noise(self, shape, rng) -> np.ndarray:
        """The integer noise ``K`` (int64)."""
        return self.law.sample(shape, rng)

    def lattice_noise(self, shape, rng) -> np.ndarray:
        """``g K`` as float64 (exact lattice points; never -0.0)."""
        return self._to_values(self.law.sample(shape, rng))

    def _to_values(self, steps: np.ndarray) -> np.ndarray:
        np.clip(steps, -OUTPUT_LIMIT, OUTPUT_LIMIT, out=steps)  # post-processing (module doc)
        return steps * self.step  # int64 -> float64 exactly; 0 becomes +0.0

    def round_to_lattice(self, values: np.ndarray, rng) -> np.ndarray:
        """Unbiased randomised rounding onto the lattice, in steps (int64)."""
        scaled = np.asarray(values, dtype=np.float64) / self.step
        low = np.floor(scaled)
        up = rng.random(scaled.shape) < (scaled - low)
        return (low + up).astype(np.int64)

    def privatize(self, values: np.ndarray, rng) -> np.ndarray:
        """``g * clamp(round(values) + K)`` for an ``(n, width)`` array, vectorised."""
        values = np.asarray(values, dtype=np.float64)
        if self.on_lattice:
            steps = values / self.step
            if not np.array_equal(steps, np.rint(steps)):
                raise ValueError("inputs declared on the lattice are not lattice points")
            steps = steps.astype(np.int64)
        else:
            steps = self.round_to_lattice(values, rng)
        steps += self.law.sample(values.shape, rng)
        return self._to_values(steps)

    def one_hot(self, cells: np.ndarray, width: int, rng) -> np.ndarray:
        """Reports ``e_cell + noise`` of shape ``(n, width)``; a cell of -1 gives pure noise
        (the zero vector is within l1 distance 1 of every one-hot vector)."""
        cells = np.asarray(cells, dtype=np.int64)
        n = cells.shape[0]
        out = np.empty((n, width), dtype=np.float64)
        unit = round(1.0 / self.step)
        rows = max(1, _ROW_BLOCK_ELEMENTS // max(width, 1))
        buffer = np.empty(min(rows, n) * width, dtype=np.int64)  # reused: no page faults per block
        for start in range(0, n, rows):
            block_cells = cells[start:start + rows]
            steps = buffer[:block_cells.size * width].reshape(block_cells.size, width)
            self.law.fill(steps.reshape(-1), rng)
            hit = np.flatnonzero(block_cells >= 0)
            steps.reshape(-1)[hit * width + block_cells[hit]] += unit  # flat positions: 0.15 against 0.40 ns a value
            np.clip(steps, -OUTPUT_LIMIT, OUTPUT_LIMIT, out=steps)
            target = out[start:start + rows]
            target[...] = steps  # int64 -> float64, exact below 2^53
            target *= self.step  # a power of two: exact
        return out

    def spec(self) -> dict:
        return {"lattice_step": self.step, "noise_variance": self.variance,
                "sensitivity_steps": self.sensitivity_steps, "privacy_loss": self.privacy_loss}
