"""The frequency estimator's projections ``ibu`` (the fixed point of the iterative Bayesian update on
support counts) and ``shrink`` (James-Stein shrinkage toward uniform, then the simplex projection)."""

import warnings

import numpy as np
import pytest

import ldpest
from ldpest.stats.projection import ibu_fixed_point, project_positive, project_simplex

SUPPORT_COUNT_ORACLES = ("randomized-response", "unary-randomized-response", "subset-selection", "local-hashing")


def reports_of(name, epsilon, d, n, seed, truth=None):
    mechanism = ldpest.mechanism(name, epsilon=epsilon, categories=list(range(d)))
    rng = np.random.default_rng(seed)
    truth = np.exp(-np.arange(d) / 2.0) if truth is None else truth
    data = rng.choice(d, size=n, p=truth / truth.sum())
    return mechanism, mechanism.privatize(data, rng=rng)


def quiet_estimate(reports, projection):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ldpest.EstimateWarning)
        return ldpest.estimate(reports, ldpest.estimator("frequency", projection=projection))


def pseudo_likelihood(counts, offset, theta):
    return float(np.sum(counts * np.log(offset + theta)))


@pytest.mark.parametrize("name", SUPPORT_COUNT_ORACLES)
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_ibu_is_the_maximum_of_the_support_count_likelihood(name, epsilon):
    """KKT on the simplex: c_j / (r + theta_j) is one level on the support and c_j / r is at most it off it;
    no other distribution (projections, IBU iterates from the uniform start) has a higher likelihood."""
    mechanism, reports = reports_of(name, epsilon, 12, 3000, seed=1)
    result = quiet_estimate(reports, "ibu")
    counts, offset, gap = mechanism.count_model(mechanism.frequency_statistics(reports.values))
    counts = np.asarray(counts, dtype=np.float64)
    r = offset / gap
    theta = result["probability"].values
    assert theta.sum() == pytest.approx(1) and theta.min() >= 0
    support = theta > 0
    levels = counts[support] / (r + theta[support])
    np.testing.assert_allclose(levels, levels[0], rtol=1e-9)
    assert np.all(counts[~support] / r <= levels[0] * (1 + 1e-9))
    best = pseudo_likelihood(counts, r, theta)
    unbiased = result["unprojected"].values
    iterate = np.full(12, 1 / 12)
    observed = counts / counts.sum()
    for _ in range(2000):  # multi-freq-ldpy's IBU with A = (p - q) I + q J, in O(d)
        ratio = observed / (iterate + r)
        iterate = iterate * (ratio + r * ratio.sum())
    for other in (project_simplex(unbiased), project_positive(unbiased), iterate):
        assert pseudo_likelihood(counts, r, other) <= best + 1e-9 * abs(best)
    if epsilon >= 2:  # the iteration approaches it; at epsilon 0.5 it is still far after 2000 steps
        np.testing.assert_allclose(iterate, theta, atol=2e-3)


def test_ibu_of_randomized_response_is_its_mle():
    _, reports = reports_of("randomized-response", 1.0, 20, 2000, seed=2)
    np.testing.assert_allclose(quiet_estimate(reports, "ibu")["probability"].values,
                               quiet_estimate(reports, "mle")["probability"].values, rtol=1e-12, atol=1e-15)


def test_ibu_needs_support_counts():
    _, reports = reports_of("laplace", 1.0, 5, 100, seed=3)
    with pytest.raises(ldpest.ParameterError, match="projection='ibu'.*support counts"):
        quiet_estimate(reports, "ibu")


def test_ibu_of_reports_that_support_nothing_is_uniform():
    np.testing.assert_array_equal(ibu_fixed_point(np.full(4, -0.25), 0.25), np.full(4, 0.25))


@pytest.mark.parametrize("name", [*SUPPORT_COUNT_ORACLES, "hadamard-response", "laplace"])
def test_shrink_is_a_distribution_with_its_weight_recorded(name):
    mechanism, reports = reports_of(name, 1.0, 10, 500, seed=4, truth=np.ones(10))
    result = quiet_estimate(reports, "shrink")
    estimate = result["probability"].values
    assert estimate.min() >= 0 and estimate.sum() == pytest.approx(1)
    weight = result.attrs["shrink_weight"]
    assert 0 <= weight <= 1
    assert result.attrs["projection"] == "shrink"


def test_shrink_takes_uniform_data_to_uniform_and_leaves_clear_data_alone():
    """Flat truth at small epsilon: the estimate is within its noise of uniform, so it is shrunk (nearly)
    all the way and beats the simplex projection by far; a point mass at large epsilon is hardly shrunk."""
    errors = {"shrink": [], "simplex": []}
    for seed in range(10):
        _, reports = reports_of("randomized-response", 0.5, 50, 5000, seed=seed, truth=np.ones(50))
        for projection in errors:
            estimate = quiet_estimate(reports, projection)["probability"].values
            errors[projection].append(np.sum((estimate - 1 / 50) ** 2))
    assert np.mean(errors["shrink"]) < 0.2 * np.mean(errors["simplex"])
    truth = np.zeros(20)
    truth[3] = 1
    _, reports = reports_of("randomized-response", 8.0, 20, 5000, seed=5, truth=truth)
    result = quiet_estimate(reports, "shrink")
    assert result.attrs["shrink_weight"] > 0.99
    assert result["probability"].values[3] > 0.99


@pytest.mark.parametrize("n", [1, 10, 30])
def test_shrink_and_ibu_at_the_smallest_n_and_the_extreme_epsilons(n):
    """All mass on one category (a boundary truth): a distribution every time, no warning but the
    uninformative one, at epsilon 1e-3, 50 and 700."""
    for epsilon in (1e-3, 50.0, 700.0):
        for name in SUPPORT_COUNT_ORACLES:
            mechanism = ldpest.mechanism(name, epsilon=epsilon, categories=["a", "b", "c"])
            reports = mechanism.privatize(np.array(["a"] * n, dtype=object), rng=4)
            for projection in ("shrink", "ibu"):
                estimate = quiet_estimate(reports, projection)["probability"].values
                assert np.all(np.isfinite(estimate)) and np.all(estimate >= 0), (name, epsilon, n, projection)
                assert estimate.sum() == pytest.approx(1.0), (name, epsilon, n, projection)
