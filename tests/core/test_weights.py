"""Design (survey) weights (issue 26): the Hajek frequency estimate and its linearization variance
(ldpest/engine/weights.py). Exact identities (unit weights, integer weights as replicated reports,
the variance formula at unit weights), a stratified design simulated against its analytic mean and
variance, the floor at tiny n, and clear refusals."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from stats_helpers import assert_mean_matches, assert_variance_matches

import ldpest

LDPEST = str(Path(sys.executable).with_name("ldpest"))
CATEGORIES = ["a", "b", "c", "d"]
ORACLES = [
    ("randomized-response", {}),
    ("unary-randomized-response", {}),
    ("subset-selection", {}),
    ("subset-selection", {"report_form": "indices", "subset_size": 2}),
    ("local-hashing", {}),
    ("local-hashing", {"hash_family": "xxh32"}),
]


def mechanism(name, params, epsilon=1.0):
    return ldpest.mechanism(name, epsilon=epsilon, categories=CATEGORIES, **params)


@pytest.mark.parametrize("name,params", ORACLES)
def test_integer_weights_are_replicated_reports_and_unit_weights_change_nothing(name, params):
    mech = mechanism(name, params)
    rng = np.random.default_rng(1)
    data = rng.choice(CATEGORIES, 600, p=[0.4, 0.3, 0.2, 0.1])
    reports = mech.privatize(data, rng=2)
    unit = ldpest.estimate(reports, weights=np.ones(600))
    plain = ldpest.estimate(reports)
    np.testing.assert_allclose(unit["unprojected"].values, plain["unprojected"].values, rtol=0, atol=1e-12)
    weights = rng.integers(1, 4, 600)
    weighted = ldpest.estimate(reports, weights=weights)
    replicated = ldpest.Reports.from_array(np.repeat(reports.values, weights, axis=0), mech,
                                           codes="0-based" if mech.report_kind == "label" else "labels")
    np.testing.assert_allclose(weighted["unprojected"].values, ldpest.estimate(replicated)["unprojected"].values,
                               rtol=0, atol=1e-12)
    assert weighted.attrs["weight_sum"] == weights.sum()


def test_the_variance_at_unit_weights_is_the_binomial_one_at_the_observed_share():
    mech = mechanism("randomized-response", {})
    reports = mech.privatize(np.random.default_rng(3).choice(CATEGORIES, 500), rng=4)
    result = ldpest.estimate(reports, weights=np.ones(500))
    offset, gap = mech.binomial_model()
    share = np.bincount(reports.values, minlength=4) / 500
    expected = np.sqrt(share * (1 - share) / (499 * gap ** 2))
    np.testing.assert_allclose(result["stderr"].values, expected, rtol=1e-12)
    assert result["stderr"].attrs["method"] == "linearization (design weights)"


def test_a_stratified_sample_is_estimated_without_bias_and_its_variance_as_the_formula_says():
    """20% of the population is in stratum A (thetas differ), sampled as heavily as B: weights
    0.2 / n_A and 0.8 / n_B. The unweighted estimate is biased; the weighted one is not, its
    variance is 0.04 V_A / n_A + 0.64 V_B / n_B, and the mean linearization variance is that plus
    the between-strata term, as the module docstring derives (one stratum: conservative)."""
    mech = mechanism("randomized-response", {}, epsilon=1.5)
    offset, gap = mech.binomial_model()
    theta_a, theta_b = np.array([0.7, 0.2, 0.1, 0.0]), np.array([0.1, 0.3, 0.2, 0.4])
    share_a, n_a, n_b = 0.2, 800, 800
    truth = share_a * theta_a + (1 - share_a) * theta_b
    weights = np.concatenate([np.full(n_a, share_a / n_a), np.full(n_b, (1 - share_a) / n_b)])
    rng = np.random.default_rng(5)
    estimates, variances, plain = [], [], []
    for _ in range(400):
        data = np.concatenate([rng.choice(4, n_a, p=theta_a), rng.choice(4, n_b, p=theta_b)])
        reports = mech.privatize(np.asarray(CATEGORIES)[data], rng=rng)
        result = ldpest.estimate(reports, weights=weights)
        estimates.append(result["unprojected"].values)
        variances.append(result["stderr"].values ** 2)
        plain.append(ldpest.estimate(reports)["unprojected"].values)
    estimates, variances, plain = np.array(estimates), np.array(variances), np.array(plain)
    pi_a, pi_b = offset + gap * theta_a, offset + gap * theta_b
    var_a, var_b = pi_a * (1 - pi_a) / gap ** 2, pi_b * (1 - pi_b) / gap ** 2  # per report, in the stratum
    exact = share_a ** 2 * var_a / n_a + (1 - share_a) ** 2 * var_b / n_b
    for j in range(4):
        assert_mean_matches(estimates[:, j], truth[j], exact[j], what=f"theta_{j}")
        assert_variance_matches(estimates[:, j], exact[j], what=f"var theta_{j}")
    n = n_a + n_b
    between = (share_a ** 2 / n_a * (theta_a - truth) ** 2 + (1 - share_a) ** 2 / n_b * (theta_b - truth) ** 2)
    expected_v = n / (n - 1) * (exact + between)  # E of the linearization variance, to O(1/n^2)
    for j in range(4):
        spread = variances[:, j].std(ddof=1) / np.sqrt(len(variances))
        assert abs(variances[:, j].mean() - expected_v[j]) < 5 * spread, j
    bias = plain.mean(axis=0) - truth  # the unweighted estimate is of the sample, not the population
    assert np.max(np.abs(bias)) > 10 * np.sqrt(exact.max() / 400)


@pytest.mark.parametrize("n", [2, 3, 10])
def test_tiny_samples_never_get_a_zero_standard_error(n):
    mech = mechanism("randomized-response", {}, epsilon=20.0)  # every report says the truth (almost)
    reports = mech.privatize(["a"] * n, rng=1)
    result = ldpest.estimate(reports, weights=np.full(n, 3.0))
    assert np.all(result["stderr"].values > 0)


def test_refusals_say_what_is_wrong():
    rr = mechanism("randomized-response", {})
    reports = rr.privatize(["a", "b", "c"], rng=1)
    with pytest.raises(ldpest.DataError, match="weights has 2 value"):
        ldpest.estimate(reports, weights=[1, 2])
    with pytest.raises(ldpest.DataError, match="finite and >= 0"):
        ldpest.estimate(reports, weights=[1, -2, 1])
    with pytest.raises(ldpest.DataError, match="finite and >= 0"):
        ldpest.estimate(reports, weights=[1, np.nan, 1])
    with pytest.raises(ldpest.DataError, match="sum to 0"):
        ldpest.estimate(reports, weights=[0, 0, 0])
    with pytest.raises(ldpest.DataError, match="at least 2 reports"):
        ldpest.estimate(rr.privatize(["a"], rng=1), weights=[1])
    with pytest.raises(ldpest.ParameterError, match="no per-report support to weight"):
        ldpest.estimate(ldpest.mechanism("hadamard-response", epsilon=1.0, categories=CATEGORIES).privatize(
            ["a", "b"], rng=1), weights=[1, 1])
    with pytest.raises(ldpest.ParameterError, match="no per-report support to weight"):
        ldpest.estimate(ldpest.mechanism("laplace", epsilon=1.0, categories=CATEGORIES).privatize(
            ["a", "b"], rng=1), weights=[1, 1])
    with pytest.raises(ldpest.ParameterError, match="weighted estimate is of frequencies"):
        ldpest.estimate(reports, "histogram-mean", weights=[1, 1, 1])


def test_the_command_line_reads_a_weight_column_and_names_a_bad_row(tmp_path):
    mech = mechanism("randomized-response", {})
    rng = np.random.default_rng(7)
    values = np.asarray(CATEGORIES)[mech.privatize(rng.choice(CATEGORIES, 2000), rng=8).values]
    weights = rng.uniform(0.5, 3, 2000)
    path = tmp_path / "survey.csv"
    path.write_text("answer,weight\n" + "".join(f"{v},{float(w)!r}\n" for v, w in zip(values, weights, strict=True)))
    options = ["-c", "answer", "-m", "randomized-response", "-e", "1", "--categories", "a,b,c,d", "--no-progress"]
    done = subprocess.run([LDPEST, "estimate", str(path), "--weight-column", "weight", *options, "--json"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    reports = ldpest.Reports.from_array(values, mech)
    expected = ldpest.estimate(reports, weights=weights)
    np.testing.assert_allclose(result["data_vars"]["unprojected"]["data"], expected["unprojected"].values, rtol=1e-12)
    assert result["attrs"]["weights"].startswith("Hajek")
    bad = tmp_path / "bad.csv"
    bad.write_text("answer,weight\na,1\nb,-1\n")
    refused = subprocess.run([LDPEST, "estimate", str(bad), "--weight-column", "weight", *options],
                             capture_output=True, text=True)
    assert refused.returncode == 2 and "line 3" in refused.stderr and "finite and >= 0" in refused.stderr
    missing = subprocess.run([LDPEST, "estimate", str(path), "--weight-column", "w", *options],
                             capture_output=True, text=True)
    assert missing.returncode == 2 and "no column 'w'" in missing.stderr
