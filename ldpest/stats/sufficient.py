"""Additive sufficient statistics: the currency of streaming and map-reduce.

An estimator turns a chunk of reports into a :class:`SufficientStats`; two of
them add (``stats_a + stats_b``, or ``sum(list_of_stats)``) to the statistics
of the union of the chunks, exactly: counts are integers and float sums are
:class:`~ldpest.stats.exactsum.ExactSum`.  ``finalize`` turns the total into a result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ..util.errors import IncompatibleError
from .exactsum import ExactSum


@dataclass(frozen=True)
class SufficientStats:
    """Statistics of ``n`` reports of one mechanism, for one estimator."""

    estimator_spec: str
    mechanism_spec: str
    n: int
    arrays: Mapping[str, object] = field(default_factory=dict)

    def __add__(self, other: SufficientStats) -> SufficientStats:
        if not isinstance(other, SufficientStats):
            return NotImplemented
        if other.mechanism_spec != self.mechanism_spec:
            raise IncompatibleError(
                "cannot add statistics of different mechanisms: "
                f"{self.mechanism_spec} and {other.mechanism_spec}"
            )
        if other.estimator_spec != self.estimator_spec:
            raise IncompatibleError(
                f"cannot add statistics of different estimators: {self.estimator_spec} and {other.estimator_spec}"
            )
        if set(self.arrays) != set(other.arrays):
            raise IncompatibleError("cannot add statistics with different fields")
        merged = {key: _add(self.arrays[key], other.arrays[key]) for key in self.arrays}
        return SufficientStats(self.estimator_spec, self.mechanism_spec, self.n + other.n, merged)

    def __radd__(self, other):
        if isinstance(other, int) and other == 0:  # lets sum(stats) start from 0
            return self
        return NotImplemented


def _add(a, b):
    if isinstance(a, ExactSum):
        return a + b
    return np.add(a, b)


def count_indices(indices, size: int) -> np.ndarray:
    """``np.bincount(indices, minlength=size)`` as int64 (longer if an index is ``>= size``).

    One-byte indices are counted two at a time: each pair of bytes is read as one 16-bit
    number, counted into 2^16 bins and folded back (``count[x] = #first == x + #second == x``),
    in chunks, so no 8-byte copy of all the reports is made (1.3x faster than ``bincount`` of
    the bytes at 10^6, 2.6x at 10^7)."""
    indices = np.asarray(indices)
    if indices.dtype != np.uint8 or indices.size < _PAIR_COUNT_MIN:
        return np.bincount(indices, minlength=size).astype(np.int64, copy=False)
    indices = np.ascontiguousarray(indices)
    pairs = indices[:indices.size // 2 * 2].view(np.uint16)
    table = np.zeros(1 << 16, dtype=np.int64)
    for start in range(0, pairs.size, _PAIR_CHUNK):  # bincount's int64 copy of a chunk stays in cache
        table += np.bincount(pairs[start:start + _PAIR_CHUNK], minlength=1 << 16)
    table = table.reshape(256, 256)
    counts = table.sum(axis=0) + table.sum(axis=1)
    if indices.size % 2:
        counts[indices[-1]] += 1
    used = np.flatnonzero(counts)
    return counts[:max(size, int(used[-1]) + 1 if used.size else 0)].astype(np.int64, copy=False)


_PAIR_COUNT_MIN = 1 << 17  # below this the 2^16 bins cost more than the copy they save (measured)
_PAIR_CHUNK = 1 << 18  # pairs per bincount call
