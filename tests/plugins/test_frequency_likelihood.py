"""The ``frequency-likelihood`` estimator (issue 23): the maximum-likelihood frequencies of the reports
themselves, by a projected Newton iteration with one pass over the reports per step.

Proven here: the declared two-valued likelihood (``support_ratio``, ``report_support``) is the enumerated
channel's, and the kit's check catches a wrong one; the result maximises the likelihood (a general-purpose
optimiser finds nothing higher, its certified gap holds, and it is never below the projection's); every way
of reading reports gives the same result bit for bit; edges and bad input give clear errors or warnings."""

from __future__ import annotations

import contextlib
import itertools
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from scipy.optimize import minimize

import ldpest
from ldpest import EstimateWarning, IncompatibleError, ParameterError
from ldpest.stats.likelihood import (
    SparseSupports,
    lattice_frequencies,
    off_diagonal_rank_one,
    sparse_supports,
    support_statistics,
    support_value,
)
from ldpest.testing import ConformanceError
from ldpest.testing.moments import report_support_matches_channel

LDPEST = str(Path(sys.executable).with_name("ldpest"))
SUPPORT_ORACLES = [
    ("unary-randomized-response", {}),
    ("subset-selection", {}),
    ("subset-selection", {"report_form": "indices", "subset_size": 2}),
    ("local-hashing", {"hash_range": 3, "prime": 11}),
    ("local-hashing", {}),
]
IDS = ["unary", "subset", "subset-indices", "olh-small", "olh"]


def skewed(d: int) -> np.ndarray:
    theta = np.exp(-12.5 * np.arange(d) / d)
    return theta / theta.sum()


def reports_of(name, params, d, n, epsilon, seed=0, truth=None):
    mech = ldpest.mechanism(name, epsilon=epsilon, categories=list(range(d)), **params)
    rng = np.random.default_rng(seed)
    data = rng.choice(d, size=n, p=skewed(d) if truth is None else truth)
    return mech.privatize(data, rng=rng)


def loglik(mech, values, theta) -> float:
    """``sum_i log(1 + (r - 1) theta(S_i))`` straight from the declaration (float64, no lattice)."""
    members = mech.report_support(values).astype(np.float64)
    return float(np.log1p((mech.support_ratio() - 1.0) * (members @ theta)).sum())


# -- the declaration is the channel -----------------------------------------------------------------------
@pytest.mark.parametrize("epsilon", [0.05, 1.0, 12.0])
@pytest.mark.parametrize("name,params", [(n, p) for n, p in SUPPORT_ORACLES if n != "local-hashing" or p],
                         ids=[i for i in IDS if i != "olh"])
def test_the_declared_likelihood_is_the_enumerated_channels(name, params, epsilon):
    mech = ldpest.mechanism(name, epsilon=epsilon, categories=["a", "b", "c", "d"][:3 if "prime" in params else 4],
                            **params)
    report_support_matches_channel(mech, mech.channel())
    assert 1 < mech.support_ratio() <= np.exp(epsilon) * (1 + 1e-12)


class _WrongRatio(type(ldpest.mechanism("unary-randomized-response", epsilon=1, categories=[0, 1]))):
    def support_ratio(self):
        return super().support_ratio() * 1.01


class _WrongMembers(type(ldpest.mechanism("unary-randomized-response", epsilon=1, categories=[0, 1]))):
    def report_support(self, reports):
        members = super().report_support(reports).copy()
        members[:, -1] = 1 - members[:, -1]  # the last category's bit read the wrong way
        return members


@pytest.mark.parametrize("broken,message", [(_WrongRatio, "do not describe output"),
                                            (_WrongMembers, "do not describe output")])
def test_the_kit_catches_a_wrong_declaration(broken, message):
    mech = broken(epsilon=1.0, categories=["a", "b", "c"])
    with pytest.raises(ConformanceError, match=message):
        report_support_matches_channel(mech, mech.channel())


# -- it is the maximum --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,params", SUPPORT_ORACLES, ids=IDS)
@pytest.mark.parametrize("epsilon", [0.5, 2.0, 4.0])
def test_no_optimiser_finds_a_higher_likelihood(name, params, epsilon):
    d, n = 4, 1500
    reports = reports_of(name, params, d, n, epsilon, truth=np.array([0.6, 0.3, 0.1, 0.0]))
    mech, values = reports.mechanism, reports.values
    result = ldpest.estimate(reports, "frequency-likelihood")
    theta = result["probability"].values
    assert np.all(theta >= 0) and theta.sum() == pytest.approx(1.0, abs=1e-12)
    assert result.attrs["mle_converged"] == 1 and result.attrs["mle_likelihood_gap"] <= 1e-3

    def negative(z):
        z = np.abs(z)
        return -loglik(mech, values, z / z.sum())
    best = min((minimize(negative, start, method="Nelder-Mead",
                         options={"maxiter": 20_000, "xatol": 1e-10, "fatol": 1e-12})
                for start in (np.full(d, 1 / d), theta + 1e-3)), key=lambda found: found.fun)
    assert loglik(mech, values, theta) >= -best.fun - 1e-3  # within the certified gap of the optimum


@pytest.mark.parametrize("name,params", SUPPORT_ORACLES[:2], ids=IDS[:2])
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_the_likelihood_is_never_below_the_projections(name, params, epsilon):
    reports = reports_of(name, params, 30, 3000, epsilon, seed=2)
    mle = ldpest.estimate(reports, "frequency-likelihood")["probability"].values
    for projection in ("simplex", "positive", "shrink", "ibu"):
        other = ldpest.estimate(reports, ldpest.estimator("frequency", projection=projection))["probability"].values
        assert loglik(reports.mechanism, reports.values, mle) >= loglik(reports.mechanism, reports.values, other) - 1e-6


def test_counts_suffice_for_randomized_and_hadamard_response_in_one_pass():
    for name in ("randomized-response", "hadamard-response"):
        reports = reports_of(name, {}, 6, 2000, 1.0)
        result = ldpest.estimate(reports, "frequency-likelihood")
        frequency = ldpest.estimate(reports, ldpest.estimator("frequency", projection="mle"))
        np.testing.assert_array_equal(result["probability"].values, frequency["probability"].values)
        assert result.attrs["mle_passes"] == 1


# -- the statistics -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("ratio", [1.05, 3.0, 5e21])
@pytest.mark.parametrize("d", [7, 600, 2048])  # limbs of 12, 16 and 18 bits
def test_statistics_are_exact_in_any_order_and_match_float_sums(ratio, d):
    rng = np.random.default_rng(4)
    members = (rng.random((3000, d)) < 0.4).astype(np.uint8)
    theta = lattice_frequencies(rng.dirichlet(np.ones(d)) * (np.arange(d) > 0))  # one category at 0
    whole = support_statistics(members, ratio, theta)
    parts = [support_statistics(members[start:start + 211], ratio, theta) for start in range(0, 3000, 211)]
    column_major = support_statistics(np.asfortranarray(members), ratio, theta)  # local hashing's layout
    for key in ("weight_sum", "weight_square_sum", "support", "support_square"):
        np.testing.assert_array_equal(sum(part[key] for part in parts[::-1]), whole[key])
        np.testing.assert_array_equal(column_major[key], whole[key])
    assert column_major["loglik"].to_float() == whole["loglik"].to_float()
    assert sum((part["loglik"] for part in parts[1:]), parts[0]["loglik"]).to_float() == whole["loglik"].to_float()
    total = 1 + (ratio - 1) * (members @ theta)
    for key, value in (("support", (members / total[:, None]).sum(axis=0)),
                       ("support_square", (members / total[:, None] ** 2).sum(axis=0)),
                       ("weight_sum", (1 / total).sum()), ("weight_square_sum", (1 / total ** 2).sum())):
        np.testing.assert_allclose(support_value(whole, key, ratio), value, rtol=1e-8)
    assert support_value(whole, "loglik", ratio) == pytest.approx(np.log(total).sum(), abs=3000 * 2.0 ** -31)
    assert lattice_frequencies([0.1, 0.2, 0.7]).sum() == 1.0


@pytest.mark.parametrize("d", [3, 600])
def test_statistics_hold_at_the_vertices(d):
    """A frequency of exactly 1 is 2^40 lattice units, one bit above four 10-bit limbs: the statistics at a
    vertex (where the simplex projection of a small sample starts) and next to it match float sums."""
    rng = np.random.default_rng(9)
    members = (rng.random((50, d)) < 0.4).astype(np.uint8)
    near = np.zeros(d)
    near[[0, 1]] = 1.0 - 2.0 ** -40, 2.0 ** -40
    for theta in (np.eye(d)[0], np.eye(d)[d - 1], near):
        stats = support_statistics(members, 5.0, lattice_frequencies(theta))
        total = 1 + 4.0 * (members @ theta)
        assert support_value(stats, "loglik", 5.0) == pytest.approx(np.log(total).sum(), abs=50 * 2.0 ** -31)
        np.testing.assert_allclose(support_value(stats, "support", 5.0), (members / total[:, None]).sum(axis=0),
                                   rtol=1e-8)


@pytest.mark.parametrize("name", ["subset-selection", "local-hashing"])  # local hashing's supports kept in memory
@pytest.mark.parametrize("epsilon", [2.0, 4.0])  # local hashing's supports as bits; by category
def test_every_way_of_reading_reports_gives_the_same_result(tmp_path, name, epsilon):
    reports = reports_of(name, {}, 8, 5000, epsilon)
    estimator = ldpest.estimator("frequency-likelihood")
    expected = ldpest.estimate(reports, estimator)
    assert expected.attrs["mle_passes"] >= 3
    path = tmp_path / "reports.nc"
    reports.to_netcdf(path)
    for result in (ldpest.estimate(list(reports.chunks(777)), estimator),
                   ldpest.estimate(ldpest.open_reports(path), estimator),
                   ldpest.estimate(ldpest.open_reports(path), estimator, scheduler="threads"),
                   ldpest.estimate(ldpest.read_reports(path, chunks=1000), estimator)):
        xr.testing.assert_identical(result, expected)


def test_a_one_shot_stream_and_raw_data_are_refused_clearly(tmp_path):
    reports = reports_of("unary-randomized-response", {}, 5, 500, 1.0)
    with pytest.raises(ParameterError, match="reads the reports several times"):
        ldpest.estimate((chunk for chunk in reports.chunks(100)), "frequency-likelihood")
    from typer.testing import CliRunner

    from ldpest.cli import app

    data = tmp_path / "data.csv"
    data.write_text("answer\n" + "\n".join(["a", "b", "a", "c"] * 10) + "\n")
    out = CliRunner().invoke(app, ["estimate", str(data), "--raw", "--mechanism", "unary-randomized-response",
                                   "--epsilon", "1", "--categories", "a,b,c", "--column", "answer",
                                   "--estimator", "frequency-likelihood"])
    assert out.exit_code != 0 and "privatise to a report file" in out.output and "Traceback" not in out.output


def test_the_cli_estimates_a_report_file(tmp_path):
    from typer.testing import CliRunner

    from ldpest.cli import app

    reports = reports_of("local-hashing", {}, 6, 3000, 2.0)
    path = tmp_path / "reports.nc"
    reports.to_netcdf(path)
    out = CliRunner().invoke(app, ["estimate", str(path), "--estimator", "frequency-likelihood",
                                   "-o", str(tmp_path / "out.nc")])
    assert out.exit_code == 0, out.output
    assert "projection=mle" in out.output
    written = xr.open_dataset(tmp_path / "out.nc")
    np.testing.assert_array_equal(written["probability"].values,
                                  ldpest.estimate(reports, "frequency-likelihood")["probability"].values)
    written.close()


# -- stopping, edges and bad input --------------------------------------------------------------------------
def test_max_passes_stops_with_a_warning_and_keeps_the_best_iterate():
    reports = reports_of("unary-randomized-response", {}, 20, 5000, 4.0)
    with pytest.warns(EstimateWarning, match="stopped after 3 passes"):
        result = ldpest.estimate(reports, ldpest.estimator("frequency-likelihood", max_passes=3))
    assert result.attrs["mle_converged"] == 0 and result.attrs["mle_passes"] == 3
    assert result.attrs["mle_likelihood_gap"] > 1e-3
    full = ldpest.estimate(reports, "frequency-likelihood")
    assert full.attrs["mle_converged"] == 1
    mech, values = reports.mechanism, reports.values
    assert loglik(mech, values, full["probability"].values) >= loglik(mech, values, result["probability"].values)


@pytest.mark.parametrize("n", [1, 10, 30])
@pytest.mark.parametrize("epsilon", [0.05, 50.0])
@pytest.mark.parametrize("name,params", SUPPORT_ORACLES[:4], ids=IDS[:4])
def test_edges_give_a_distribution_and_at_large_epsilon_the_maximum(name, params, n, epsilon):
    truth = np.array([1.0, 0.0, 0.0, 0.0])  # every record in one category: the boundary
    reports = reports_of(name, params, 4, n, epsilon, truth=truth)
    with warnings_allowed():
        result = ldpest.estimate(reports, "frequency-likelihood")
    theta = result["probability"].values
    assert np.all(np.isfinite(theta)) and np.all(theta >= 0) and theta.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(result["stderr"].values > 0) and np.all(np.isfinite(result["stderr"].values))
    if epsilon == 50.0:  # every report then (almost surely) favours its input: all the mass lies in every S_i
        members = reports.mechanism.report_support(reports.values)
        np.testing.assert_allclose(members @ theta, 1.0, atol=1e-6)
        if not members[:, 1:].any():
            np.testing.assert_allclose(theta, truth, atol=1e-6)


@contextlib.contextmanager
def warnings_allowed():
    """The uninformative-estimate warning of tiny n at epsilon 0.05 is expected there."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="the estimate is uninformative", category=EstimateWarning)
        yield


@pytest.mark.parametrize("params,message", [
    ({"tolerance": 0}, "tolerance"),
    ({"max_passes": 1}, "max_passes"),
    ({"at": [0.5, -0.1, 0.6]}, "non-negative"),
    ({"at": [0, 0, 0]}, "not all 0"),
])
def test_bad_parameters_are_refused(params, message):
    with pytest.raises(ParameterError, match=message):
        ldpest.estimator("frequency-likelihood", **params)


def test_reports_it_cannot_use_are_refused_clearly():
    laplace = ldpest.mechanism("laplace", epsilon=1, categories=[0, 1, 2]).privatize([0, 1, 2], rng=0)
    with pytest.raises(IncompatibleError, match="neither a function of its statistics nor two-valued"):
        ldpest.estimate(laplace, "frequency-likelihood")
    wide = ldpest.mechanism("subset-selection", epsilon=1, categories=list(range(3000))).privatize([0, 1], rng=0)
    with pytest.raises(ParameterError, match="at most 2048 categories"):
        ldpest.estimate(wide, "frequency-likelihood")
    short = reports_of("unary-randomized-response", {}, 4, 100, 1.0)
    with pytest.raises(ParameterError, match="at has 3 frequencies for 4 categories"):
        ldpest.estimate(short, ldpest.estimator("frequency-likelihood", at=[0.2, 0.3, 0.5]))


def test_a_warm_start_reaches_the_same_maximum():
    reports = reports_of("subset-selection", {}, 10, 4000, 2.0, seed=5)
    cold = ldpest.estimate(reports, "frequency-likelihood")
    warm = ldpest.estimate(reports, ldpest.estimator("frequency-likelihood", at=list(np.full(10, 0.1))))
    gap = loglik(reports.mechanism, reports.values, cold["probability"].values) - loglik(
        reports.mechanism, reports.values, warm["probability"].values)
    assert abs(gap) <= 2e-3


def test_the_statistics_of_one_pass_finalised_by_hand_say_what_is_missing():
    reports = reports_of("unary-randomized-response", {}, 4, 3000, 1.0)
    first = ldpest.estimator("frequency-likelihood")
    with pytest.raises(ParameterError, match="statistics of the first pass only"):
        first.finalize(first.aggregate(reports))
    later = ldpest.estimator("frequency-likelihood", at=[0.25] * 4, pass_number=2)
    with pytest.raises(ParameterError, match="statistics of pass 2 only"):
        later.finalize(later.aggregate(reports))
    resumed = ldpest.estimate(reports, later)  # run whole: it counts in a first pass again, then iterates
    assert resumed.attrs["mle_converged"] == 1
    np.testing.assert_allclose(resumed["probability"].values,
                               ldpest.estimate(reports, "frequency-likelihood")["probability"].values, atol=0.01)


# -- the Newton model ---------------------------------------------------------------------------------------
def test_the_rank_one_fit_ignores_the_diagonal_and_is_least_squares_off_it():
    rng = np.random.default_rng(7)
    a = rng.random(40) + 0.1
    exact = np.outer(a, a) + np.diag(rng.random(40) * 10)  # any diagonal: the fit must not see it
    np.testing.assert_allclose(off_diagonal_rank_one(exact), np.outer(a, a), rtol=1e-9)
    noise = rng.normal(0, 0.05, (40, 40))
    noisy = exact + (noise + noise.T) / 2
    fit = off_diagonal_rank_one(noisy)
    b = np.sqrt(np.diag(fit))
    off = ~np.eye(40, dtype=bool)
    residual = np.where(off, noisy - np.outer(b, b), 0.0)
    np.testing.assert_allclose(residual @ b, 0.0, atol=1e-9)  # the gradient of the squared error off the diagonal


@pytest.mark.parametrize("too_long", [1.0, 10.0])
def test_the_model_step_is_the_maximiser_even_when_its_step_estimate_is_too_long(monkeypatch, too_long):
    from ldpest.stats import likelihood

    rng = np.random.default_rng(3)
    d = 40
    root = rng.normal(size=(d, d))
    curvature = root @ root.T / d + np.eye(d)
    gradient, theta = rng.normal(size=d) * 5, np.full(d, 1 / d)
    exact = likelihood.simplex_qp_active(curvature, gradient, theta)
    centred = curvature - curvature.mean(axis=0)[None, :] - curvature.mean(axis=1)[:, None] + curvature.mean()
    top = np.linalg.eigvalsh(centred)[-1]
    assert likelihood._power_eigenvalue(centred) <= top * (1 + 1e-12)  # a Rayleigh quotient: never above
    if too_long > 1:  # a step 10 times 1 / lambda_max diverges: the model's value falls, and lambda_max is taken
        monkeypatch.setattr(likelihood, "_power_eigenvalue", lambda matrix: top / too_long)
    found = likelihood.simplex_qp(curvature, gradient, theta, gap=1e-12, max_iterations=5000)
    assert abs(found.sum() - 1) < 1e-12 and found.min() >= 0
    np.testing.assert_allclose(found, exact, atol=1e-7)


def test_the_model_simulates_one_report_per_share_of_the_reports_within_its_bounds(monkeypatch):
    from ldpest_multinomial import likelihood

    mechanism = ldpest.mechanism("unary-randomized-response", epsilon=1.0, categories=list(range(600)))
    sizes, privatize = [], type(mechanism).privatize_encoded

    def counted(self, codes, rng):
        sizes.append(len(codes))
        return privatize(self, codes, rng)

    monkeypatch.setattr(type(mechanism), "privatize_encoded", counted)
    for n in (10, 1 << 18, 300_000, 10 ** 7):
        likelihood._member_products(mechanism, np.full(600, 1 / 600), n)
    assert likelihood.MODEL_LEAST == 16_384 and likelihood.MODEL_SHARE == 16 and likelihood.MODEL_REPORTS == 32
    assert sizes == [16_384, 16_384, 18_750, 19_200]  # at least 2^14; n / 16; at most 32 per category


@pytest.mark.parametrize("name,params", [(n, p) for n, p in SUPPORT_ORACLES if "prime" not in p],
                         ids=[i for i, (_, p) in zip(IDS, SUPPORT_ORACLES, strict=True) if "prime" not in p])
@pytest.mark.parametrize("d", [10, 300])
def test_it_converges_in_at_most_ten_passes(name, params, d):
    for epsilon in (0.5, 4.0):
        for truth in (np.arange(1, d + 1) ** -1.5, np.ones(d)):
            reports = reports_of(name, params, d, 30_000, epsilon, truth=truth / truth.sum(), seed=5)
            result = ldpest.estimate(reports, "frequency-likelihood")
            assert result.attrs["mle_converged"] == 1 and result.attrs["mle_passes"] <= 10, (epsilon, truth[:2])


# -- computed supports kept as bits between passes --------------------------------------------------------
def _counting_supports(monkeypatch, reports):
    """The sizes of report_support's calls on ``reports`` (not on the Newton model's simulated reports)."""
    calls, support, values = [], type(reports.mechanism).report_support, reports.values

    def counted(self, chunk):
        if np.may_share_memory(chunk, values):
            calls.append(len(chunk))
        return support(self, chunk)

    monkeypatch.setattr(type(reports.mechanism), "report_support", counted)
    return calls


@pytest.mark.parametrize("epsilon", [2.0, 4.0])  # as bits; by category (SparseSupports: 1 in 56 and 2 in 40 favoured)
@pytest.mark.parametrize("name,params", [("local-hashing", {}), ("subset-selection", {"report_form": "indices",
                                                                                      "subset_size": 2})],
                         ids=["olh", "subset-indices"])
def test_computed_supports_are_kept_between_passes_and_change_nothing(monkeypatch, name, params, epsilon):
    from ldpest_multinomial import likelihood

    reports = reports_of(name, params, 40, 3000, epsilon)
    monkeypatch.setattr(likelihood, "SUPPORT_ROWS_CELLS", 40 * 700)  # five blocks of 700 reports, the last short
    calls = _counting_supports(monkeypatch, reports)
    kept = ldpest.estimate(reports, ldpest.estimator("frequency-likelihood"))
    kept_calls, calls[:] = list(calls), []
    monkeypatch.setattr(likelihood, "SUPPORT_CACHE_BYTES", 0)
    computed = ldpest.estimate(reports, ldpest.estimator("frequency-likelihood"))
    xr.testing.assert_identical(kept, computed)
    passes = computed.attrs["mle_passes"]
    assert passes >= 4
    assert kept_calls == [700] * 4 + [200]  # the first likelihood pass only
    assert calls == ([700] * 4 + [200]) * (passes - 1)  # every likelihood pass


def test_supports_that_do_not_fit_or_are_the_reports_are_not_kept(monkeypatch):
    from ldpest_multinomial import likelihood

    reports = reports_of("local-hashing", {}, 40, 3000, 2.0)
    monkeypatch.setattr(likelihood, "SUPPORT_CACHE_BYTES", 3000 * 40 // 8 - 1)  # a byte short of the bits
    calls = _counting_supports(monkeypatch, reports)
    result = ldpest.estimate(reports, ldpest.estimator("frequency-likelihood"))
    assert len(calls) == result.attrs["mle_passes"] - 1
    cache = likelihood._SupportCache(1 << 30)
    unary = reports_of("unary-randomized-response", {}, 40, 100, 2.0)
    assert all(block.base is not None for block in cache.blocks(unary.mechanism, unary.values, 64))
    assert cache._kept == {}  # unary reports are their own supports: nothing to keep


def _dense(supports) -> np.ndarray:
    """The (n, d) 0/1 array of SparseSupports."""
    out = np.zeros((supports.reports, supports.categories), dtype=np.uint8)
    categories = np.repeat(np.arange(supports.categories), np.diff(supports.starts))
    out[supports.favouring.astype(np.int64), categories] = 1
    return out


def _stacked(blocks) -> np.ndarray:
    """The supports that _SupportCache.blocks gave, block after block (a list where they were kept as tiles)."""
    return np.vstack([np.vstack(block) if isinstance(block, list) else _dense(block)
                      if isinstance(block, SparseSupports) else block for block in blocks])


@pytest.mark.parametrize("name,epsilon,sparse", [("local-hashing", 1.0, False), ("local-hashing", 4.0, True),
                                                 ("unary-randomized-response", 8.0, True),
                                                 ("subset-selection", 4.0, True)])
def test_supports_by_category_change_no_estimate(monkeypatch, name, epsilon, sparse):
    """Sparse supports (SPARSE_SHARE: at most 1 in 16 cells favoured, as local hashing at epsilon 4, unary at 8,
    subset selection's bits at 4) and dense ones give the same estimate to the bit, whichever is used, and where
    the supports are sparse the statistics do go by category, the reports' own (unary, subset bits) too."""
    from ldpest_multinomial import likelihood

    reports = reports_of(name, {}, 60, 4000, epsilon)
    estimates, kinds = [], []
    blocks = likelihood._SupportCache.blocks

    def seen(self, *args):
        for block in blocks(self, *args):
            kinds.append(type(block).__name__)
            yield block

    monkeypatch.setattr(likelihood._SupportCache, "blocks", seen)
    calls = _counting_supports(monkeypatch, reports)
    default = likelihood.SPARSE_SHARE
    for share in (default, 0.0, 1.0):
        monkeypatch.setattr(likelihood, "SPARSE_SHARE", share)
        kinds.clear()
        estimates.append(ldpest.estimate(reports, ldpest.estimator("frequency-likelihood")))
        if share == default:
            assert (set(kinds) == {"SparseSupports"}) if sparse else ("SparseSupports" not in kinds)
            assert calls == [4000]  # kept after the first likelihood pass, by category or as bits
    xr.testing.assert_identical(estimates[0], estimates[1])
    xr.testing.assert_identical(estimates[0], estimates[2])
    assert estimates[0].attrs["mle_passes"] >= 3


@pytest.mark.parametrize("d", [2, 7, 30, 1000, 2048])
def test_sparse_supports_give_the_same_statistics(d):
    """SparseSupports hold exactly the favoured cells, from either layout, and give support_statistics to the bit,
    also at iterates off the lattice and with more than 2^16 reports (int32 report numbers)."""
    rng = np.random.default_rng(d + 1)
    thetas = [lattice_frequencies(rng.dirichlet(np.full(d, 0.5))), rng.dirichlet(np.ones(d)), np.eye(d)[d - 1]]
    for n in (0, 1, 9, 700) + ((70_000,) if d <= 7 else ()):
        for share in (0.01, 0.3):
            members = (rng.random((n, d)) < share).astype(np.uint8)
            for layout in (members, np.asfortranarray(members)):
                supports = sparse_supports(layout)
                assert np.array_equal(_dense(supports), members)
                assert supports.favouring.dtype == (np.uint16 if n <= 1 << 16 else np.int32)
                for theta, ratio in itertools.product(thetas, (1.5, 60.0, 5e21)):
                    expected = support_statistics(members, ratio, theta)
                    found = support_statistics(supports, ratio, theta)
                    assert expected["loglik"] == found["loglik"]
                    for key in ("weight_sum", "weight_square_sum", "support", "support_square"):
                        assert np.array_equal(expected[key], found[key]), (n, key)


def test_streamed_chunks_are_never_taken_for_one_another():
    from ldpest_multinomial.likelihood import _SupportCache

    reports = reports_of("local-hashing", {}, 30, 2000, 2.0)
    mechanism, values = reports.mechanism, reports.values
    cache = _SupportCache(1 << 30)
    for start in range(0, 2000, 500):  # each chunk a new array, freed before the next, as a file stream reads them
        chunk = values[start:start + 500].copy()
        blocks = list(cache.blocks(mechanism, chunk, 200))
        assert np.array_equal(_stacked(blocks), mechanism.report_support(chunk))
        del chunk, blocks
        assert len(cache._kept) == 1  # the chunks that are gone were dropped
    other = values[:500].copy()
    kept = [block.copy() for block in cache.blocks(mechanism, other, 200)]
    again = list(cache.blocks(mechanism, other, 200))  # now from the bits, as column-major tiles
    assert all(isinstance(block, list) for block in again)
    assert np.array_equal(_stacked(again), _stacked(kept))
    assert np.array_equal(_stacked(again), mechanism.report_support(other))
    stale = cache._kept.pop(id(other))
    del other, kept, again
    new = values[500:1000].copy()
    cache._kept[id(new)] = stale  # as if the new chunk had the address of the one that is gone
    assert np.array_equal(_stacked(cache.blocks(mechanism, new, 200)), mechanism.report_support(new))
    cache.clear()
    assert cache._kept == {}


@pytest.mark.parametrize("d", [2, 7, 30, 1000, 2048])
def test_packed_supports_unpack_to_the_same_statistics(d):
    from ldpest.stats.likelihood import _block_rows, pack_supports, unpack_supports

    rng = np.random.default_rng(d)
    theta = lattice_frequencies(rng.dirichlet(np.full(d, 0.5)))
    tile = max(8, _block_rows(d) // 8 * 8)
    for n in sorted({0, 1, 7, tile - 1, tile, tile + 1, 3 * tile + 5}):
        members = (rng.random((n, d)) < 0.3).astype(np.uint8)
        for layout in (members, np.asfortranarray(members)):
            unpacked = unpack_supports(pack_supports(layout))
            if isinstance(unpacked, list):  # column-major: whole tiles, then the rest, each contiguous
                assert [len(block) for block in unpacked] == [tile] * (n // tile) + ([n % tile] if n % tile else [])
                assert all(block.flags.f_contiguous for block in unpacked)
                assert np.array_equal(np.vstack(unpacked) if unpacked else np.zeros((0, d)), members)
            else:
                assert np.array_equal(unpacked, members)
            for ratio in (1.5, 60.0):
                expected, found = support_statistics(members, ratio, theta), support_statistics(unpacked, ratio, theta)
                assert expected["loglik"] == found["loglik"]
                for key in ("weight_sum", "weight_square_sum", "support", "support_square"):
                    assert np.array_equal(expected[key], found[key]), (n, key)


def test_blocks_longer_than_the_statistics_take_are_refused():
    from ldpest.stats.likelihood import _block_rows

    blocks = [np.asfortranarray(np.ones((_block_rows(1000) + 1, 1000), dtype=np.uint8))]
    with pytest.raises(ValueError, match="blocks of at most 131 reports"):
        support_statistics(blocks, 2.0, np.full(1000, 1 / 1000))
