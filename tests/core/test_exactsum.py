import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from ldpest import ExactSum

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)


@given(arrays(np.float64, st.tuples(st.integers(1, 60), st.integers(1, 4)), elements=finite), st.randoms())
@settings(max_examples=300, deadline=None)
def test_exact_sum_is_correctly_rounded_and_order_independent(values, random):
    total = ExactSum.of(values)
    expected = [math.fsum(values[:, j]) for j in range(values.shape[1])]
    np.testing.assert_array_equal(total.to_float(), expected)
    cut = random.randint(0, values.shape[0])
    order = list(range(values.shape[0]))
    random.shuffle(order)
    shuffled = values[order]
    split = ExactSum.of(shuffled[cut:]) + ExactSum.of(shuffled[:cut])
    assert split == total
    assert split.to_fraction() == [sum(Fraction(v) for v in values[:, j]) for j in range(values.shape[1])]


def test_exact_sum_handles_large_blocks_and_subnormals():
    rng = np.random.default_rng(0)
    values = rng.laplace(size=(300_000, 3))
    values[::1000] = 5e-324
    assert np.array_equal(ExactSum.of(values).to_float(), [math.fsum(values[:, j]) for j in range(3)])


# --- exact Gram matrices (issue 15: laplace-series without an (n, k^2) array) ----------------------
def _exact_gram(values) -> list[int]:
    """sum_i outer(v_i, v_i) in Python integers (values are integers)."""
    rows = values.astype(np.int64).astype(object)
    return sum(np.outer(row, row) for row in rows).ravel().tolist()


@pytest.mark.parametrize("largest", [2 ** 10, 2 ** 20, 2 ** 31 - 1])  # one product, and the split halves
def test_gram_on_a_lattice_is_the_exact_integer_sum(largest):
    rng = np.random.default_rng(largest)
    units = rng.integers(-largest, largest + 1, size=(3000, 5))
    units[0, 0], units[1, 1] = largest, -largest
    step = 2.0 ** -7
    sums, gram = ExactSum.sums_and_gram(units * step, step)
    assert [int(v) for v in gram.numerators] == _exact_gram(units) and gram.exponent == -14
    assert [int(v) for v in sums.numerators] == units.sum(axis=0).tolist() and sums.exponent == -7
    assert gram.shape == (25,) and sums.shape == (5,)


def test_gram_equals_the_general_path_and_adds_over_chunks(monkeypatch):
    from ldpest.stats import exactsum

    monkeypatch.setattr(exactsum, "_GRAM_BLOCK", 64)  # several blocks
    rng = np.random.default_rng(1)
    values = rng.integers(-40000, 40000, size=(1000, 4)) * 2.0 ** -8
    whole = ExactSum.gram(values, 2.0 ** -8)
    assert whole == ExactSum.of((values[:, :, None] * values[:, None, :]).reshape(1000, 16))
    assert ExactSum.gram(values[:300], 2.0 ** -8) + ExactSum.gram(values[300:], 2.0 ** -8) == whole
    off = values + 2.0 ** -20  # off the lattice: the general path, still exact
    assert ExactSum.gram(off, 2.0 ** -8) == ExactSum.of((off[:, :, None] * off[:, None, :]).reshape(1000, 16))
    with pytest.raises(ValueError, match="2-D"):
        ExactSum.gram(values[:, 0], 2.0 ** -8)


# --- the lattice path of ExactSum.of (blocks checked in cache, summed by BLAS) -------------------
@pytest.mark.parametrize("columns", [1, 3])
@pytest.mark.parametrize("largest", [1, 2 ** 20, 2 ** 32 - 1])
def test_lattice_sum_is_the_exact_integer_sum_across_blocks(monkeypatch, largest, columns):
    """Blocks of 32 rows (96 / 3; 96 rows for one column, summed by numpy rather than BLAS), their int64 sums
    moved to Python integers every 100 rows or fewer (``_PENDING_ROWS``), and a ragged last block."""
    from ldpest.stats import exactsum

    monkeypatch.setattr(exactsum, "_LATTICE_BLOCK", 96)
    monkeypatch.setattr(exactsum, "_PENDING_ROWS", 100)
    rng = np.random.default_rng(largest)
    units = rng.integers(-largest, largest + 1, size=(1001, columns))
    units[:400, 0] = largest  # partial sums far beyond 2^53 when added across blocks
    units[5, -1] = -largest
    step = 2.0 ** -9
    total = exactsum.ExactSum._of_lattice(units * step, step)
    assert total is not None  # the lattice path took it
    assert [int(v) for v in total.numerators] == units.sum(axis=0).tolist() and total.exponent == -9
    assert total == ExactSum.of(units * step)  # the general path agrees


def test_lattice_sum_refuses_what_it_cannot_add_exactly_and_the_general_path_takes_over():
    from ldpest.stats import exactsum

    step = 2.0 ** -3
    base = np.arange(-50, 50, dtype=np.float64).reshape(25, 4) * step
    for bad in [2.0 ** 32 * step, -(2.0 ** 32) * step, step / 2, 1e-300, np.inf, -np.inf]:
        values = base.copy()
        values[17, 2] = bad
        assert exactsum.ExactSum._of_lattice(values, step) is None, bad
        if np.isfinite(bad):
            assert ExactSum.of(values, step).to_fraction() == [sum(Fraction(v) for v in values[:, j])
                                                                for j in range(4)]
    values = base.copy()
    values[3, 3] = np.nan
    assert exactsum.ExactSum._of_lattice(values, step) is None
    with pytest.raises(ValueError, match="finite"):
        ExactSum.of(values, step)
    edge = base.copy()
    edge[0, 0], edge[1, 1], edge[2, 2] = (2.0 ** 32 - 1) * step, -(2.0 ** 32 - 1) * step, -0.0
    assert exactsum.ExactSum._of_lattice(edge, step) == ExactSum.of(edge)
    strided = np.repeat(base, 2, axis=1)[:, ::2]  # not contiguous
    assert exactsum.ExactSum._of_lattice(strided, step) == ExactSum.of(base)
