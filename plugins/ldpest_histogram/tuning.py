"""Rate-optimal partition sizes from the expected number of reports (MATH.md section 2).

* d = 1 box: ``k = ceil((n a^2)^(1/4))`` bins (Duchi et al.; MISE ~ (n a^2)^(-1/2)
  for Lipschitz densities).
* d >= 2 box, and balls: the Gyorfi-Kroll bandwidth
  ``h = c (n / (sigma_W^2 r^(2d)))^(-1/(2d+2))`` with ``c = 1``, ``sigma_W^2 = 8 / a^2``
  and ``r`` the radius; L1 error ~ n^(-1/(2d+2)).  A box is tuned axis by axis in
  its own units: every axis gets ``ceil(1 / h)`` bins with ``h`` the rule on the
  unit cube (``r = 1/2``), so the partition does not change when one axis is
  rescaled.
"""

from __future__ import annotations

import math


def duchi_bins(expected_n: int, epsilon: float) -> int:
    return max(1, math.ceil((expected_n * epsilon ** 2) ** 0.25))


def gyorfi_kroll_h(expected_n: int, epsilon: float, radius: float, d: int, c: float = 1.0) -> float:
    sigma2 = 8.0 / epsilon ** 2
    return c * (expected_n / (sigma2 * radius ** (2 * d))) ** (-1.0 / (2 * d + 2))
