import math
from fractions import Fraction

import numpy as np
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
