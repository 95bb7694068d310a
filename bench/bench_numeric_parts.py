"""The parts behind the numeric speed-ups of issue 24, each beside the simplest correct way:

* the tree's bit counts: byte lanes of 64-bit words (``packed_bit_sums``) against unpacking and
  summing, and against a histogram of the bytes, on 200,000 x 128 random bytes;
* an EMS fit of square-wave reports (epsilon 2, n = 10^5, Beta(5, 2)) through the window channel
  against the dense bucket-by-code matrix, the same iterations;
* the multidimensional picks at k = 1: one ``rng.integers`` against the argsort of d random words,
  and its ``(attribute, code)`` counts of 10^7 reports in blocks of 65,536 against one index of all.

    .venv/bin/python bench/bench_numeric_parts.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import ldpest
from ldpest.privacy.exact import random_words
from ldpest_numeric.ems import DenseChannel, WindowChannel, bucket_matrix, em_smoothing
from ldpest_numeric.estimator import code_counts
from ldpest_numeric.tree import packed_bit_sums

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_frequency import best_time  # noqa: E402

_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(np.int64)


def byte_histogram(rows: np.ndarray) -> np.ndarray:
    offsets = np.arange(rows.shape[1], dtype=np.intp) * 256
    histogram = np.bincount((rows + offsets).ravel(), minlength=256 * rows.shape[1])
    return (histogram.reshape(rows.shape[1], 256) @ _BYTE_BITS).ravel()


def main() -> None:
    rng = np.random.default_rng(1)
    rows = rng.integers(0, 256, (200_000, 128), dtype=np.uint8)
    unpack = lambda: np.unpackbits(rows, axis=1, bitorder="little").sum(axis=0)  # noqa: E731
    assert np.array_equal(packed_bit_sums(rows), unpack()) and np.array_equal(byte_histogram(rows), unpack())
    lanes, plain, histogram = (best_time(f, 3) for f in (lambda: packed_bit_sums(rows), unpack,
                                                         lambda: byte_histogram(rows)))
    print(f"bit counts 200,000 x 128 bytes: lanes {lanes:.4f} s, unpack + sum {plain:.4f} s "
          f"({plain / lanes:.1f}x), byte histogram {histogram:.4f} s ({histogram / lanes:.1f}x)")

    mech = ldpest.mechanism("square-wave", epsilon=2.0, low=0, high=1)
    counts = code_counts(mech, mech.privatize(rng.beta(5, 2, 100_000), rng=rng).values).astype(np.float64)
    dense = DenseChannel(bucket_matrix(len(mech.grid()) - 1, 128) @ mech.base_channel().probabilities())
    window = WindowChannel(mech.lattice, 128)
    iterations = em_smoothing(window, counts, 1e-7, 20_000)[1]
    fast = best_time(lambda: em_smoothing(window, counts, 1e-7, iterations), 3)
    slow = best_time(lambda: em_smoothing(dense, counts, 1e-7, iterations), 3)
    print(f"EMS, square wave eps 2, n = 10^5, {iterations} iterations: window {fast:.4f} s, "
          f"dense matrix {slow:.4f} s ({slow / fast:.1f}x)")

    n, d = 1_000_000, 5
    integers = best_time(lambda: rng.integers(0, d, size=(n, 1)), 3)
    argsort = best_time(lambda: np.argsort(random_words(rng, (n, d)), axis=1, kind="stable")[:, :1], 3)
    print(f"picks of 1 in {d}, n = 10^6: rng.integers {integers:.4f} s, argsort of random words "
          f"{argsort:.4f} s ({argsort / integers:.1f}x)")

    mech = ldpest.mechanism("multidimensional", epsilon=2.0, low=[0] * d, high=[1] * d)
    values = np.asarray(mech.privatize(rng.random((10_000_000, d)), rng=rng).values)
    width = max(a.code_count for a in mech.attributes)
    whole = lambda: np.bincount((values[:, :1] * np.uint32(width) + values[:, 1:]).ravel(),  # noqa: E731
                                minlength=d * width)
    assert np.array_equal(whole().reshape(d, width), mech.code_counts(values))
    blocked, one = best_time(lambda: mech.code_counts(values), 3), best_time(whole, 3)
    print(f"(attribute, code) counts of 10^7 reports: blocks {blocked:.4f} s, one index {one:.4f} s "
          f"({one / blocked:.1f}x)")


if __name__ == "__main__":
    main()
