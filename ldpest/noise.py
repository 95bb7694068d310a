"""Floating-point-safe Laplace noise on a lattice (defence against Mironov 2012).

Textbook Laplace noise drawn as floats leaks the input through the low-order
bits of ``x + noise``: the set of floats an output can take depends on ``x``,
so some outputs are possible under one input and impossible under another.
ldpest never adds float noise.  Every Laplace mechanism releases

    Z = round(v) + g * K,     K = G1 - G2,  G1, G2 iid Geometric(1 - r),

on the lattice ``g * Z`` with ``g = 2**-m`` (about ``scale * 2**-20``):

* ``round(v)`` is unbiased randomised rounding of the input vector onto the
  lattice (exactly the identity for one-hot vectors, whose entries are already
  lattice points); ``E[round(v)] = v``.
* ``K`` is discrete Laplace: ``P(K = k) = (1 - r) / (1 + r) * r**|k|`` with
  ``r = exp(-g * epsilon / D)``, where ``D`` is the l1 sensitivity of the
  rounded input.  A shift of the input by ``s`` lattice steps in total changes
  ``log P`` by at most ``s * g * epsilon / D <= epsilon``: exactly
  epsilon-LDP, with the same output lattice for every input.
* The noise has mean 0 and variance ``g**2 * 2 r / (1 - r)**2``, which tends
  to the continuous ``2 b**2`` (``b = D / epsilon``) as ``g -> 0``; estimators
  use this exact variance (:attr:`LatticeLaplace.variance`).
* ``K`` is drawn by inversion from one uniform ``U`` (53 random bits): its top
  bit is the sign, the other 52 bits give ``V`` in (0, 1] and the magnitude
  ``M = max(0, floor(-t log(V (1 + r) / 2)))``, ``t = D / (g eps)``, which has
  ``P(M = 0) = (1 - r) / (1 + r)`` and ``P(M >= m) = 2 r^m / (1 + r)``: exactly
  the discrete Laplace law up to the 2**-52 resolution of V (the far tail
  beyond about 36 scales).

Outputs are exact dyadic rationals, so sums over reports are exact
(:class:`~ldpest.exactsum.ExactSum`) whatever the order.
"""

from __future__ import annotations

import math

import numpy as np

_RELATIVE_STEP_BITS = 20


def lattice_step(scale: float) -> float:
    """The lattice step ``g = 2**-m``: at most ``scale * 2**-20`` and at most 1/2."""
    return 2.0 ** min(-1, math.floor(math.log2(scale)) - _RELATIVE_STEP_BITS)


class LatticeLaplace:
    """Laplace noise for an input with l1 sensitivity ``sensitivity`` at level ``epsilon``.

    ``on_lattice=True`` promises that inputs are already lattice points (e.g.
    one-hot vectors), so no rounding happens and the sensitivity is exact.
    Otherwise ``width`` coordinates are randomly rounded and the sensitivity
    grows by ``2 g width`` (each coordinate may move by less than one step).
    """

    def __init__(self, epsilon: float, sensitivity: float, *, on_lattice: bool, width: int = 0):
        self.epsilon = float(epsilon)
        self.nominal_scale = float(sensitivity) / self.epsilon  # b of the continuous mechanism
        self.step = lattice_step(self.nominal_scale)
        self.on_lattice = bool(on_lattice)
        self.sensitivity = float(sensitivity) + (0.0 if on_lattice else 2.0 * self.step * width)
        self.steps_per_unit_loss = self.sensitivity / (self.step * self.epsilon)  # t
        self.ratio = math.exp(-1.0 / self.steps_per_unit_loss)  # r

    @property
    def variance(self) -> float:
        """Exact variance of one noise coordinate: ``g**2 * 2r / (1-r)**2``."""
        one_minus_r = -math.expm1(-1.0 / self.steps_per_unit_loss)
        return self.step ** 2 * 2.0 * self.ratio / one_minus_r ** 2

    def log_pmf(self, k: np.ndarray) -> np.ndarray:
        """``log P(K = k)`` of the integer noise (for exact privacy checks)."""
        r = self.ratio
        return np.log((1 - r) / (1 + r)) - np.abs(k) / self.steps_per_unit_loss

    def cdf_steps(self, k: int) -> float:
        """``P(K <= k)`` exactly: ``1 - r^(k+1) / (1 + r)`` for k >= 0, ``r^-k / (1 + r)`` below."""
        t = self.steps_per_unit_loss
        if k >= 0:
            return -math.expm1(-(k + 1) / t) + math.exp(-(k + 1) / t) * self.ratio / (1 + self.ratio)
        return math.exp(k / t) / (1 + self.ratio)

    def sum_of_noise(self, n: int, shape, rng) -> np.ndarray:
        """The sum of ``n`` iid integer noises, drawn exactly in O(1) per entry:
        a difference of two negative binomials NB(n, 1 - r) (each K is G1 - G2)."""
        p = -math.expm1(-1.0 / self.steps_per_unit_loss)
        return rng.negative_binomial(n, p, size=shape) - rng.negative_binomial(n, p, size=shape)

    def lattice_noise(self, shape, rng) -> np.ndarray:
        """``g K`` as float64 (exact lattice points), by single-uniform inversion (module doc)."""
        u = rng.random(shape)
        negative = u < 0.5
        u *= 2.0
        u -= ~negative  # u in [0, 1): the 52 bits below the sign bit, exactly
        np.subtract(1.0, u, out=u)  # V in (0, 1]
        np.log(u, out=u)
        u += math.log1p(self.ratio) - math.log(2.0)  # log(V (1 + r) / 2) < 0
        u *= -self.steps_per_unit_loss
        np.floor(u, out=u)
        np.maximum(u, 0.0, out=u)
        u *= self.step
        np.negative(u, out=u, where=negative)
        return u

    def integer_noise(self, shape, rng) -> np.ndarray:
        """The integer noise ``K`` (see :meth:`lattice_noise`)."""
        return np.rint(self.lattice_noise(shape, rng) / self.step).astype(np.int64)

    def round_to_lattice(self, values: np.ndarray, rng) -> np.ndarray:
        """Unbiased randomised rounding onto ``g * Z`` (identity on lattice points)."""
        scaled = np.asarray(values, dtype=np.float64) / self.step
        low = np.floor(scaled)
        up = rng.random(scaled.shape) < (scaled - low)
        return (low + up) * self.step

    def privatize(self, values: np.ndarray, rng) -> np.ndarray:
        """``round(values) + g K`` for an ``(n, width)`` array, vectorised."""
        values = np.asarray(values, dtype=np.float64)
        base = values if self.on_lattice else self.round_to_lattice(values, rng)
        return base + self.lattice_noise(values.shape, rng)

    def spec(self) -> dict:
        return {"lattice_step": self.step, "noise_variance": self.variance, "sensitivity": self.sensitivity}
