"""Fast linear transforms that estimators share."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

# Up to this length the transform is one product with the +-1 matrix, against the butterflies' Python loop:
# 21-23x faster on (1, 32) values, 9-11x on (10^4, 128), 1.5-1.6x on (1, 512); on (1, 1024) the butterflies
# are 1.5-2x faster (two runs of .venv/bin/python bench/bench_fwht.py).
_MATRIX_SIZE = 512
_EXACT_FLOAT = 1 << 53  # integers below this are exact in float64, and so is every partial sum of them


@lru_cache(maxsize=16)
def hadamard_matrix(size: int) -> np.ndarray:
    """The Sylvester-Hadamard matrix ``H[r, y] = (-1)^popcount(r & y)`` (float64, read-only, symmetric)."""
    rows = np.arange(size)
    matrix = 1.0 - 2.0 * (np.bitwise_count(rows[:, None] & rows[None, :]) & 1)
    matrix.flags.writeable = False
    return matrix


def fwht(values: np.ndarray) -> np.ndarray:
    """Unnormalised Walsh-Hadamard transform along the last axis (length a power of two):
    ``out[..., r] = sum_y (-1)^popcount(r & y) values[..., y]``; exact for integers.

    Short transforms are one matrix product; integers go through float64 there only where
    ``size * max|value| < 2^53``, so every partial sum is exact."""
    values = np.asarray(values)
    size = values.shape[-1]
    if 1 < size <= _MATRIX_SIZE and values.size:
        if values.dtype.kind == "f":
            return (values @ hadamard_matrix(size)).astype(values.dtype, copy=False)
        if values.dtype.kind == "i" and int(np.abs(values).max()) * size < _EXACT_FLOAT:
            return (values @ hadamard_matrix(size)).astype(values.dtype)
    return _butterflies(values)


def _butterflies(values: np.ndarray) -> np.ndarray:
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
