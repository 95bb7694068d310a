"""Fast linear transforms that estimators share."""

from __future__ import annotations

import numpy as np


def fwht(values: np.ndarray) -> np.ndarray:
    """Unnormalised Walsh-Hadamard transform along the last axis (length a power of two):
    ``out[..., r] = sum_y (-1)^popcount(r & y) values[..., y]``; exact for integers."""
    out = np.array(values, copy=True)
    size = out.shape[-1]
    h = 1
    while h < size:
        view = out.reshape(*out.shape[:-1], size // (2 * h), 2, h)
        first, second = view[..., 0, :].copy(), view[..., 1, :]
        view[..., 0, :] += second
        np.subtract(first, second, out=view[..., 1, :])
        h *= 2
    return out
