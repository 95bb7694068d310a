"""Exact, order-independent sums of float64 arrays.

Floating-point addition is not associative, so summing reports chunk by chunk
(a stream, or a Dask map-reduce) would normally give a slightly different
result from one pass.  :class:`ExactSum` keeps each column sum as an exact
dyadic rational ``numerator * 2**exponent`` (Python integers), so the total
does not depend on how the records were split, and :meth:`ExactSum.to_float`
rounds it once, correctly.

Each value is decomposed by ``frexp`` into a 53-bit integer mantissa and an
exponent; the mantissas are split into 26-bit halves whose per-(exponent,
column) sums are computed with ``bincount`` (exact in float64 as long as a block
holds at most 2**26 values per bucket), and the buckets are combined in exact
integer arithmetic.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

_HALF = 26
_HALF_MASK = (1 << _HALF) - 1
_BLOCK = 1 << 22  # values per block: bounds temporaries and keeps bucket sums exact
_LATTICE_BLOCK = 1 << 16  # values per block of the lattice paths: 512 KiB, so the check's passes run in L2
# (2 MiB a core here: 1 MiB blocks with their two buffers spilled; bench/bench_exactsum.py)
_MAX_EXACT_ROWS = 1 << 20  # rows per lattice block at most: 2^20 units below 2^32 sum below 2^52
_LATTICE_UNIT_LIMIT = float(1 << 32)  # |units| below this and <= 2^20 rows per block: float64 block sums are exact
_PENDING_ROWS = 1 << 30  # int64 sums of at most this many such units stay below 2^62
_GRAM_SHIFT = 16  # lattice units below 2^31 split into halves of 15 (signed) and 16 bits
_GRAM_LIMIT = 1 << 31
_EXACT_FLOAT = 1 << 53  # integers below this are exact in float64
_GRAM_BLOCK = 1 << 16  # rows per Gram block at most; the split product needs at most 2^20: 2^20 (2^16)^2 = 2^52


class ExactSum:
    """Exact column sums of a float64 array (value = ``numerators * 2**exponent``)."""

    __slots__ = ("numerators", "exponent", "shape")

    def __init__(self, numerators: np.ndarray, exponent: int, shape: tuple[int, ...]):
        self.numerators = numerators  # object array of Python ints, flattened
        self.exponent = int(exponent)
        self.shape = tuple(shape)

    @classmethod
    def zeros(cls, shape: tuple[int, ...]) -> ExactSum:
        size = int(np.prod(shape, dtype=np.int64))
        return cls(np.array([0] * size, dtype=object), 0, shape)

    @classmethod
    def of(cls, values, step: float | None = None) -> ExactSum:
        """Exact sum over axis 0 of ``values`` (shape ``(n, *shape)``).

        ``step``: a power of two that the values are expected to be multiples
        of (lattice noise); then the sum is taken in int64 units of ``step``,
        much faster.  Values off that lattice fall back to the general path.
        """
        values = np.asarray(values, dtype=np.float64)
        if step is not None:
            fast = cls._of_lattice(values, step)
            if fast is not None:
                return fast
        shape = values.shape[1:]
        flat = values.reshape(values.shape[0], int(np.prod(shape, dtype=np.int64)))
        n, width = flat.shape
        total = cls.zeros(shape)
        if n == 0 or width == 0:
            return total
        if not np.isfinite(flat).all():
            raise ValueError("ExactSum needs finite values")
        rows_per_block = max(1, _BLOCK // width)
        for start in range(0, n, rows_per_block):
            total = total + cls._of_block(flat[start:start + rows_per_block], shape)
        return total

    @classmethod
    def _of_lattice(cls, values: np.ndarray, step: float) -> ExactSum | None:
        """Sum in units of ``step`` (a power of two), block by block; None if off the lattice.

        Every value is checked to be ``u * step`` with ``u`` an integer below 2^32 in magnitude;
        a block has at most 2^20 rows, so every partial sum of the block is a multiple of ``step``
        below ``2^52 step`` and the block's float64 sum is exact in any order (BLAS's too)."""
        mantissa, exponent = math.frexp(step)
        if mantissa != 0.5 or values.ndim == 0 or values.shape[0] == 0 or values[0].size == 0:
            return None
        flat = values.reshape(values.shape[0], -1)
        rows = max(1, min(_MAX_EXACT_ROWS, _LATTICE_BLOCK // flat.shape[1]))
        ones = np.ones(min(rows, flat.shape[0]))
        total = np.zeros(flat.shape[1], dtype=object)
        pending, pending_rows = np.zeros(flat.shape[1], dtype=np.int64), 0  # block sums added as int64 ...
        for units, _ in _lattice_blocks(flat, step, rows, _LATTICE_UNIT_LIMIT):
            if units is None:
                return None
            if pending_rows + len(units) > _PENDING_ROWS:  # ... while below 2^30 rows of units below 2^32
                total, pending_rows = total + pending.astype(object), 0
                pending[:] = 0
            # BLAS for several columns (a strided reduction is 10x slower); one column is contiguous, and
            # numpy's own sum avoids waking BLAS's threads for a one-column product (10^7 x 1 values, timed
            # as bench/bench_exactsum.py does: 43.7 ms with the product, 19.6 with the sum)
            sums = units.sum(axis=0) if units.shape[1] == 1 else ones[:len(units)] @ units
            pending += sums.astype(np.int64)
            pending_rows += len(units)
        return cls(total + pending.astype(object), exponent - 1, values.shape[1:])

    @classmethod
    def gram(cls, values, step: float | None = None) -> ExactSum:
        """Exact ``sum_i outer(v_i, v_i)`` over the rows of ``values`` (shape ``(n, k)``), as an
        ExactSum of shape ``(k * k,)`` (row-major), equal to the exact sum of the products."""
        return cls.sums_and_gram(values, step)[1]

    @classmethod
    def sums_and_gram(cls, values, step: float | None = None) -> tuple[ExactSum, ExactSum]:
        """Exact column sums and exact ``sum_i outer(v_i, v_i)`` (shape ``(k * k,)``) in one pass.

        On a lattice of ``step`` (a power of two) with units below 2^31, each block of rows
        is multiplied with BLAS in float64, which is exact in any summation order when every
        partial sum is an integer below 2^53: one product when ``rows * max|u|^2 < 2^53``,
        else with the units split into 16-bit halves ``u = 2^16 h + l`` (three products, each
        below 2^52).  Memory stays one block; off the lattice the products are summed block by
        block on the general path.
        """
        values = np.asarray(values, dtype=np.float64)
        if values.ndim != 2:
            raise ValueError(f"gram needs a 2-D array, got shape {values.shape}")
        n, k = values.shape
        fast = cls._sums_and_gram_lattice(values, step) if step is not None else None
        if fast is not None:
            return fast
        total = cls.zeros((k * k,))
        rows = max(1, _BLOCK // max(1, k * k))
        for start in range(0, n, rows):
            block = values[start:start + rows]
            total = total + cls.of((block[:, :, None] * block[:, None, :]).reshape(len(block), k * k))
        return cls.of(values, step), total

    @classmethod
    def _sums_and_gram_lattice(cls, values: np.ndarray, step: float):
        mantissa, exponent = math.frexp(step)
        n, k = values.shape
        if mantissa != 0.5 or n == 0 or k == 0:
            return None
        rows = max(1, min(_GRAM_BLOCK, _LATTICE_BLOCK // k))
        ones = np.ones(min(rows, n))
        sums = np.zeros(k, dtype=object)
        gram = np.zeros(k * k, dtype=object)
        for units, largest in _lattice_blocks(values, step, rows, float(_GRAM_LIMIT), largest=True):
            if units is None:
                return None
            sums = sums + (ones[:len(units)] @ units).astype(np.int64).astype(object)
            if len(units) * largest * largest < _EXACT_FLOAT:
                block = (units.T @ units).astype(np.int64).astype(object)  # every partial sum exact
            else:
                whole = units.astype(np.int64)
                high = (whole >> _GRAM_SHIFT).astype(np.float64)  # floor: 0 <= low < 2^16
                low = (whole & ((1 << _GRAM_SHIFT) - 1)).astype(np.float64)
                hl = (high.T @ low).astype(np.int64).astype(object)
                block = ((high.T @ high).astype(np.int64).astype(object) * (1 << (2 * _GRAM_SHIFT))
                         + (hl + hl.T) * (1 << _GRAM_SHIFT) + (low.T @ low).astype(np.int64).astype(object))
            gram = gram + block.ravel()
        return cls(sums, exponent - 1, (k,)), cls(gram, 2 * (exponent - 1), (k * k,))

    @classmethod
    def _of_block(cls, block: np.ndarray, shape) -> ExactSum:
        mantissa, exponent = np.frexp(block)
        integer = (mantissa * float(1 << 53)).astype(np.int64)  # exact: |integer| < 2**53
        exponent = exponent.astype(np.int64) - 53
        emin = int(exponent.min())
        spread = int(exponent.max()) - emin + 1
        width = block.shape[1]
        key = ((exponent - emin) * width + np.arange(width)).ravel()
        size = spread * width
        high = np.bincount(key, weights=(integer >> _HALF).ravel(), minlength=size)
        low = np.bincount(key, weights=(integer & _HALF_MASK).ravel(), minlength=size)
        high = high.astype(np.int64).reshape(spread, width)
        low = low.astype(np.int64).reshape(spread, width)
        numerators = np.array([0] * width, dtype=object)
        for shift in np.flatnonzero(high.any(axis=1) | low.any(axis=1)):
            part = high[shift].astype(object) * (1 << _HALF) + low[shift].astype(object)
            numerators = numerators + part * (1 << int(shift))
        return cls(numerators, emin, shape)

    def __add__(self, other: ExactSum) -> ExactSum:
        if not isinstance(other, ExactSum):
            return NotImplemented
        if self.shape != other.shape:
            raise ValueError(f"cannot add exact sums of shapes {self.shape} and {other.shape}")
        low, high = (self, other) if self.exponent <= other.exponent else (other, self)
        shifted = high.numerators * (1 << (high.exponent - low.exponent))
        return ExactSum(low.numerators + shifted, low.exponent, self.shape)

    def to_float(self) -> np.ndarray:
        """The sums, each correctly rounded to float64 once."""
        if self.exponent >= 0:
            scale = 1 << self.exponent
            out = [float(int(v) * scale) for v in self.numerators]
        else:
            denominator = 1 << -self.exponent
            out = [int(v) / denominator for v in self.numerators]  # int / int rounds correctly
        return np.array(out, dtype=np.float64).reshape(self.shape)

    def to_fraction(self) -> list[Fraction]:
        return [Fraction(int(v)) * Fraction(2) ** self.exponent for v in self.numerators]

    def __eq__(self, other) -> bool:
        if not isinstance(other, ExactSum) or self.shape != other.shape:
            return NotImplemented
        return self.to_fraction() == other.to_fraction()

    def __repr__(self) -> str:
        return f"ExactSum(shape={self.shape}, value={self.to_float()!r})"


def _lattice_blocks(flat: np.ndarray, step: float, rows: int, limit: float, *, largest: bool = False):
    """Yield each block of ``rows`` rows of ``flat`` in units of ``step`` (float64, exact: ``step``
    is a power of two) with its largest ``|unit|`` if ``largest`` (else None); yield ``(None, None)``
    and stop at the first block holding a value that is not an integer multiple of ``step`` below
    ``limit`` units in magnitude (NaN and infinities included).  The test is one comparison: the units
    clipped to ``+-(limit - 1)`` and rounded must equal the units (NaN equals nothing).  The buffers are
    reused, so each view is valid until the next block."""
    inverse, bound = 1.0 / step, limit - 1.0
    size = min(rows, flat.shape[0])
    units_buffer, whole_buffer = np.empty((size, flat.shape[1])), np.empty((size, flat.shape[1]))
    for start in range(0, flat.shape[0], rows):
        block = flat[start:start + rows]
        units = np.multiply(block, inverse, out=units_buffer[:len(block)])
        whole = np.clip(units, -bound, bound, out=whole_buffer[:len(block)])
        if not np.array_equal(np.rint(whole, out=whole), units):
            yield None, None
            return
        yield units, (float(np.abs(units, out=whole).max()) if largest else None)
