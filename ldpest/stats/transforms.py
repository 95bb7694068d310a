"""Fast linear transforms that estimators share."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

# The transform is a product of +-1 matrices of at most this size, one for each 7 bits of the index: 3.4-42x
# faster than log2(size) numpy butterflies over sizes 8 to 2^17 and 1 to 10^4 rows; one row of 2^17 values
# 4.05 -> 1.20 ms (.venv/bin/python bench/bench_fwht.py).
_FACTOR = 128
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

    ``H_(ab) = H_a (x) H_b``: the index's bits are split into groups of at most 7, and each group's
    ``H`` is one matrix product along its own axis.  Integers go through float64 where ``size *
    max|value| < 2^53``, so every partial sum is exact; beyond that, int64 butterflies."""
    values = np.asarray(values)
    size = values.shape[-1]
    if size > 1 and values.size:
        if values.dtype.kind == "f":
            return _factored(values).astype(values.dtype, copy=False)
        if values.dtype.kind == "i" and int(np.abs(values).max()) * size < _EXACT_FLOAT:
            return _factored(values).astype(values.dtype)
    return _butterflies(values)


def _factored(values: np.ndarray) -> np.ndarray:
    """The transform in float64 as products with ``H`` of at most ``_FACTOR`` rows, lowest bits first: with
    ``done`` bits' worth of index below the group, the group is the middle axis of ``(rest, f, done)``."""
    size = values.shape[-1]
    rows = values.size // size
    low = min(_FACTOR, size)
    out = values.reshape(-1, low) @ hadamard_matrix(low)
    done = low
    while done < size:
        factor = min(_FACTOR, size // done)
        out = hadamard_matrix(factor) @ out.reshape(rows * (size // (done * factor)), factor, done)
        done *= factor
    return out.reshape(values.shape)


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
