"""Randomness: explicit generators and the cryptographically secure option."""

import numpy as np
import pytest
from scipy import stats

import ldpest
from ldpest.privacy.rng import resolve_rng

# The secure generator cannot be seeded, so its tests use p-value thresholds
# with a false-alarm rate of 1e-6 per test instead of a seed.
ALARM = 1e-6


@pytest.mark.parametrize("span", [2, 3, 10, 1000, 2 ** 40 + 7])
def test_secure_integers_are_uniform_and_in_range(span):
    values = ldpest.secure_rng().integers(0, span, size=200_000)
    assert values.min() >= 0 and values.max() < span
    bins = min(span, 50)
    edges = [span * i // bins for i in range(bins + 1)]  # bin i holds [edges[i], edges[i+1])
    counts = np.histogram(values, bins=np.array(edges, dtype=float) - 0.5)[0]
    expected = np.diff(edges) / span * values.size
    assert counts.sum() == values.size
    assert stats.chisquare(counts, expected).pvalue > ALARM


def test_secure_random_is_uniform_on_unit_interval_with_53_bits():
    values = ldpest.secure_rng().random(200_000)
    assert values.min() >= 0 and values.max() < 1
    assert np.all(values * 2.0 ** 53 == np.floor(values * 2.0 ** 53))
    assert stats.kstest(values, "uniform").pvalue > ALARM


@pytest.mark.parametrize("name", ["randomized-response", "unary-randomized-response", "laplace"])
def test_secure_reports_estimate_within_6_standard_errors(name):
    mech = ldpest.mechanism(name, epsilon=1.0, categories=["a", "b", "c"])
    reports = mech.privatize(["a", "b", "c"] * 1000, rng="secure")
    assert reports.data.attrs["rng"] == "secure"
    result = ldpest.estimate(reports)
    assert np.all(np.abs(result["unprojected"] - 1 / 3) < 6 * result["stderr"])


def test_seeded_generators_reproduce_and_are_flagged():
    mech = ldpest.mechanism("randomized-response", epsilon=1.0, categories=[0, 1, 2])
    a = mech.privatize([0, 1, 2] * 50, rng=5)
    b = mech.privatize([0, 1, 2] * 50, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(a.values, b.values)
    assert a.data.attrs["rng"] == "numpy-seeded" and b.data.attrs["rng"] == "numpy"


@pytest.mark.parametrize("bad", ["mersenne", 1.5, True, object()])
def test_bad_rng_is_a_clear_error(bad):
    with pytest.raises(ldpest.ParameterError, match="rng"):
        resolve_rng(bad)


@pytest.mark.parametrize("name,params,data", [
    ("randomized-response", {"categories": ["a", "b"]}, ["a", "b"] * 50),
    ("unary-randomized-response", {"categories": ["a", "b"]}, ["a", "b"] * 50),
    ("laplace", {"categories": ["a", "b"]}, ["a", "b"] * 50),
    ("local-hashing", {"categories": ["a", "b"]}, ["a", "b"] * 50),
    ("subset-selection", {"categories": ["a", "b", "c"]}, ["a", "b", "c"] * 50),
    ("subset-selection", {"categories": list(range(1000))}, list(range(1000))),
    ("hadamard-response", {"categories": ["a", "b"]}, ["a", "b"] * 50),
    ("laplace-histogram", {"low": [0], "high": [1], "bins": 10}, np.linspace(0, 1, 100)),
    ("linf-sampling", {"basis": "trigonometric", "k": 8}, np.linspace(0, 1, 100)),
    ("linf-sampling", {"basis": "walsh", "k": 4}, np.linspace(0, 1, 100)),
    ("laplace-series", {"basis": "trigonometric", "k": 8}, np.linspace(0, 1, 100)),
])
def test_every_mechanism_privatizes_with_the_secure_generator(name, params, data):
    """The CLI's default generator (os.urandom) works with every sampler, including those that
    modify their random words in place."""
    mech = ldpest.mechanism(name, epsilon=1.0, **params)
    reports = mech.privatize(data, rng="secure")
    assert reports.n == len(data) and reports.data.attrs["rng"] == "secure"


@pytest.mark.parametrize("bits", [np.random.PCG64, np.random.PCG64DXSM, np.random.Philox, np.random.SFC64,
                                  np.random.MT19937])
def test_random_words_are_the_full_range_integers_of_every_bit_generator(bits):
    """The raw-output shortcut gives numpy's own uniform 64-bit words and leaves the stream where they
    would; MT19937, whose raw output is 32 bits, goes through ``integers``."""
    from ldpest.privacy.exact import random_words

    ours, numpys = np.random.Generator(bits(3)), np.random.Generator(bits(3))
    words = random_words(ours, (7, 3))
    expected = numpys.integers(0, 2 ** 64 - 1, size=21, dtype=np.uint64, endpoint=True).reshape(7, 3)
    assert words.dtype == np.uint64
    np.testing.assert_array_equal(words, expected)
    assert ours.random() == numpys.random()
    assert words.max() > 2 ** 32  # whole 64-bit words, not 32-bit raw outputs
