"""Stein's unbiased risk estimates (ldpest.stats.risk): the divergences are those of the implemented
maps, and the risk estimate is unbiased where its premise (a normal unbiased estimate) holds."""

import numpy as np
import pytest

import ldpest
import ldpest.stats.risk as risk
from ldpest.stats.projection import (
    affine_count_mle,
    ibu_fixed_point,
    project_positive,
    project_simplex,
    shrink_to_uniform,
)
from ldpest.stats.risk import (
    CovarianceOperator,
    affine_mle_divergence,
    estimate_seed,
    gaussian_sampler,
    low_rank_root,
    plug_in_risks,
    positive_divergence,
    shrink_divergence,
    simplex_divergence,
    stein_risk,
)


def oracle_covariance(name, epsilon, d, theta, n, factors=False):
    mechanism = ldpest.mechanism(name, epsilon=epsilon, categories=list(range(d)))
    declared = mechanism.frequency_cross_covariance_factors(theta) if factors else None
    return mechanism, CovarianceOperator(mechanism.frequency_variance(theta) / n,
                                         lambda v: mechanism.frequency_cross_covariance(theta, v) / n,
                                         columns=mechanism.cross_covariance_columns,
                                         factors=None if declared is None else (declared[0], declared[1] / n))


def dense(covariance, d):
    return np.column_stack([covariance @ unit for unit in np.eye(d)])


def numeric_divergence(function, x, sigma, step=1e-7):
    """tr(Sigma J) with J by central differences of the implemented map."""
    jacobian = np.column_stack([(function(x + step * e) - function(x - step * e)) / (2 * step) for e in np.eye(x.size)])
    return float(np.trace(sigma @ jacobian))


@pytest.mark.parametrize("seed", range(6))
def test_divergences_are_those_of_the_implemented_maps(seed):
    rng = np.random.default_rng(seed)
    d, n = 12, 500
    theta = rng.dirichlet(np.ones(d) * 0.5)
    mechanism, covariance = oracle_covariance("randomized-response", 1.0, d, theta, n)
    sigma = dense(covariance, d)
    x = theta + rng.multivariate_normal(np.zeros(d), sigma)
    simplex = project_simplex(x)
    assert simplex_divergence(simplex, covariance) == pytest.approx(numeric_divergence(project_simplex, x, sigma),
                                                                    rel=1e-5, abs=1e-10)
    assert positive_divergence(x, covariance) == pytest.approx(numeric_divergence(project_positive, x, sigma),
                                                              rel=1e-5, abs=1e-10)
    offset, gap = mechanism.binomial_model()
    r = offset / gap

    def mle_of(unbiased):  # the closed form from the counts that this unbiased estimate stands for
        return affine_count_mle(n * gap * (unbiased + r), r)

    mle = mle_of(x)
    assert affine_mle_divergence(x, mle, r, covariance) == pytest.approx(numeric_divergence(mle_of, x, sigma),
                                                                        rel=1e-5, abs=1e-10)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("spread", [0.3, 1.0, 3.0])
def test_the_shrinkage_and_ibu_divergences_are_those_of_the_implemented_maps(seed, spread):
    """James-Stein shrinkage toward uniform then the simplex projection, at data near uniform (weight 0
    or small) and far from it; the IBU fixed point on unary support counts."""
    rng = np.random.default_rng(seed)
    d, n = 12, 500
    theta = rng.dirichlet(np.ones(d) * 0.5)
    mechanism, covariance = oracle_covariance("unary-randomized-response", 1.0, d, theta, n)
    sigma = dense(covariance, d)
    x = 1 / d + spread * (theta - 1 / d) + rng.multivariate_normal(np.zeros(d), sigma)
    total = float(np.trace(sigma))
    shrunk, weight = shrink_to_uniform(x, total)
    assert shrunk.sum() == pytest.approx(1) and shrunk.min() >= 0 and 0 <= weight <= 1
    numeric = numeric_divergence(lambda v: shrink_to_uniform(v, total)[0], x, sigma)
    assert shrink_divergence(x, shrunk, weight, total, covariance) == pytest.approx(numeric, rel=1e-5, abs=1e-10)
    offset, gap = mechanism.binomial_model()
    r = offset / gap
    ibu = ibu_fixed_point(x, r)
    numeric = numeric_divergence(lambda v: ibu_fixed_point(v, r), x, sigma)
    assert affine_mle_divergence(x, ibu, r, covariance) == pytest.approx(numeric, rel=1e-5, abs=1e-10)


def test_shrinkage_goes_all_the_way_within_the_noise_and_not_without_noise():
    x = np.array([0.3, 0.2, 0.5])
    assert shrink_to_uniform(x, 1.0)[1] == 0.0
    np.testing.assert_allclose(shrink_to_uniform(x, 1.0)[0], np.full(3, 1 / 3))
    assert shrink_to_uniform(x, 0.0) == (pytest.approx(x), 1.0)
    spread = np.sum((x - 1 / 3) ** 2)
    assert shrink_to_uniform(x, spread / 4)[1] == pytest.approx(0.75)
    assert shrink_to_uniform(np.full(3, 1 / 3), 0.1)[1] == 0.0  # exactly uniform: nothing to keep


@pytest.mark.parametrize("name,epsilon,flat", [("randomized-response", 0.5, True), ("randomized-response", 2, False),
                                               ("hadamard-response", 1, False), ("subset-selection", 1, True)])
def test_stein_risk_is_unbiased_for_a_normal_estimate_and_needs_the_cross_covariance(name, epsilon, flat):
    """E[SURE] = E||g(x) - theta||^2 for x ~ N(theta, Sigma): the mean difference over 16000 draws is within
    5 standard errors of 0.  Dropping the off-diagonal covariance (as a diagonal-only estimate would)
    moves it far outside: the test has teeth.  (With 4000 draws Hadamard response's larger z of the two was
    2.8-6.0 over seeds 0-5, too close to 5 to tell every time; 16000 draws double it.)"""
    d, n, draws = 30, 2000, 16000
    theta = np.ones(d) / d if flat else np.exp(-np.arange(d) / 4.0) / np.exp(-np.arange(d) / 4.0).sum()
    _, covariance = oracle_covariance(name, epsilon, d, theta, n)
    diagonal_only = CovarianceOperator(covariance.diagonal, lambda v: np.zeros_like(v))
    sample = gaussian_sampler(covariance)
    rng = np.random.default_rng(1)
    differences = {"simplex": [], "positive": [], "shrink": [], "simplex_diagonal": [], "positive_diagonal": []}
    for x in sample(theta, rng, draws):
        for label, operator in (("", covariance), ("_diagonal", diagonal_only)):
            simplex, positive = project_simplex(x), project_positive(x)
            differences["simplex" + label].append(
                stein_risk(x, simplex, covariance.diagonal, simplex_divergence(simplex, operator))
                - np.sum((simplex - theta) ** 2))
            differences["positive" + label].append(
                stein_risk(x, positive, covariance.diagonal, positive_divergence(x, operator))
                - np.sum((positive - theta) ** 2))
        total = float(covariance.diagonal.sum())
        shrunk, weight = shrink_to_uniform(x, total)
        differences["shrink"].append(stein_risk(x, shrunk, covariance.diagonal,
                                                shrink_divergence(x, shrunk, weight, total, covariance))
                                     - np.sum((shrunk - theta) ** 2))
    z = {key: np.mean(v) / (np.std(v, ddof=1) / np.sqrt(draws)) for key, v in differences.items()}
    assert abs(z["simplex"]) < 5 and abs(z["positive"]) < 5 and abs(z["shrink"]) < 5, z
    assert max(abs(z["simplex_diagonal"]), abs(z["positive_diagonal"])) > 5, z


@pytest.mark.parametrize("name,fixed_sum,factors", [
    ("subset-selection", True, False), ("randomized-response", True, False),
    ("unary-randomized-response", False, False), ("local-hashing", False, False),
    ("subset-selection", True, True), ("local-hashing", False, True)])
def test_the_normal_sampler_has_the_covariance_and_the_bootstrap_the_risk(name, fixed_sum, factors):
    """Every entry of the sample covariance of 20000 draws is within 5 of its standard errors of Sigma, by
    Cholesky's factor or by the low-rank root where the oracle declares factors, with the estimate's sum fixed
    (subset selection, randomized response: Sigma 1 = 0) or not; and the bootstrap's risk of the estimate
    itself is tr(Sigma)."""
    d, n = 8, 1000
    theta = np.arange(1, d + 1) / np.arange(1, d + 1).sum()
    _, covariance = oracle_covariance(name, 1.0, d, theta, n, factors)
    assert (low_rank_root(covariance) is not None) == factors
    sigma = dense(covariance, d)
    assert (np.abs(sigma.sum(axis=1)).max() < 1e-15) == fixed_sum
    np.testing.assert_allclose(covariance.dense(), (sigma + sigma.T) / 2, rtol=1e-12, atol=1e-18)
    sample = gaussian_sampler(covariance)
    rng = np.random.default_rng(2)
    draws = sample(theta, rng, 20000)
    se = np.sqrt((np.outer(np.diag(sigma), np.diag(sigma)) + sigma ** 2) / len(draws))  # of a sample covariance
    assert np.all(np.abs(np.cov(draws.T) - sigma) < 5 * se)
    if fixed_sum:
        np.testing.assert_allclose(draws.sum(axis=1), 1.0, rtol=1e-12)
    risks = plug_in_risks(theta, {"none": sample(theta, rng, 20000)})
    assert risks["none"] == pytest.approx(np.trace(sigma), rel=5 * np.sqrt(2 / 20000) * 3)


@pytest.mark.parametrize("name", ["subset-selection", "local-hashing"])
@pytest.mark.parametrize("epsilon", [0.01, 0.5, 4.0, 8.0])
@pytest.mark.parametrize("d", [3, 10, 300])
def test_the_low_rank_root_squares_to_the_covariance(name, epsilon, d):
    """``R R^T = Sigma`` to 1e-10 of its largest entry, at a skewed, the flat and a corner truth, where the
    oracle declares its cross covariance as rank 2 (the diagonal rest ``D`` is positive in every case)."""
    n = 1000
    for theta in (np.exp(-12.5 * np.arange(d) / d), np.ones(d), np.eye(d)[0] + 1e-3):
        theta = theta / theta.sum()
        _, covariance = oracle_covariance(name, epsilon, d, theta, n, factors=True)
        scale, basis, stretch = low_rank_root(covariance)
        root = scale[:, None] * (np.eye(d) + (basis * stretch) @ basis.T)
        sigma = covariance.dense()
        assert np.abs(root @ root.T - sigma).max() <= 1e-10 * np.abs(sigma).max()


@pytest.mark.parametrize("epsilon", [30.0, 60.0])
def test_the_low_rank_root_is_refused_where_the_diagonal_rest_cancels(epsilon, monkeypatch):
    """Subset selection at a corner truth and large epsilon: a category's variance and the diagonal of ``V S
    V^T`` agree to the last few digits, so ``D`` is mostly rounding and the root misses ``Sigma`` (by 1e-4 to
    49 of its largest entry).  The probes catch it, the dense factor is taken, and its draws are finite; without
    the probes' tolerance the wrong root would be taken."""
    d, n = 5, 1000
    theta = np.eye(d)[0]
    _, covariance = oracle_covariance("subset-selection", epsilon, d, theta, n, factors=True)
    assert low_rank_root(covariance) is None
    assert np.isfinite(gaussian_sampler(covariance)(theta, np.random.default_rng(5), 100)).all()
    monkeypatch.setattr(risk, "ROOT_TOLERANCE", np.inf)
    scale, basis, stretch = low_rank_root(covariance)
    root = scale[:, None] * (np.eye(d) + (basis * stretch) @ basis.T)
    sigma = covariance.dense()
    assert np.abs(root @ root.T - sigma).max() > 1e-6 * np.abs(sigma).max()


def test_the_low_rank_root_is_not_taken_where_the_diagonal_rest_is_not_positive():
    """Factors whose own diagonal exceeds the variances (here the whole covariance, diagonal doubled, as
    factors of rank d) leave no positive ``D``: Cholesky's factor is taken, and the draws still have Sigma."""
    base = np.array([[2.0, 0.5, -0.3], [0.5, 1.0, 0.2], [-0.3, 0.2, 1.5]])
    off = base - np.diag(np.diag(base))
    covariance = CovarianceOperator(np.diag(base), lambda v: off @ v,
                                    factors=(np.eye(3), off + 2 * np.diag(np.diag(base))))
    assert low_rank_root(covariance) is None
    draws = gaussian_sampler(covariance)(np.zeros(3), np.random.default_rng(4), 20000)
    se = np.sqrt((np.outer(np.diag(base), np.diag(base)) + base ** 2) / len(draws))
    assert np.all(np.abs(np.cov(draws.T) - base) <= 5 * se)


def test_the_normal_sampler_falls_back_to_eigenvalues_where_cholesky_cannot_factor():
    """A covariance singular along another direction than 1 (here e_1: a category without variance) has no
    Cholesky factor; the draws still have it, and leave that category alone."""
    base = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 0.0]])
    covariance = CovarianceOperator(np.diag(base), lambda v: (base - np.diag(np.diag(base))) @ v)
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cholesky(base)
    draws = gaussian_sampler(covariance)(np.zeros(3), np.random.default_rng(3), 20000)
    assert np.all(draws[:, 2] == 0)
    se = np.sqrt((np.outer(np.diag(base), np.diag(base)) + base ** 2) / len(draws))
    assert np.all(np.abs(np.cov(draws.T) - base) <= 5 * se)


def test_the_seed_is_a_function_of_the_statistics():
    theta = np.array([0.2, 0.3, 0.5])
    assert estimate_seed(theta, 10) == estimate_seed(theta.copy(), 10)
    assert estimate_seed(theta, 10) != estimate_seed(theta, 11)
    assert estimate_seed(theta, 10) != estimate_seed(np.array([0.2, 0.5, 0.3]), 10)
