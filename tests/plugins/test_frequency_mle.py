"""``projection="mle"``: the maximum-likelihood frequencies of randomized response, in closed form
(``ldpest.stats.projection.affine_count_mle``), checked against its optimality (KKT) conditions and
against the other projections' likelihood."""

from __future__ import annotations

import warnings

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
    with pytest.raises(ldpest.ParameterError, match="not sufficient .* randomized-response and hadamard-response"):
        ldpest.estimate(mech.privatize(["a", "b"], rng=1), ldpest.estimator("frequency", projection="mle"))


def _hadamard_counts(d, epsilon, n, seed):
    mech = ldpest.mechanism("hadamard-response", epsilon=epsilon, categories=list(range(d)))
    truth = np.exp(-np.arange(d) / 3.0)
    stats = ldpest.estimator("frequency").simulate(mech, truth / truth.sum(), n, np.random.default_rng(seed))
    return mech, stats


def _symbol_log_likelihood(mech, symbols, theta):
    law = mech._symbol_law(theta)
    used = symbols > 0
    return float(symbols[used] @ np.log(law[used]))


@pytest.mark.parametrize(("d", "epsilon", "n"),
                         [(5, 1.0, 400), (20, 2.0, 10_000), (100, 4.0, 100_000), (300, 2.0, 1000)])
def test_hadamard_mle_certifies_its_likelihood(d, epsilon, n):
    """The result's Frank-Wolfe gap bounds the distance to the maximum; recomputed here from the channel
    (``adjoint`` independently: Q(z | x) from ``channel()`` where it can be enumerated)."""
    from ldpest.stats.likelihood import MLE_GAP

    mech, stats = _hadamard_counts(d, epsilon, n, seed=d)
    symbols = stats.arrays["symbols"]
    est = ldpest.estimator("frequency", projection="mle")
    result = est.finalize(ldpest.SufficientStats(est.statistics_spec_json, stats.mechanism_spec, n, stats.arrays))
    theta = result["probability"].values
    assert result.attrs["mle_converged"] == 1 and result.attrs["mle_likelihood_gap"] <= MLE_GAP
    assert np.all(theta >= 0) and np.isclose(theta.sum(), 1.0)
    if mech.symbols <= 1024:
        channel = np.array(mech.channel().matrix, dtype=np.float64)  # (d, K)
        law = theta @ channel
        gradient = channel @ np.where(symbols > 0, symbols / law, 0.0)
        assert n * (gradient.max() / n - 1) <= MLE_GAP * (1 + 1e-6) + 1e-9
    unprojected = result["unprojected"].values
    for other in (project_simplex(unprojected), project_positive(unprojected)):
        assert _symbol_log_likelihood(mech, symbols, theta) >= _symbol_log_likelihood(mech, symbols, other) - MLE_GAP


def test_generic_em_agrees_with_the_closed_form_of_randomized_response():
    """The same EM, given randomized response's channel, finds the closed-form maximum."""
    from ldpest.stats.likelihood import channel_count_mle

    mech = ldpest.mechanism("randomized-response", epsilon=1.0, categories=list(range(30)))
    truth = np.r_[0.6, 0.3, 0.1, np.zeros(27)]
    counts = ldpest.estimator("frequency").simulate(mech, truth, 3000, np.random.default_rng(4)).arrays["counts"]
    p, q = mech.p, mech.q
    theta, info = channel_count_mle(counts, lambda t: q + (p - q) * t,
                                    lambda w: q * w.sum() + (p - q) * w, 30, gap=1e-9)
    closed, _ = mech.frequency_mle({"counts": counts}, 3000)
    assert info["converged"]
    np.testing.assert_allclose(theta, closed, atol=1e-5)
    assert np.sum(counts * np.log(q + (p - q) * closed)) >= np.sum(counts * np.log(q + (p - q) * theta)) - 1e-9
    # Newton, with callables of one vector only (sum_z w_z Q(z|x) Q(z|y) of randomized response's channel)
    newton, newton_info = channel_count_mle(
        counts, lambda t: q + (p - q) * t, lambda w: q * w.sum() + (p - q) * w, 30, gap=1e-9,
        curvature=lambda w: q * q * w.sum() + (p - q) * q * (w[:, None] + w[None, :]) + (p - q) ** 2 * np.diag(w))
    assert newton_info["method"] == "projected Newton with the exact curvature" and newton_info["converged"]
    np.testing.assert_allclose(newton, closed, atol=1e-5)


def test_an_unconverged_mle_warns(monkeypatch):
    from ldpest.stats import likelihood

    monkeypatch.setattr(likelihood, "MLE_MAX_NEWTON", 1)
    mech, stats = _hadamard_counts(50, 2.0, 10_000, seed=1)
    est = ldpest.estimator("frequency", projection="mle")
    with pytest.warns(ldpest.EstimateWarning, match="maximum-likelihood iteration stopped"):
        result = est.finalize(ldpest.SufficientStats(est.statistics_spec_json, stats.mechanism_spec, 10_000,
                                                     stats.arrays))
    assert result.attrs["mle_converged"] == 0 and result.attrs["mle_iterations"] == 1


def test_an_unconverged_em_warns(monkeypatch):
    """Above NEWTON_CATEGORIES Hadamard response runs EM, which warns at its round limit too."""
    from ldpest.stats import likelihood
    from ldpest_multinomial import hadamard

    monkeypatch.setattr(likelihood, "MLE_MAX_ROUNDS", 1)
    monkeypatch.setattr(hadamard, "NEWTON_CATEGORIES", 49)
    mech, stats = _hadamard_counts(50, 2.0, 10_000, seed=1)
    with pytest.warns(ldpest.EstimateWarning, match="maximum-likelihood iteration stopped"):
        result = ldpest.estimator("frequency", projection="mle").finalize(stats)
    assert result.attrs["mle_converged"] == 0 and result.attrs["mle_iterations"] == 4
    assert result.attrs["mle_method"] == "EM accelerated by SQUAREM"


@pytest.mark.parametrize(("d", "epsilon", "options"), [
    (7, 1.0, {}), (10, 4.0, {}), (33, 2.0, {}), (50, 3.0, {"blocks": 7}), (20, 3.0, {"layout": "pure-ldp"}),
    (5, 8.0, {}), (64, 0.5, {})])
def test_hadamard_curvature_is_the_channels(d, epsilon, options):
    """``_symbol_curvature(w) = Q diag(w) Q^T`` with ``Q`` the enumerated channel: one block, several
    (the last one short), pure-ldp's layout with empty blocks, one category per block."""
    mech = ldpest.mechanism("hadamard-response", epsilon=epsilon, categories=list(range(d)), **options)
    channel = np.array(mech.channel().matrix, dtype=np.float64)
    weights = np.random.default_rng(d).random(mech.symbols)
    expected = (channel * weights) @ channel.T
    np.testing.assert_allclose(mech._symbol_curvature(weights), expected, rtol=1e-12, atol=1e-15 * expected.max())


def _qp_violation(curvature, gradient, theta, z) -> float:
    """Largest violation of the optimality (KKT) conditions of max ``g . (z - theta) - (z - theta)^T A (z -
    theta) / 2`` over the simplex, relative to the slopes' scale: the slope ``g - A (z - theta)`` equal to
    one level on the support of z and at most that level off it; z on the simplex."""
    slope = gradient - curvature @ (z - theta)
    support = z > 0
    level = slope[support].mean()
    scale = np.abs(slope).max()
    return max(np.abs(slope[support] - level).max() / scale, np.maximum(slope[~support] - level, 0).max(initial=0)
               / scale, -z.min(initial=0.0), abs(z.sum() - 1.0))


@pytest.mark.parametrize("seed", range(12))
def test_the_active_set_qp_meets_the_optimality_conditions(seed):
    """Random convex models on the simplex, conditioned up to 10^4, from starts with zeros: the exact
    active-set maximiser meets the KKT conditions, and the naive answer (the unconstrained maximiser put on
    the simplex) does not, so the check has teeth."""
    from ldpest.stats.likelihood import simplex_qp_active

    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 60))
    basis, _ = np.linalg.qr(rng.standard_normal((d, d)))
    curvature = (basis * np.logspace(0, 4 * seed / 11, d)) @ basis.T
    theta = rng.dirichlet(np.full(d, 0.3))
    theta[rng.random(d) < 0.3] = 0.0
    theta = theta / theta.sum() if theta.sum() > 0 else np.eye(d)[0]
    # the unconstrained maximiser theta + A^-1 g: far outside the simplex (small supports), or near theta
    step = rng.standard_normal(d) * (10.0 ** rng.uniform(0, 3) if seed % 2 else 1.0 / d)
    gradient = curvature @ step
    z = simplex_qp_active(curvature, gradient, theta)
    assert _qp_violation(curvature, gradient, theta, z) <= 1e-9
    naive = project_simplex(theta + np.linalg.solve(curvature, gradient))
    if np.abs(naive - z).max() > 1e-6:
        assert _qp_violation(curvature, gradient, theta, naive) > 1e-6


@pytest.mark.parametrize(("d", "epsilon"), [(2, 0.001), (10, 1.0), (30, 3.0), (5, 700.0), (100, 50.0), (64, 0.01),
                                            (200, 6.0)])
@pytest.mark.parametrize("n", [1, 10, 30, 1000])
def test_newton_and_em_find_the_same_maximum(d, epsilon, n):
    """Hadamard response's Newton MLE against the generic EM on the same histograms, at small n, on corner,
    edge and uniform truths and at the extreme epsilons: converged (no hand-over to EM), on the simplex, and
    with a likelihood at least EM's less the stopping rule's 0.001."""
    from ldpest.stats.likelihood import MLE_GAP, channel_count_mle

    mech = ldpest.mechanism("hadamard-response", epsilon=epsilon, categories=list(range(d)))
    for truth in (np.eye(d)[0], np.r_[0.5, 0.5, np.zeros(d - 2)], np.full(d, 1.0 / d)):
        symbols = mech.simulate_frequency_statistics(truth, n, np.random.default_rng(n))["symbols"]
        theta, info = mech.frequency_mle({"symbols": symbols}, n)
        em, em_info = channel_count_mle(symbols, mech._symbol_law, mech._symbol_adjoint, d)
        assert info["method"] == "projected Newton with the exact curvature" and info["converged"]
        assert theta.min() >= 0 and abs(theta.sum() - 1) <= 1e-12
        assert em_info["converged"]
        likelihood = _symbol_log_likelihood(mech, symbols, theta)
        assert likelihood >= _symbol_log_likelihood(mech, symbols, em) - MLE_GAP


def test_a_stalled_newton_hands_over_to_em(monkeypatch):
    """A step that cannot raise the likelihood (here: none is tried) hands the iterate to EM, which
    converges; the method says so."""
    from ldpest.stats import likelihood

    monkeypatch.setattr(likelihood, "NEWTON_HALVINGS", 0)
    mech, stats = _hadamard_counts(20, 2.0, 10_000, seed=2)
    theta, info = mech.frequency_mle(stats.arrays, 10_000)
    assert info["method"] == "projected Newton with the exact curvature, then EM accelerated by SQUAREM"
    assert info["converged"] and info["likelihood_gap"] <= likelihood.MLE_GAP


def _symbol_map(mech, n):
    """``A``, the unbiased estimate as a linear map of the symbol histogram: ``x = A c``."""
    units = np.eye(mech.symbols, dtype=np.int64)
    return np.column_stack([mech._agreement(unit) for unit in units]) / (n * mech._gap())


def _newton_mle(mech, counts, gap=1e-13):
    from ldpest.stats.likelihood import channel_count_mle

    return channel_count_mle(counts, mech._symbol_law, mech._symbol_adjoint, mech.d, curvature=mech._symbol_curvature,
                             start=np.full(mech.d, 1.0 / mech.d), gap=gap)[0]


@pytest.mark.parametrize(("d", "epsilon", "options"), [(6, 1.0, {}), (10, 3.0, {}), (12, 2.0, {"blocks": 3}),
                                                       (9, 0.5, {})])
def test_hadamard_mle_divergence_is_that_of_the_implemented_map(d, epsilon, options):
    """``frequency_mle_divergence`` is ``tr(A Sigma_c J^T)`` with ``J`` the MLE's Jacobian in the histogram by
    central differences of the implemented MLE (to a gap of 1e-13) and ``Sigma_c = diag(c) - c c^T / n``."""
    mech = ldpest.mechanism("hadamard-response", epsilon=epsilon, categories=list(range(d)), **options)
    truth = np.exp(-np.arange(d) / 2.0)
    n = 2000
    counts = mech.simulate_frequency_statistics(truth / truth.sum(), n, np.random.default_rng(5))["symbols"]
    counts = counts.astype(np.float64)
    step = 1e-4
    jacobian = np.column_stack([(_newton_mle(mech, counts + step * unit) - _newton_mle(mech, counts - step * unit))
                                / (2 * step) for unit in np.eye(mech.symbols)])
    numeric = np.trace(_symbol_map(mech, n) @ (np.diag(counts) - np.outer(counts, counts) / n) @ jacobian.T)
    declared = mech.frequency_mle_divergence({"symbols": counts}, n, _newton_mle(mech, counts), None)
    assert declared == pytest.approx(numeric, rel=1e-6)


@pytest.mark.parametrize(("d", "epsilon", "n"), [(16, 1.0, 2000), (20, 3.0, 2000), (12, 0.5, 5000)])
def test_hadamard_mle_stein_risk_is_unbiased_for_normal_counts(d, epsilon, n):
    """For a normal histogram ``c ~ N(n pi, n (diag pi - pi pi^T))`` Stein's identity is exact: the mean of
    ``||g - x||^2 + 2 div - tr(Sigma_x) - ||g - theta||^2`` over 3000 draws is within 5 standard errors of 0
    (measured z: -0.30, 1.31, -0.43).  Without the divergence, or with twice it, it is beyond 100: the test
    has teeth.  (Exact multinomial histograms at one block and epsilon <= 1, n = 2000, put the MLE's risk
    estimate 4-6 standard errors above its risk, and the simplex projection's 5.8 at d = 30, epsilon 4,
    n = 500: the normal premise, not the divergence; docs/frequency-oracles.md.)"""
    from ldpest.stats.likelihood import channel_count_mle_rows

    mech = ldpest.mechanism("hadamard-response", epsilon=epsilon, categories=list(range(d)))
    truth = np.exp(-np.arange(d) / 3.0)
    truth /= truth.sum()
    estimate_map = _symbol_map(mech, n)
    law = mech._symbol_law(truth)
    law /= law.sum()
    histogram_covariance = n * (np.diag(law) - np.outer(law, law))
    total_variance = np.trace(estimate_map @ histogram_covariance @ estimate_map.T)
    draws = np.random.default_rng(2).multivariate_normal(n * law, histogram_covariance, size=3000, method="eigh")
    assert draws.min() > 0
    found = {"declared": [], "none": [], "twice": []}
    mles, _ = channel_count_mle_rows(draws, mech._symbol_law, mech._symbol_adjoint, mech._symbol_curvature,
                                     np.full((len(draws), d), 1.0 / d), gap=1e-9)
    for counts, mle in zip(draws, mles, strict=True):
        unbiased = estimate_map @ counts
        divergence = mech.frequency_mle_divergence({"symbols": counts}, n, mle, None)
        rest = np.sum((mle - unbiased) ** 2) - total_variance - np.sum((mle - truth) ** 2)
        for key, factor in (("declared", 2), ("none", 0), ("twice", 4)):
            found[key].append(rest + factor * divergence)
    z = {key: np.mean(values) / (np.std(values, ddof=1) / np.sqrt(len(values))) for key, values in found.items()}
    assert abs(z["declared"]) < 5 and abs(z["none"]) > 100 and abs(z["twice"]) > 100, z


def test_hadamard_mle_is_an_auto_candidate_up_to_its_limit_and_simulated_only_where_stein_prefers_it(monkeypatch):
    """With several blocks and up to ``AUTO_MLE_CATEGORIES`` the MLE is a candidate of ``auto``; its bootstrap
    simulates the MLE (one call with a leading axis of the 60 draws) only where Stein's estimate prefers it.
    Above the limit, and with one block, it is not considered."""
    from ldpest_multinomial.hadamard import AUTO_MLE_CATEGORIES, HadamardResponse

    calls = []
    original = HadamardResponse.frequency_mle

    def counted(self, stats, n):
        calls.append(np.ndim(stats["symbols"]))
        return original(self, stats, n)

    def auto(mech, truth, seed):
        stats = ldpest.estimator("frequency").simulate(mech, truth / truth.sum(), 10_000, np.random.default_rng(seed))
        calls.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ldpest.EstimateWarning)
            return ldpest.estimator("frequency").finalize(stats)

    monkeypatch.setattr(HadamardResponse, "frequency_mle", counted)
    for epsilon, d, spread, preferred in ((4.0, 30, 3.0, True), (2.0, 100, np.inf, False)):
        mech = ldpest.mechanism("hadamard-response", epsilon=epsilon, categories=list(range(d)))
        assert mech._layout.blocks > 1 and mech.iterative_mle_categories == AUTO_MLE_CATEGORIES
        result = auto(mech, np.exp(-np.arange(d) / spread), 3)
        assert "mle" in result.attrs["projection_rule"].split(" by ")[0]
        stein = min(("simplex", "positive", "shrink", "ibu", "mle"),
                    key=lambda name: result.attrs.get(f"estimated_risk_{name}", np.inf))
        assert (stein == "mle") == preferred
        # preferred: the statistics' own MLE, then the 60 simulated sets in one call of 60 rows
        assert calls == ([1, 2] if preferred else [1]), (result.attrs["projection_rule"], calls)
    for mech in (ldpest.mechanism("hadamard-response", epsilon=4.0, categories=list(range(AUTO_MLE_CATEGORIES + 1))),
                 ldpest.mechanism("hadamard-response", epsilon=1.0, categories=list(range(20)))):
        assert mech.iterative_mle_categories < mech.d
        result = auto(mech, np.exp(-np.arange(mech.d) / 3.0), 4)
        assert calls == [] and "mle" not in result.attrs["projection_rule"].split(" by ")[0]


@pytest.mark.parametrize(("d", "epsilon", "n"), [(10, 2.0, 30), (30, 3.0, 10_000), (100, 4.0, 10_000), (16, 1.0, 1)])
def test_the_mle_of_rows_is_each_rows_mle(d, epsilon, n):
    """Histograms with a leading axis (``auto``'s 60 simulated sets) get the MLE of each row alone: the rows'
    Newton steps taken together land where each row's own does, to rounding, and all converge.  The law,
    adjoint and curvature of rows are those of each row."""
    from ldpest.stats.likelihood import MLE_GAP

    mech = ldpest.mechanism("hadamard-response", epsilon=epsilon, categories=list(range(d)))
    truth = np.exp(-np.arange(d) / (d / 12.5))
    sets = mech.simulate_frequency_statistics(truth / truth.sum(), n, np.random.default_rng(1), draws=60)["symbols"]
    together, info = mech.frequency_mle({"symbols": sets}, n)
    assert info["converged"] and info["likelihood_gap"] <= MLE_GAP
    assert info["method"] == "projected Newton with the exact curvature"
    rng = np.random.default_rng(2)
    weights, frequencies = rng.random((3, mech.symbols)), rng.dirichlet(np.ones(d), size=3)
    for row in range(3):
        np.testing.assert_allclose(mech._symbol_curvature(weights)[row], mech._symbol_curvature(weights[row]),
                                   rtol=1e-13)
        np.testing.assert_allclose(mech._symbol_law(frequencies)[row], mech._symbol_law(frequencies[row]), rtol=1e-13)
        np.testing.assert_allclose(mech._symbol_adjoint(weights)[row], mech._symbol_adjoint(weights[row]), rtol=1e-13)
    for symbols, theta in zip(sets, together, strict=True):
        alone, alone_info = mech.frequency_mle({"symbols": symbols}, n)
        assert alone_info["converged"]
        # both within the stopping rule of the maximum (the batched first solve rounds differently: measured
        # 6e-8 apart at n = 30, 1e-15 at n = 10^4)
        together_value, alone_value = (_symbol_log_likelihood(mech, symbols, point) for point in (theta, alone))
        assert abs(together_value - alone_value) <= MLE_GAP
        np.testing.assert_allclose(theta, alone, rtol=0, atol=1e-6)


def test_the_models_solved_on_their_supports_at_once_are_settled_only_where_optimal():
    """``_qp_on_supports`` settles a row only where the solution on its support is the maximiser over the
    simplex (the KKT conditions hold); on this batch it settles some rows and not others, so both ways out are
    taken."""
    from ldpest.stats.likelihood import _qp_on_supports

    rng = np.random.default_rng(5)
    count, d = 40, 20
    basis = np.linalg.qr(rng.standard_normal((count, d, d)))[0]
    curvature = np.einsum("kij,kj,klj->kil", basis, np.logspace(0, 3, d) * np.ones((count, 1)), basis)
    theta = rng.dirichlet(np.full(d, 0.5), size=count)
    theta[rng.random((count, d)) < 0.1] = 0.0
    theta /= theta.sum(axis=1, keepdims=True)
    # unconstrained steps of about 0.03 / d: some stay inside the support and the simplex, some leave them
    gradient = np.einsum("kij,kj->ki", curvature, 0.03 * rng.standard_normal((count, d)) / d)
    z, settled = _qp_on_supports(curvature, gradient, theta)
    assert 0 < settled.sum() < count
    for row in np.flatnonzero(settled):
        assert _qp_violation(curvature[row], gradient[row], theta[row], z[row]) <= 1e-9
    for row in np.flatnonzero(~settled):
        np.testing.assert_array_equal(z[row], theta[row])


def test_stalled_rows_hand_over_to_em(monkeypatch):
    from ldpest.stats import likelihood

    monkeypatch.setattr(likelihood, "NEWTON_HALVINGS", 0)
    mech = ldpest.mechanism("hadamard-response", epsilon=2.0, categories=list(range(20)))
    sets = mech.simulate_frequency_statistics(np.full(20, 0.05), 10_000, np.random.default_rng(3), draws=4)["symbols"]
    theta, info = mech.frequency_mle({"symbols": sets}, 10_000)
    assert info["method"] == "projected Newton with the exact curvature, then EM accelerated by SQUAREM"
    assert info["converged"] and theta.shape == (4, 20) and np.allclose(theta.sum(axis=1), 1.0)


def test_rows_whose_model_is_singular_hand_over_to_em(monkeypatch):
    """A row whose step model cannot be solved goes on through EM, as one MLE alone would, and converges."""
    from ldpest.stats import likelihood

    def singular(*args, **kwargs):
        raise np.linalg.LinAlgError("singular")

    monkeypatch.setattr(likelihood, "simplex_qp_active", singular)
    monkeypatch.setattr(likelihood, "SUPPORT_SOLVE_CATEGORIES", 0)
    mech = ldpest.mechanism("hadamard-response", epsilon=2.0, categories=list(range(20)))
    sets = mech.simulate_frequency_statistics(np.full(20, 0.05), 10_000, np.random.default_rng(3), draws=4)["symbols"]
    theta, info = mech.frequency_mle({"symbols": sets}, 10_000)
    assert info["method"] == "projected Newton with the exact curvature, then EM accelerated by SQUAREM"
    assert info["converged"] and np.allclose(theta.sum(axis=1), 1.0)
    alone, info = mech.frequency_mle({"symbols": sets[0]}, 10_000)
    assert info["method"] == "projected Newton with the exact curvature, then EM accelerated by SQUAREM"
    assert info["converged"] and alone.shape == (20,)
