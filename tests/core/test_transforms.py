"""The Walsh-Hadamard transform: the factored matrix products and the butterflies agree with the definition
at every size (one, two and three groups of index bits), and integers stay exact on both sides of the
float64 guard."""

from __future__ import annotations

import numpy as np
import pytest

from ldpest.stats.transforms import _FACTOR, _butterflies, fwht, hadamard_matrix


def definition(size: int) -> np.ndarray:
    rows = np.arange(size)
    return 1 - 2 * (np.bitwise_count(rows[:, None] & rows[None, :]) & 1).astype(np.int64)


@pytest.mark.parametrize("size", [1, 2, 4, 32, _FACTOR, 2 * _FACTOR, 8 * _FACTOR])
def test_integer_transform_is_the_exact_matrix_product(size):
    values = np.random.default_rng(size).integers(-1000, 1000, (3, 2, size))
    out = fwht(values)
    assert out.dtype == values.dtype
    np.testing.assert_array_equal(out, values @ definition(size))


@pytest.mark.parametrize("size", [2, 64, _FACTOR, 2 * _FACTOR, 8 * _FACTOR])
def test_float_transform_matches_the_definition_and_keeps_its_dtype(size):
    values = np.random.default_rng(size).standard_normal((5, size))
    np.testing.assert_allclose(fwht(values), values @ definition(size), rtol=0, atol=1e-10 * size)
    assert fwht(values.astype(np.float32)).dtype == np.float32


def test_integers_beyond_float_precision_stay_exact():
    """Past the guard (size * max|value| >= 2^53) the butterflies run in int64: a float64 product
    would lose the low bits of 2^60 + 1."""
    values = np.array([[2 ** 60 + 1, 1, 0, 3]], dtype=np.int64)
    np.testing.assert_array_equal(fwht(values), values @ definition(4))
    assert fwht(values)[0, 0] == 2 ** 60 + 5


def test_the_two_ways_agree_and_the_input_is_untouched():
    values = np.random.default_rng(0).integers(-9, 9, (7, 16))
    kept = values.copy()
    np.testing.assert_array_equal(fwht(values), _butterflies(values))
    np.testing.assert_array_equal(values, kept)
    np.testing.assert_array_equal(hadamard_matrix(16) @ hadamard_matrix(16), 16 * np.eye(16))
    assert fwht(np.zeros((0, 8))).shape == (0, 8)


@pytest.mark.parametrize("size", [_FACTOR ** 2, 4 * _FACTOR ** 2])
def test_three_groups_of_bits_match_the_butterflies(size):
    """Beyond 2^14 the index has three groups of bits; the butterflies (checked against the definition
    above) are the reference."""
    rng = np.random.default_rng(size)
    integers = rng.integers(-1000, 1000, (2, size))
    np.testing.assert_array_equal(fwht(integers), _butterflies(integers))
    floats = rng.standard_normal((3, 1, size))
    np.testing.assert_allclose(fwht(floats), _butterflies(floats), rtol=0, atol=1e-9 * np.sqrt(size))
