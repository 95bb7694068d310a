"""The multinomial family against MATH.md section 1."""

import math

import numpy as np
import pytest
import xarray as xr
from stats_helpers import assert_mean_matches, assert_variance_matches, small_samples

import ldpest

EPSILONS = [0.1, 0.5, 1.0, 2.0]
FINITE = ["randomized-response", "unary-randomized-response"]
ALL = FINITE + ["laplace"]


def make(name, epsilon=1.0, d=3):
    return ldpest.mechanism(name, epsilon=epsilon, categories=list(range(d)))


# --- exact privacy of the finite channels (more in tests/core/test_exact_privacy.py) ---
@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("d", [2, 3, 5, 10])
def test_randomized_response_channel_is_exactly_epsilon_ldp(epsilon, d):
    channel = make("randomized-response", epsilon, d).channel()
    assert channel.exact and channel.satisfies(epsilon)
    assert abs(channel.max_log_ratio() - epsilon) < 1e-12  # the budget is used, up to 2^-64


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("d", [2, 3, 4, 6])
def test_unary_channel_is_exactly_epsilon_ldp(epsilon, d):
    channel = make("unary-randomized-response", epsilon, d).channel()
    assert channel.dense().shape == (d, 2 ** d)
    assert channel.exact and channel.satisfies(epsilon)
    assert abs(channel.max_log_ratio() - epsilon) < 1e-12


# --- exact unbiasedness of the debiasing maps -------------------------------
@pytest.mark.parametrize("name", FINITE)
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_debiasing_is_exactly_unbiased_over_the_channel(name, epsilon):
    """E[theta_hat | x] = e_x, summing the single-report estimate over every output
    of the implemented channel."""
    mech = make(name, epsilon, 4)
    channel = mech.channel()
    for x in range(4):
        expected = np.zeros(4)
        for z, weight in zip(channel.outputs, channel.probabilities()[x], strict=True):
            stats = mech.frequency_statistics(np.asarray([z]))
            theta, _ = mech.frequency_estimate(stats, 1)
            expected += weight * theta
        assert np.allclose(expected, np.eye(4)[x], atol=1e-12)


def test_laplace_noise_has_mean_zero_and_stated_variance_exactly():
    """Sum the implemented law's exact pmf over +-60 scales (the rest is < 1e-25)."""
    noise = make("laplace", 1.0).noise
    t = noise.steps_per_unit_loss
    k = np.arange(-60 * round(t), 60 * round(t))
    pmf = np.array([float(noise.pmf_steps(int(j))) for j in k])
    assert abs(pmf.sum() - 1) < 1e-12
    assert abs((pmf * k).sum()) < 1e-12
    assert math.isclose((pmf * (noise.step * k) ** 2).sum(), noise.variance, rel_tol=1e-12)
    assert math.isclose(noise.variance, 8.0, rel_tol=1e-5)  # continuous limit 2 b^2 = 8 / a^2


# --- Monte Carlo: mean and variance against MATH.md --------------------------
THETA = np.array([0.5, 0.3, 0.15, 0.05])


def analytic_variance(name, epsilon, theta, n):
    d = len(theta)
    if name == "randomized-response":
        p = math.exp(epsilon) / (math.exp(epsilon) + d - 1)
        q = 1 / (math.exp(epsilon) + d - 1)
        pi = q + (p - q) * theta
        return pi * (1 - pi) / (n * (p - q) ** 2)
    if name == "unary-randomized-response":
        p = math.exp(epsilon / 2) / (1 + math.exp(epsilon / 2))
        pi = (1 - p) + (2 * p - 1) * theta
        return pi * (1 - pi) / (n * (2 * p - 1) ** 2)
    b = 2 / epsilon
    return theta * (1 - theta) / n + 2 * b ** 2 / n


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_monte_carlo_mean_variance_and_stderr(name, epsilon, rng):
    n, reps = 400, 1500
    mech = ldpest.mechanism(name, epsilon=epsilon, categories=["a", "b", "c", "d"])
    data = rng.choice(np.array(["a", "b", "c", "d"]), size=n * reps, p=THETA)  # data redrawn every rep
    reports = mech.privatize(data, rng=rng)
    estimator = ldpest.estimator("frequency", projection="none")
    thetas, stderrs = [], []
    for chunk in reports.chunks(n):
        theta, stderr = mech.frequency_estimate(estimator.aggregate(chunk).arrays, n)
        thetas.append(theta)
        stderrs.append(stderr)
    thetas, stderrs = np.array(thetas), np.array(stderrs)
    variance = analytic_variance(name, epsilon, THETA, n)
    assert_mean_matches(thetas, THETA, variance, what=f"{name} mean")
    assert_variance_matches(thetas, variance, what=f"{name} variance")
    # the plug-in standard error estimates the analytic one: its square is unbiased to O(1/n)
    assert np.allclose((stderrs ** 2).mean(axis=0), variance, rtol=0.05)


@small_samples
def test_projection_never_increases_l2_error(rng):
    mech = make("laplace", 0.5, 20)
    theta = rng.dirichlet(np.ones(20))
    est = ldpest.estimator("frequency")
    for _ in range(50):
        data = rng.choice(20, size=300, p=theta)
        result = est.estimate(mech.privatize(data, rng=rng))
        raw = np.linalg.norm(result["unprojected"].values - theta)
        projected = np.linalg.norm(result["probability"].values - theta)
        assert projected <= raw + 1e-12
        assert result["probability"].min() >= 0 and abs(float(result["probability"].sum()) - 1) < 1e-12


# --- streaming equals one-shot ------------------------------------------------
@small_samples
@pytest.mark.parametrize("name", ALL)
def test_streaming_equals_one_shot_exactly(name, rng):
    mech = ldpest.mechanism(name, epsilon=0.7, categories=["x", "y", "z", "w", "v"])
    reports = mech.privatize(rng.choice(["x", "y", "z", "w", "v"], size=10_007), rng=rng)
    estimator = ldpest.estimator("frequency")
    one_shot = estimator.estimate(reports)
    for size in (1, 13, 1000, 4096):
        if size == 1:
            chunks = [reports[i:i + 1] for i in range(0, 300)]
            expected = estimator.estimate(reports[:300])
        else:
            chunks, expected = list(reports.chunks(size)), one_shot
        xr.testing.assert_identical(ldpest.estimate(chunks, estimator), expected)
    # a one-shot generator streams (it is consumed once, chunk by chunk)
    consumed = []

    def stream():
        for chunk in reports.chunks(1000):
            consumed.append(chunk.n)
            yield chunk

    xr.testing.assert_identical(ldpest.estimate(stream(), estimator), one_shot)
    assert sum(consumed) == reports.n
    # any order of adding the statistics gives the same totals
    parts = [estimator.aggregate(c) for c in reports.chunks(777)]
    order = rng.permutation(len(parts))
    shuffled = sum(parts[i] for i in order)
    xr.testing.assert_identical(estimator.finalize(shuffled), one_shot)


# --- labels, schema and files ------------------------------------------------
def test_result_schema_and_labels(rng):
    mech = ldpest.mechanism("randomized-response", epsilon=1.0, categories=["red", "green", "blue"])
    result = ldpest.estimate(mech.privatize(rng.choice(["red", "green", "blue"], 5000), rng=rng))
    assert result["probability"].dims == ("category",)
    assert list(result["category"].values) == ["red", "green", "blue"]
    assert set(result.data_vars) >= {"probability", "stderr", "unprojected"}
    for key in ("mechanism", "estimator", "epsilon", "n", "projection", "mechanism_spec", "ldpest_version"):
        assert key in result.attrs
    assert result.attrs["n"] == 5000 and result.attrs["projection"] in ("simplex", "positive", "shrink", "ibu", "mle")
    assert result.attrs["projection_rule"].startswith(f"auto: {result.attrs['projection']}")
    interval = ldpest.confidence_interval(result, level=0.9)
    z = 1.6448536269514722
    # exact (Clopper-Pearson) interval; at n = 5000 it is close to the Wald interval
    assert "Clopper-Pearson" in interval.attrs["interval_method"]
    width = (interval["upper"] - interval["lower"]).values
    np.testing.assert_allclose(width, 2 * z * interval["stderr"].values, rtol=0.02)
    assert np.all((interval["lower"] < interval["unprojected"]) & (interval["unprojected"] < interval["upper"]))
    assert interval.attrs["confidence_level"] == 0.9


@pytest.mark.parametrize("name", ALL)
def test_netcdf_round_trip_keeps_spec_and_estimate(name, tmp_path, rng):
    mech = ldpest.mechanism(name, epsilon=1.5, categories=[10, 20, 30])
    reports = mech.privatize(rng.choice([10, 20, 30], 2000), rng=rng)
    path = tmp_path / "reports.nc"
    reports.to_netcdf(path)
    back = ldpest.read_reports(path)
    assert back.spec == reports.spec and back.mechanism == mech
    np.testing.assert_array_equal(back.values, reports.values)
    xr.testing.assert_identical(ldpest.estimate(back), ldpest.estimate(reports))


@small_samples
def test_reports_from_array_of_labels_collected_elsewhere():
    mech = ldpest.mechanism("randomized-response", epsilon=1.0, categories=["yes", "no"])
    reports = ldpest.Reports.from_array(["yes", "no", "yes", "yes"], mech)
    assert list(reports.labels()) == ["yes", "no", "yes", "yes"]
    assert reports.data.attrs["rng"] == "external"
    result = ldpest.estimate(reports, "frequency")
    assert result.attrs["n"] == 4


# --- bad input ----------------------------------------------------------------
@pytest.mark.parametrize("epsilon", [0, -1, float("nan"), float("inf"), "1", True, None])
@pytest.mark.parametrize("name", ALL)
def test_bad_epsilon_is_a_clear_error(name, epsilon):
    with pytest.raises(ldpest.ParameterError, match="epsilon"):
        ldpest.mechanism(name, epsilon=epsilon, categories=["a", "b"])


@pytest.mark.parametrize("name", ["randomized-response", "unary-randomized-response", "laplace", "local-hashing"])
def test_epsilon_has_no_default(name):
    with pytest.raises(ldpest.ParameterError, match="give epsilon or keep|needs epsilon"):
        ldpest.mechanism(name, categories=["a", "b"])


@pytest.mark.parametrize("categories", [["a"], ["a", "a", "b"], "ab", [1.5, 2.5], [None, 1]])
def test_bad_categories(categories):
    with pytest.raises(ldpest.ParameterError, match="categories"):
        ldpest.mechanism("randomized-response", epsilon=1.0, categories=categories)


@pytest.mark.parametrize("name", ALL)
def test_values_outside_categories_name_how_many_and_which(name):
    mech = ldpest.mechanism(name, epsilon=1.0, categories=["a", "b", "c"])
    with pytest.raises(ldpest.DataError, match=r"3 value\(s\) outside the declared categories.*'d', 'e'.*row 1"):
        mech.privatize(["a", "d", "e", "b", "d"], rng=np.random.default_rng(0))


@pytest.mark.parametrize("name", ALL)
def test_nan_and_empty_data_are_errors(name):
    mech = ldpest.mechanism(name, epsilon=1.0, categories=[0, 1, 2])
    with pytest.raises(ldpest.DataError, match=r"1 value\(s\) are missing.*row 1"):
        mech.privatize(np.array([0.0, np.nan, 1.0]), rng=np.random.default_rng(0))
    with pytest.raises(ldpest.DataError, match="empty"):
        mech.privatize(np.array([], dtype=int), rng=np.random.default_rng(0))


@pytest.mark.parametrize("name", ["unary-randomized-response", "laplace"])
def test_reports_of_the_wrong_width_are_rejected(name):
    mech = ldpest.mechanism(name, epsilon=1.0, categories=["a", "b", "c"])
    with pytest.raises(ldpest.DataError, match="width 4 but mechanism .* has 3 categories"):
        ldpest.Reports.from_array(np.zeros((5, 4)), mech)


def test_estimating_zero_reports_is_an_error():
    mech = make("randomized-response")
    with pytest.raises(ldpest.DataError, match="no reports"):
        ldpest.estimate([], "frequency")
    reports = ldpest.Reports.from_array([0, 1], mech)
    with pytest.raises(ldpest.DataError, match="no reports"):
        ldpest.estimate(reports[0:0])


def test_unknown_projection_lists_the_choices():
    with pytest.raises(ldpest.ParameterError, match="'simplex', 'positive', 'shrink', 'ibu', 'mle', 'none'"):
        ldpest.estimator("frequency", projection="l1")


def test_mechanism_is_immutable():
    mech = make("randomized-response")
    with pytest.raises(AttributeError, match="immutable"):
        mech.epsilon = 3.0


@small_samples
@pytest.mark.parametrize("name", ALL)
def test_exact_aggregate_simulation_has_the_law_of_per_record_privatisation(name, rng):
    """Same mean and variance as MATH.md (5 SE), and the same law as privatising every record
    (two-sample KS per category at a fixed seed, false-alarm rate 1e-3 each)."""
    from scipy import stats as scipy_stats

    n, reps, epsilon = 200, 3000, 1.0
    mech = ldpest.mechanism(name, epsilon=epsilon, categories=["a", "b", "c", "d"])
    est = ldpest.estimator("frequency", projection="none")
    fast = np.array([est.finalize(est.simulate(mech, THETA, n, rng))["unprojected"].values for _ in range(reps)])
    reports = mech.privatize(rng.choice(np.array(["a", "b", "c", "d"]), size=n * reps, p=THETA), rng=rng)
    direct = np.array([mech.frequency_estimate(est.aggregate(c).arrays, n)[0] for c in reports.chunks(n)])
    variance = analytic_variance(name, epsilon, THETA, n)
    assert_mean_matches(fast, THETA, variance, what="fast mean")
    assert_variance_matches(fast, variance, what="fast variance")
    for j in range(4):
        assert scipy_stats.ks_2samp(fast[:, j], direct[:, j]).pvalue > 1e-3


@small_samples
@pytest.mark.parametrize("d, dtype", [(2, np.uint8), (256, np.uint8), (257, np.uint16), (70_000, np.uint32)])
def test_randomized_response_reports_take_the_smallest_index_type(d, dtype, tmp_path):
    """Issue 15: 1 byte per report up to 256 categories (int64 before); files keep the type, and
    reports stored as int64 by earlier versions are still read."""
    mech = ldpest.mechanism("randomized-response", epsilon=1.0, categories=list(range(d)))
    codes = np.random.default_rng(0).integers(0, d, 5000)
    reports = mech.privatize(codes, rng=np.random.default_rng(1))
    assert reports.values.dtype == dtype and reports.values.max() < d
    assert ldpest.Reports.from_array(codes, mech).values.dtype == dtype
    path = tmp_path / "r.nc"
    reports.to_netcdf(path)
    back = ldpest.read_reports(path)
    assert back.values.dtype == dtype and np.array_equal(back.values, reports.values)
    assert np.array_equal(mech.check_encoded_reports(reports.values.astype(np.int64)), reports.values)
    expected = ldpest.estimate(reports)["count"].values
    assert np.array_equal(expected, np.bincount(reports.values.astype(np.int64), minlength=d))


@pytest.mark.parametrize("d", [3, 100, 200, 40_000])
def test_hadamard_symbols_take_the_smallest_index_type(d, tmp_path):
    """Issue 15: symbols are stored in the smallest unsigned type that holds K - 1 (int64 before);
    int64 symbols of earlier files are still read, and the counts are bincount's."""
    mech = ldpest.mechanism("hadamard-response", epsilon=1.0, categories=list(range(d)))
    dtype = np.dtype(np.uint8 if mech.symbols <= 256 else np.uint16 if mech.symbols <= 65536 else np.uint32)
    reports = mech.privatize(np.random.default_rng(0).integers(0, d, 5000), rng=np.random.default_rng(1))
    assert reports.values.dtype == dtype and mech.symbol_dtype == dtype and reports.values.max() < mech.symbols
    path = tmp_path / "h.nc"
    reports.to_netcdf(path)
    back = ldpest.read_reports(path)
    assert back.values.dtype == dtype and np.array_equal(back.values, reports.values)
    assert mech.encode_reports(reports.values.astype(np.int64)).dtype == dtype
    counts = mech.frequency_statistics(reports.values)["symbols"]
    assert np.array_equal(counts, np.bincount(reports.values.astype(np.int64), minlength=mech.symbols))


@pytest.mark.parametrize("name", ["randomized-response", "hadamard-response"])
def test_one_index_privatise_memory_is_the_reports_plus_one_block(name):
    """Issue 15: privatise peaks at most 1.5x its one-byte reports at 10^6 (Hadamard was 12x its
    int64 symbols, randomized response 11x): the input codes are not copied and the
    temporaries are one block of rows."""
    import tracemalloc

    mech = ldpest.mechanism(name, epsilon=1.0, categories=list(range(20)))
    codes = np.random.default_rng(0).integers(0, 20, 1_000_000)
    mech.privatize(codes[:1000], rng=1)
    tracemalloc.start()
    reports = mech.privatize(codes, rng=np.random.default_rng(1))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert reports.values.dtype == np.uint8
    assert peak < 1.5 * reports.values.nbytes, peak / reports.values.nbytes
