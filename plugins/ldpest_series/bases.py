"""Uniformly bounded orthonormal bases of L2[0, 1] (MATH.md section 3).

Function j = 1..k is column j - 1 of ``evaluate(x, k)``.
"""

from __future__ import annotations

import math

import numpy as np

from ldpest import Basis, DataError

# points per block of the trigonometric recurrence: 4096 up to k = 128, 1024 beyond (256..8192 timed at k = 8..1024:
# 2.7-4.1x np.cos and np.sin at k <= 64, 1.8-2.2x at k = 256..1024)
_TRIG_BLOCK = (4096, 1024)


def _points(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    if x.size and (not np.isfinite(x).all() or x.min() < 0 or x.max() > 1):
        raise DataError("basis functions are defined on [0, 1]")
    return x


class Trigonometric(Basis):
    """``phi_1 = 1``, ``phi_{2j} = sqrt2 cos(2 pi j x)``, ``phi_{2j+1} = sqrt2 sin(2 pi j x)``; B0 = sqrt 2."""

    name = "trigonometric"
    family = "series"
    B0 = math.sqrt(2.0)
    constant_first = True
    ordering = "1, sqrt2 cos(2 pi x), sqrt2 sin(2 pi x), sqrt2 cos(4 pi x), sqrt2 sin(4 pi x), ..."

    def evaluate(self, x, k: int) -> np.ndarray:
        """``cos(2 pi j x)`` and ``sin(2 pi j x)`` by the angle-addition recurrence from ``j = 1``, in blocks of
        points whose rows of frequencies stay in cache: 2.7-4.1x ``np.cos`` and ``np.sin`` of every angle at
        k <= 64 (about 2x beyond), within ``j`` x 1e-16 of them (2e-13 at k = 256), and clipped to ``+-B0`` so
        that no value leaves the bound the privacy proofs use."""
        x = _points(x)
        out = np.empty((x.size, k))
        out[:, 0] = 1.0
        if k == 1:
            return out
        cosines, sines = len(range(1, k, 2)), len(range(2, k, 2))
        points = _TRIG_BLOCK[0] if k <= 128 else _TRIG_BLOCK[1]
        for start in range(0, x.size, points):
            angle = 2 * math.pi * x[start:start + points]
            first = np.stack([np.cos(angle), np.sin(angle)])
            rows = np.empty((cosines, 2, angle.size))  # (frequency, cos / sin, point)
            rows[0] = first * self.B0
            for j in range(1, cosines):  # cos((j+1) a) = cos(j a) cos a - sin(j a) sin a, sin likewise
                cos_j, sin_j = rows[j - 1]
                np.multiply(cos_j, first[0], out=rows[j, 0])
                rows[j, 0] -= sin_j * first[1]
                np.multiply(sin_j, first[0], out=rows[j, 1])
                rows[j, 1] += cos_j * first[1]
            np.clip(rows, -self.B0, self.B0, out=rows)
            block = out[start:start + angle.size]
            block[:, 1::2] = rows[:cosines, 0].T
            block[:, 2::2] = rows[:sines, 1].T
        return out


class Walsh(Basis):
    """Walsh functions in Paley order, values +-1, B0 = 1.

    ``phi_j = w_{j-1}``, ``w_n(x) = (-1)^(sum_m b_{m-1}(n) x_m)`` with ``b`` the
    binary digits of ``n`` (least significant first) and ``x_m`` the m-th
    binary digit of ``x`` (finite expansion, ``floor(2^m x) mod 2``); so
    ``w_0 = 1``, ``w_1 = r_1``, ``w_2 = r_2``, ``w_3 = r_1 r_2`` with ``r_m`` the
    Rademacher functions.  ``x = 1`` is evaluated as ``1^-``.
    """

    name = "walsh"
    family = "series"
    B0 = 1.0
    constant_first = True
    ordering = "Paley: w_0 = 1, w_1 = r_1, w_2 = r_2, w_3 = r_1 r_2, w_4 = r_3, ..."

    def evaluate(self, x, k: int) -> np.ndarray:
        x = _points(x)
        bits = max(1, math.ceil(math.log2(k))) if k > 1 else 1
        scaled = np.minimum(np.floor(x * 2.0 ** bits), 2 ** bits - 1).astype(np.uint64)
        # x_m is bit (bits - m) of floor(2^bits x); pair it with bit m - 1 of n
        reversed_digits = np.zeros_like(scaled)
        for m in range(1, bits + 1):
            reversed_digits |= ((scaled >> np.uint64(bits - m)) & np.uint64(1)) << np.uint64(m - 1)
        parity = np.bitwise_count(reversed_digits[:, None] & np.arange(k, dtype=np.uint64)[None, :]) & 1
        return 1.0 - 2.0 * parity
