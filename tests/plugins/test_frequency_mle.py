"""``projection="mle"``: the maximum-likelihood frequencies of randomized response, in closed form
(``ldpest.stats.projection.affine_count_mle``), checked against its optimality (KKT) conditions and
against the other projections' likelihood."""

from __future__ import annotations

import numpy as np
import pytest

import ldpest
from ldpest.stats.projection import affine_count_mle, project_positive, project_simplex


def _kkt_violation(counts, offset, theta) -> float:
    """Largest violation of the optimality conditions of max sum c log(offset + theta) on the simplex:
    one multiplier ``lam`` with ``c_j / (offset + theta_j) = lam`` where ``theta_j > 0`` and ``<= lam``
    where ``theta_j = 0``, relative to ``lam``."""
    gradient = counts / (offset + theta)
    positive = theta > 0
    lam = gradient[positive].mean()
    equal = np.abs(gradient[positive] - lam).max()
    above = np.maximum(gradient[~positive] - lam, 0).max(initial=0.0)
    return max(equal, above) / lam


@pytest.mark.parametrize("seed", range(20))
def test_affine_count_mle_satisfies_the_optimality_conditions(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 40))
    counts = rng.multinomial(int(rng.integers(1, 500)), rng.dirichlet(np.full(d, 0.3))).astype(float)
    offset = float(rng.choice([1e-6, 0.01, 0.2, 1.0, 10.0]))
    theta = affine_count_mle(counts, offset)
    assert np.all(theta >= 0) and np.isclose(theta.sum(), 1.0, atol=1e-12)
    assert _kkt_violation(counts, offset, theta) < 1e-9


def test_the_check_has_teeth_and_edge_counts():
    counts, offset = np.array([5.0, 3.0, 0.0, 1.0]), 0.1
    theta = affine_count_mle(counts, offset)
    assert _kkt_violation(counts, offset, project_simplex(counts / 9 - 0.05)) > 1e-3  # a wrong answer fails
    assert _kkt_violation(counts, offset, theta) < 1e-12
    np.testing.assert_array_equal(affine_count_mle(np.array([0.0, 1.0, 0.0]), 0.5), [0.0, 1.0, 0.0])  # one report
    np.testing.assert_allclose(affine_count_mle(np.full(4, 7.0), 0.3), np.full(4, 0.25))
    with pytest.raises(ValueError):
        affine_count_mle(np.zeros(3), 0.5)


def _log_likelihood(mech, counts, theta):
    return float(np.sum(counts * np.log(mech.q + (mech.p - mech.q) * theta)))


@pytest.mark.parametrize("epsilon", [0.5, 2.0, 8.0])
def test_randomized_response_mle_beats_the_projections_likelihood(epsilon):
    d = 20
    mech = ldpest.mechanism("randomized-response", epsilon=epsilon, categories=list(range(d)))
    truth = np.r_[0.5, 0.3, 0.2, np.zeros(d - 3)]
    rng = np.random.default_rng(int(epsilon * 10))
    reports = mech.privatize(rng.choice(d, size=5000, p=truth), rng=rng)
    result = ldpest.estimate(reports, ldpest.estimator("frequency", projection="mle"))
    assert result.attrs["projection"] == "mle"
    counts = np.bincount(reports.values, minlength=d)
    mle = result["probability"].values
    for other in (project_simplex(result["unprojected"].values), project_positive(result["unprojected"].values)):
        assert _log_likelihood(mech, counts, mle) >= _log_likelihood(mech, counts, other) - 1e-9
    np.testing.assert_allclose(result["unprojected"].values,  # the unbiased estimate and its stderr are kept
                               ldpest.estimate(reports)["unprojected"].values)


def test_mle_is_the_unbiased_estimate_inside_the_simplex():
    mech = ldpest.mechanism("randomized-response", epsilon=2.0, categories=["a", "b", "c"])
    reports = mech.privatize(np.random.default_rng(1).choice(["a", "b", "c"], size=20_000), rng=2)
    result = ldpest.estimate(reports, ldpest.estimator("frequency", projection="mle"))
    assert np.all(result["unprojected"].values > 0)
    np.testing.assert_allclose(result["probability"].values, result["unprojected"].values, rtol=1e-12)


@pytest.mark.filterwarnings("ignore::ldpest.EstimateWarning")  # two reports say little: expected
def test_mle_without_sufficient_counts_is_refused_clearly():
    mech = ldpest.mechanism("unary-randomized-response", epsilon=1.0, categories=["a", "b"])
    with pytest.raises(ldpest.ParameterError, match="not sufficient .* randomized-response"):
        ldpest.estimate(mech.privatize(["a", "b"], rng=1), ldpest.estimator("frequency", projection="mle"))
