"""The histogram family against MATH.md section 2."""

import math

import numpy as np
import pytest
import xarray as xr
from scipy import stats
from stats_helpers import assert_mean_matches, assert_variance_matches

import ldpest
from ldpest.stats.projection import project_positive, project_simplex

BETA = stats.beta(2, 2)


def beta_masses(k):
    edges = np.linspace(0, 1, k + 1)
    return np.diff(BETA.cdf(edges))


def hist(epsilon=1.0, bins=4, **kw):
    return ldpest.mechanism("laplace-histogram", epsilon=epsilon, low=[0.0], high=[1.0], bins=bins, **kw)


def analytic(estimator, mech, mu, n):
    if estimator == "histogram-mean":
        return mu * (1 - mu) / n + mech.noise.variance / n
    q0, q1 = ldpest.estimator("histogram-cdf").thresholds(mech)
    pi = q0 - mu * (q0 - q1)
    return pi * (1 - pi) / (n * (q0 - q1) ** 2)


def test_lattice_noise_thresholds_are_the_lattice_law_near_the_continuous_cdf():
    """q0 = P(Z <= 1/2 | not in the cell) sums the exact pmf of the implemented law; it lies
    within one lattice atom of the continuous H(1 / (2 sigma_W)) (lattice step 2^-8 of the scale)."""
    mech = hist(epsilon=0.5)
    noise = mech.noise
    q0, q1 = ldpest.estimator("histogram-cdf").thresholds(mech)
    half = round(0.5 / noise.step)
    t = noise.steps_per_unit_loss
    total_below = sum(float(noise.pmf_steps(k)) for k in range(-60 * round(t), half + 1))
    assert q0 == pytest.approx(total_below, abs=1e-15)
    # symmetric law: q1 = P(K <= -h) = P(K >= h) = 1 - q0 + P(K = h)
    assert q1 == pytest.approx(1 - q0 + float(noise.pmf_steps(half)), abs=1e-15)
    sigma = 2 ** 1.5 / 0.5
    H = lambda t: 1 - math.exp(-math.sqrt(2) * t) / 2 if t >= 0 else math.exp(math.sqrt(2) * t) / 2  # noqa: E731
    atom = float(noise.pmf_steps(0))
    assert abs(q0 - H(1 / (2 * sigma))) < atom
    assert mech.noise.variance == pytest.approx(sigma ** 2, rel=1e-5)


def test_privacy_of_the_lattice_noise_with_l1_sensitivity_two():
    noise = hist(epsilon=0.8).noise
    assert noise.sensitivity_steps == 2 * round(1 / noise.step)
    assert noise.privacy_loss <= 0.8


@pytest.mark.parametrize("estimator", ["histogram-mean", "histogram-cdf"])
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_mean_and_variance_of_cell_mass_estimates(estimator, epsilon, rng):
    """Unbiasedness of mu_hat and mu_tilde and their variance formulas, data redrawn every rep."""
    n, reps, k = 300, 1500, 4
    mech = hist(epsilon, k)
    mu = beta_masses(k)
    est = ldpest.estimator(estimator, projection="none")
    reports = mech.privatize(BETA.rvs(size=n * reps, random_state=rng), rng=rng)
    masses = np.array([est.finalize(est.aggregate(c))["unprojected"].values / k for c in reports.chunks(n)])
    variance = analytic(estimator, mech, mu, n)
    assert_mean_matches(masses, mu, variance, what=f"{estimator} mean")
    assert_variance_matches(masses, variance, what=f"{estimator} variance")


@pytest.mark.parametrize("estimator", ["histogram-mean", "histogram-cdf"])
def test_fast_simulation_has_the_law_of_per_record_privatisation(estimator, rng):
    """Exact aggregate simulation vs privatising every record: same law of the statistic.

    Compared by a two-sample KS test per cell at a fixed seed (false alarm
    rate 1e-3 per cell), and both against the analytic mean and variance.
    """
    n, reps, k = 40, 4000, 3
    mech = hist(0.7, k)
    mu = beta_masses(k)
    est = ldpest.estimator(estimator, projection="none")
    reports = mech.privatize(BETA.rvs(size=n * reps, random_state=rng), rng=rng)
    direct = np.array([est.finalize(est.aggregate(c))["unprojected"].values / k for c in reports.chunks(n)])
    fast = np.array([est.finalize(est.simulate(mech, mu, n, rng))["unprojected"].values / k for _ in range(reps)])
    for j in range(k):
        assert stats.ks_2samp(direct[:, j], fast[:, j]).pvalue > 1e-3
    variance = analytic(estimator, mech, mu, n)
    assert_mean_matches(fast, mu, variance, what="fast mean")
    assert_variance_matches(fast, variance, what="fast variance")


def test_fast_simulation_scales_to_a_billion_reports():
    mech = hist(1.0, 10)
    est = ldpest.estimator("histogram-cdf")
    result = est.finalize(est.simulate(mech, beta_masses(10), 10 ** 9, np.random.default_rng(1)))
    assert result.attrs["n"] == 10 ** 9
    truth = beta_masses(10) * 10
    assert np.all(np.abs(result["unprojected"] - truth) < 6 * result["stderr"])


@pytest.mark.parametrize("projection", ["positive", "simplex"])
def test_projected_densities_are_non_negative_and_integrate_to_one(projection, rng):
    mech = ldpest.mechanism("laplace-histogram", epsilon=0.25, low=[-1, -1], high=[1, 1], bins=[5, 4])
    points = rng.uniform(-1, 1, (3000, 2))
    for estimator in ("histogram-mean", "histogram-cdf"):
        result = ldpest.estimate(mech.privatize(points, rng=rng), ldpest.estimator(estimator, projection=projection))
        density = result["density"].values
        assert density.shape == (5, 4) and density.min() >= 0
        assert float(density.sum() * result.attrs["cell_volume"]) == pytest.approx(1.0, abs=1e-12)
        assert np.allclose(result["mass"].values, density * result.attrs["cell_volume"])


def test_positive_projection_never_worse_in_l1_once_the_masses_sum_to_one(rng):
    """Gyorfi-Kroll: g+ / int g+ is never farther in L1 when int g = 1."""
    mech = hist(0.3, 8)
    mu = beta_masses(8)
    for _ in range(200):
        raw = ldpest.estimate(mech.privatize(BETA.rvs(size=500, random_state=rng), rng=rng),
                              ldpest.estimator("histogram-cdf", projection="none"))["mass"].values
        centred = raw - (raw.sum() - 1) / raw.size
        projected = project_positive(centred)
        assert np.abs(projected - mu).sum() <= np.abs(centred - mu).sum() + 1e-12


def test_simplex_projection_is_duchi_et_al_projection_onto_k_simplex(rng):
    k = 6
    mech = hist(1.0, k)
    result = ldpest.estimate(mech.privatize(BETA.rvs(size=2000, random_state=rng), rng=rng),
                             ldpest.estimator("histogram-mean", projection="simplex"))
    theta = project_simplex(result["unprojected"].values, total=k)  # Pi_{k Delta_k}(k mu_hat)
    np.testing.assert_allclose(result["density"].values, theta, atol=1e-12)


def test_one_dimensional_rate_with_tuned_bins():
    """MISE of the projected 1-D private histogram with k = ceil((n a^2)^(1/4))
    falls like (n a^2)^(-1/2) (Duchi et al.; MATH-DERIVATIONS section 3 measured -0.497).

    Exact fast simulation; ISE exact for Beta(2,2): int f^2 - 2 sum theta_j p_j + sum theta_j^2 / k.
    The tolerance is five standard errors of the fitted slope (from the
    replicate spread) plus 0.03 for the ceil() in k, which makes the bias term
    step rather than decay smoothly.
    """
    rng = np.random.default_rng(11)
    ns = np.logspace(5, 10, 11).astype(np.int64)
    reps = 60
    int_f2 = 1.2  # int_0^1 (6x(1-x))^2 dx
    mises, ses = [], []
    for n in ns:
        mech = ldpest.mechanism("laplace-histogram", epsilon=1.0, low=[0], high=[1], bins="auto", expected_n=int(n))
        k = mech.partition.size
        p = beta_masses(k)
        est = ldpest.estimator("histogram-mean", projection="simplex")
        ise = []
        for _ in range(reps):
            theta = est.finalize(est.simulate(mech, p, int(n), rng))["density"].values
            ise.append(int_f2 - 2 * np.sum(theta * p) + np.sum(theta ** 2) / k)
        mises.append(np.mean(ise))
        ses.append(np.std(ise, ddof=1) / np.sqrt(reps))
    logs = np.log(mises)
    slope, intercept = np.polyfit(np.log(ns), logs, 1)
    residual_se = np.array(ses) / np.array(mises)  # se of log MISE
    x = np.log(ns) - np.log(ns).mean()
    slope_se = np.sqrt(np.sum((x / np.sum(x ** 2)) ** 2 * residual_se ** 2))
    print(f"1-D rate: slope {slope:.4f} (se {slope_se:.4f})")
    assert abs(slope + 0.5) < 5 * slope_se + 0.03, f"slope {slope:.3f} (se {slope_se:.3f})"


def test_streaming_equals_one_shot(rng):
    mech = ldpest.mechanism("laplace-histogram", epsilon=1.0, low=[0, 0], high=[1, 2], bins=[3, 2],
                            names=["age", "income"])
    reports = mech.privatize(rng.uniform([0, 0], [1, 2], (5003, 2)), rng=rng)
    for name in ("histogram-mean", "histogram-cdf"):
        est = ldpest.estimator(name)
        xr.testing.assert_identical(est.estimate(reports.chunks(777)), est.estimate(reports))


def test_result_schema_names_dims_after_the_inputs(rng):
    mech = ldpest.mechanism("laplace-histogram", epsilon=1.0, low=[0, 0], high=[1, 2], bins=[3, 2],
                            names=["age", "income"])
    result = ldpest.estimate(mech.privatize(rng.uniform([0, 0], [1, 2], (2000, 2)), rng=rng))
    assert result["density"].dims == ("age", "income")
    np.testing.assert_allclose(result["age"].values, [1 / 6, 0.5, 5 / 6])
    np.testing.assert_allclose(result["income_bounds"].values, [[0, 1], [1, 2]])
    assert result["age"].attrs["bounds"] == "age_bounds"
    assert set(result.data_vars) >= {"density", "stderr", "mass", "unprojected", "age_bounds", "income_bounds"}
    assert result.attrs["estimator"] == "histogram-cdf" and result.attrs["projection"] == "positive"
    default = ldpest.mechanism("laplace-histogram", epsilon=1.0, low=[0, 0, 0], high=[1, 1, 1], bins=2)
    assert ldpest.estimate(default.privatize(rng.uniform(size=(100, 3)), rng=rng))["density"].dims == ("x1", "x2", "x3")


def test_ball_partition_results_mark_the_partition(rng):
    mech = ldpest.mechanism("laplace-histogram", epsilon=1.0, radius=1.0, h=0.5, d=2)
    points = rng.normal(0, 0.3, (3000, 2))
    points = points[np.sum(points ** 2, axis=1) <= 1]
    result = ldpest.estimate(mech.privatize(points, rng=rng))
    assert int(result["in_partition"].sum()) == mech.partition.size
    assert float(result["density"].where(~result["in_partition"], 0).sum()) == 0.0


def test_points_outside_every_cell_are_counted_and_warned(rng):
    mech = hist(1.0, 4)
    with pytest.warns(ldpest.DataDroppedWarning, match="2 of 5 points lie outside every cell"):
        reports = mech.privatize(np.array([0.1, 1.5, 0.5, -0.2, 1.0]), rng=rng)
    assert reports.n == 5


def test_auto_tuning_rules():
    one = ldpest.mechanism("laplace-histogram", epsilon=0.5, low=[0], high=[1], bins="auto", expected_n=10 ** 6)
    assert one.partition.shape == (math.ceil((10 ** 6 * 0.25) ** 0.25),)
    assert one.spec["bins"] == "auto"  # the spec keeps the rule, so it rebuilds the same partition
    two = ldpest.mechanism("laplace-histogram", epsilon=0.5, low=[-1, -1], high=[1, 1], bins="auto", expected_n=10 ** 5)
    unit = (10 ** 5 / (32 * 0.5 ** 4)) ** (-1 / 6)  # Gyorfi-Kroll on the unit cube (radius 1/2), sigma^2 = 32
    assert two.partition.shape == (math.ceil(1 / unit),) * 2
    ball = ldpest.mechanism("laplace-histogram", epsilon=0.5, radius=1.0, h="auto", d=2, expected_n=10 ** 5)
    assert ball.partition.widths[0] == pytest.approx((10 ** 5 / 32) ** (-1 / 6))


def test_auto_bins_do_not_depend_on_the_units_of_an_axis():
    """Issue 12: low [0, 0], high [5.5, 20000] gave 1 x 188 cells, [0, 1]^2 7 x 7, [0, 1000]^2 69 x 69."""
    shapes = {tuple(ldpest.mechanism("laplace-histogram", epsilon=1.0, low=[0, 0], high=high, bins="auto",
                                     expected_n=10 ** 4).partition.shape)
              for high in ([5.5, 20000], [1, 1], [1000, 1000], [1e-6, 3e9])}
    assert len(shapes) == 1 and len(set(shapes.pop())) == 1


@pytest.mark.parametrize("params,match", [
    ({"low": [0], "high": [0], "bins": 3}, "below its high"),
    ({"low": [0], "high": [1], "bins": 0}, "bins"),
    ({"low": [0], "high": [1], "bins": "auto"}, "expected_n"),
    ({"low": [0, 0], "high": [1], "bins": 2}, "same length"),
    ({"low": [0], "high": [1], "bins": 2, "radius": 1.0, "h": 0.5}, "either"),
    ({"radius": 1.0}, "radius and h"),
    ({"low": [0], "high": [1], "bins": 2, "names": ["a", "b"]}, "names"),
    ({"low": [float("nan")], "high": [1], "bins": 2}, "finite"),
])
def test_bad_parameters(params, match):
    with pytest.raises(ldpest.ParameterError, match=match):
        ldpest.mechanism("laplace-histogram", epsilon=1.0, **params)


def test_bad_data():
    mech = ldpest.mechanism("laplace-histogram", epsilon=1.0, low=[0, 0], high=[1, 1], bins=2)
    with pytest.raises(ldpest.DataError, match="3 column.*2-dimensional"):
        mech.privatize(np.zeros((4, 3)), rng=1)
    with pytest.raises(ldpest.DataError, match=r"1 value\(s\) are NaN.*row 2"):
        mech.privatize(np.array([[0.1, 0.2], [0.3, 0.3], [np.nan, 0.5]]), rng=1)
    with pytest.raises(ldpest.DataError, match="empty"):
        mech.privatize(np.zeros((0, 2)), rng=1)
    with pytest.raises(ldpest.DataError, match="width 3 but .* has 4 cells"):
        ldpest.Reports.from_array(np.zeros((2, 3)), mech)


def test_netcdf_round_trip(tmp_path, rng):
    mech = hist(1.0, 5, names=["score"])
    reports = mech.privatize(BETA.rvs(size=500, random_state=rng), rng=rng)
    reports.to_netcdf(tmp_path / "r.nc")
    back = ldpest.read_reports(tmp_path / "r.nc")
    xr.testing.assert_identical(ldpest.estimate(back), ldpest.estimate(reports))


def test_statistics_do_not_depend_on_the_projection(rng):
    """Aggregate once (e.g. a huge file), finalize with every projection."""
    mech = hist(1.0, 5)
    reports = mech.privatize(BETA.rvs(size=2000, random_state=rng), rng=rng)
    stats_ = ldpest.estimator("histogram-cdf", projection="none").aggregate(reports)
    for projection in ("none", "positive", "simplex"):
        est = ldpest.estimator("histogram-cdf", projection=projection)
        xr.testing.assert_identical(est.finalize(stats_), est.estimate(reports))
    with pytest.raises(ldpest.IncompatibleError, match="aggregated by"):
        ldpest.estimator("histogram-mean").finalize(stats_)


@pytest.mark.parametrize("shape", [(3000,), (3000, 1)])
def test_privatise_never_changes_the_data(shape, rng):
    """Issue 15: float64 data are used as given (no float64 copy), so they must never be written."""
    mech = ldpest.mechanism("laplace-histogram", epsilon=1.0, low=[0], high=[1], bins=8)
    x = rng.uniform(size=shape)
    before = x.copy()
    reports = mech.privatize(x, rng=rng)
    assert np.array_equal(x, before) and reports.values.shape == (3000, 8)
