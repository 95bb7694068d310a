"""xxHash32 of decimal strings, vectorised over numpy arrays: the hash that pure-ldp's
``LHClient`` and multi-freq-ldpy's ``LH_Client`` apply to ``str(index)`` (docs/other-libraries.md).

XXH32 of an input of ``L < 16`` bytes as :mod:`ldpest.util.xxh32` states it (with its constants and a scalar
reference).  The seed is taken modulo 2^32, as the ``xxhash`` package does with the 63-bit seeds the peers draw.
Tested against the ``xxhash`` package (tests/plugins/test_xxh32.py).
"""

from __future__ import annotations

import numpy as np

from ldpest.util import xxh32 as reference

P1, P2, P3, P4, P5 = (np.uint32(v) for v in (reference.P1, reference.P2, reference.P3, reference.P4, reference.P5))
_MASK = reference.MASK
_MAX_DIGITS = reference.SHORT - 1  # longer inputs take the striped path, which this module does not need


def _rotl(h: np.ndarray, r: int) -> np.ndarray:
    return (h << np.uint32(r)) | (h >> np.uint32(32 - r))


def _digits_hash(values: np.ndarray, seeds: np.ndarray, length: int) -> np.ndarray:
    """XXH32 of ``str(v)`` for values of exactly ``length`` decimal digits."""
    ten = np.uint64(10)
    place = values.astype(np.uint64)
    digits = []  # the ASCII bytes, most significant first
    for _ in range(length):
        digits.append((place % ten).astype(np.uint32) + np.uint32(48))
        place //= ten
    digits.reverse()
    h = seeds + np.uint32(int(P5) + length)
    k = 0
    while length - k >= 4:
        word = digits[k] | (digits[k + 1] << np.uint32(8)) | (digits[k + 2] << np.uint32(16)) | \
            (digits[k + 3] << np.uint32(24))
        h = _rotl(h + word * P3, 17) * P4
        k += 4
    while k < length:
        h = _rotl(h + digits[k] * P5, 11) * P1
        k += 1
    return _finish(h)


def _finish(h: np.ndarray) -> np.ndarray:
    h ^= h >> np.uint32(15)
    h *= P2
    h ^= h >> np.uint32(13)
    h *= P3
    h ^= h >> np.uint32(16)
    return h


def _constant_hash(value: int, seeds: np.ndarray) -> np.ndarray:
    """XXH32 of one decimal string under many seeds: the input's words are constants, so each
    round is one addition of a precomputed constant, a rotation and a multiplication."""
    data = str(value).encode("ascii")
    h = seeds + np.uint32(int(P5) + len(data))
    k = 0
    while len(data) - k >= 4:
        h += np.uint32(int.from_bytes(data[k:k + 4], "little") * int(P3) & _MASK)
        h = _rotl(h, 17)
        h *= P4
        k += 4
    for byte in data[k:]:
        h += np.uint32(byte * int(P5) & _MASK)
        h = _rotl(h, 11)
        h *= P1
    return _finish(h)


def xxh32_decimal(values, seeds) -> np.ndarray:
    """``xxh32(str(v).encode(), seed=s)`` elementwise (broadcast), for integers ``0 <= v < 10^15``.

    >>> int(xxh32_decimal(12, 5))  # xxhash.xxh32("12", seed=5).intdigest()
    3186560488
    """
    values = np.asarray(values, dtype=np.int64)
    seeds = (np.asarray(seeds, dtype=np.uint64) & np.uint64(_MASK)).astype(np.uint32)
    if values.size and (values.min() < 0 or values.max() >= 10 ** _MAX_DIGITS):
        raise ValueError(f"xxh32_decimal hashes integers in 0..10^{_MAX_DIGITS} - 1")
    if values.ndim == 0 and seeds.ndim == 1:  # one category under every report's seed (decoding)
        return _constant_hash(int(values), seeds)
    values, seeds = np.broadcast_arrays(values, seeds)
    if values.ndim == 0:  # array arithmetic wraps silently; scalar arithmetic would warn
        return xxh32_decimal(values.reshape(1), seeds.reshape(1))[0]
    lengths = np.ones(values.shape, dtype=np.int64)
    for power in range(1, _MAX_DIGITS):
        lengths += values >= 10 ** power
    first = int(lengths.flat[0]) if lengths.size else 1
    if lengths.size == 0 or np.all(lengths == first):
        return _digits_hash(values, seeds, first)
    out = np.empty(values.shape, dtype=np.uint32)
    for length in np.unique(lengths):
        where = lengths == length
        out[where] = _digits_hash(values[where], seeds[where], int(length))
    return out
