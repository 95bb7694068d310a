"""XXH32 (Collet, xxHash specification 0.8) of short inputs: its constants and a plain scalar reference.

For an input of ``L < 16`` bytes and seed ``s`` (all arithmetic modulo 2^32)::

    h = s + P5 + L
    each 4-byte little-endian word w:  h = rotl(h + w P3, 17) P4
    each remaining byte b:             h = rotl(h + b P5, 11) P1
    h ^= h >> 15; h *= P2; h ^= h >> 13; h *= P3; h ^= h >> 16

Local hashing's ``xxh32`` family (pure-ldp's and multi-freq-ldpy's) hashes ``str(j)`` of a category's position
``j``.  The plugin vectorises it over numpy arrays, Spark computes it in columns
(:mod:`ldpest.engine.spark`); this reference, one input at a time in Python integers, is what the conformance kit
checks them against (tests/plugins/test_xxh32.py checks it against the ``xxhash`` package's published values).
"""

from __future__ import annotations

P1, P2, P3, P4, P5 = 0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D, 0x27D4EB2F, 0x165667B1
MASK = (1 << 32) - 1
SHORT = 16  # inputs of this many bytes or more take the striped path, which ldpest does not need


def rotl(h: int, r: int) -> int:
    """``h`` rotated left by ``r`` bits, in 32 bits."""
    return ((h << r) | (h >> (32 - r))) & MASK


def avalanche(h: int) -> int:
    """XXH32's final mixing of ``h``."""
    h ^= h >> 15
    h = h * P2 & MASK
    h ^= h >> 13
    h = h * P3 & MASK
    return h ^ (h >> 16)


def xxh32(data: bytes, seed: int) -> int:
    """``XXH32(data, seed mod 2^32)`` for ``len(data) < 16``.

    >>> xxh32(b"12", 5)  # xxhash.xxh32("12", seed=5).intdigest()
    3186560488
    """
    if len(data) >= SHORT:
        raise ValueError(f"xxh32 here hashes inputs of fewer than {SHORT} bytes, got {len(data)}")
    h = (seed + P5 + len(data)) & MASK
    whole = len(data) - len(data) % 4
    for at in range(0, whole, 4):
        h = rotl((h + int.from_bytes(data[at:at + 4], "little") * P3) & MASK, 17) * P4 & MASK
    for byte in data[whole:]:
        h = rotl((h + byte * P5) & MASK, 11) * P1 & MASK
    return avalanche(h)
