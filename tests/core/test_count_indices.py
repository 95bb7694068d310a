"""count_indices is np.bincount, also on the pair-counting path for one-byte reports (issue 15)."""

import numpy as np
import pytest

from ldpest.stats import count_indices
from ldpest.stats import sufficient as stats


@pytest.mark.parametrize("n", [0, 1, 999, stats._PAIR_COUNT_MIN, stats._PAIR_COUNT_MIN + 1, 1_000_003])
@pytest.mark.parametrize("high", [1, 20, 256])
def test_counts_equal_bincount_for_every_length_and_range(n, high):
    values = np.random.default_rng(n + high).integers(0, high, n).astype(np.uint8)
    if n:
        values[-1] = high - 1  # the odd tail, at the top of the range
    expected = np.bincount(values.astype(np.int64), minlength=20)
    counts = count_indices(values, 20)
    assert counts.dtype == np.int64 and np.array_equal(counts, expected)


def test_indices_beyond_size_lengthen_the_counts_as_bincount_does():
    values = np.zeros(stats._PAIR_COUNT_MIN + 7, dtype=np.uint8)
    values[5], values[-1] = 200, 31
    counts = count_indices(values, 10)
    assert len(counts) == 201 and counts[200] == 1 and counts[31] == 1 and counts.sum() == values.size


def test_strided_and_wider_indices():
    wide = np.random.default_rng(0).integers(0, 7, 2 * stats._PAIR_COUNT_MIN + 2).astype(np.uint8)
    strided = wide[::2]
    assert np.array_equal(count_indices(strided, 7), np.bincount(strided, minlength=7))
    for dtype in (np.uint16, np.uint32, np.int64):
        assert np.array_equal(count_indices(wide.astype(dtype), 7), np.bincount(wide, minlength=7))
