"""histogram-likelihood: the maximum-likelihood densities of oracle-histogram cells (docs/histograms.md,
"Cells sent by a frequency oracle")."""

import warnings

import numpy as np
import pytest
import xarray as xr
from typer.testing import CliRunner

import ldpest
from ldpest import IncompatibleError, ParameterError, Reports
from ldpest.cli import app
from ldpest.testing import check_estimator

# oracles whose reports have a likelihood the estimator maximises: by their counts (the first two) or by passes
ORACLES = ["randomized-response", "hadamard-response", "unary-randomized-response", "subset-selection",
           "local-hashing"]


def box(oracle, epsilon=2.0, **partition):
    partition = partition or {"low": [0], "high": [1], "bins": 6}
    return ldpest.mechanism("oracle-histogram", epsilon=epsilon, oracle=oracle, **partition)


def points(n, seed=1, d=1):
    """A skewed law with about 8% of the points outside [0, 1]^d."""
    return np.random.default_rng(seed).beta(2, 5, (n, d)).squeeze() * 1.15


@pytest.mark.parametrize("oracle", ORACLES)
def test_the_cells_are_the_oracles_likelihood_estimate_divided_by_the_volume(oracle):
    """Bit for bit the frequency-likelihood result of the same reports read as the oracle's, the outside
    category's as outside_* attributes; in a 2-D partition, on its grid."""
    mech = box(oracle, low=[0, 0], high=[1, 1], bins=[3, 2])
    reports = mech.privatize(points(4000, d=2), rng=2)
    histogram = ldpest.estimate(reports, "histogram-likelihood")
    frequency = ldpest.estimate(Reports.trusted(reports.values, mech.oracle), "frequency-likelihood")
    volume = histogram.attrs["cell_volume"]
    assert volume == pytest.approx(1 / 6) and histogram["density"].dims == ("x1", "x2")
    probability = frequency["probability"].values
    np.testing.assert_array_equal(histogram["mass"].values.reshape(-1), probability[:-1])
    np.testing.assert_array_equal(histogram["density"].values.reshape(-1), probability[:-1] / volume)
    np.testing.assert_allclose(histogram["unprojected"].values.reshape(-1) * volume,
                               frequency["unprojected"].values[:-1], rtol=1e-14)
    assert histogram.attrs["outside_mass"] == probability[-1]
    for key in ("projection", "mle_passes", "mle_converged", "mle_likelihood_gap"):
        if key in frequency.attrs:
            assert histogram.attrs[key] == frequency.attrs[key], key
    assert histogram.attrs["projection"] == "mle" and histogram.attrs["oracle"] == oracle
    assert histogram["mass"].values.sum() + histogram.attrs["outside_mass"] == pytest.approx(1.0, abs=1e-12)


def test_it_takes_several_passes_where_counts_do_not_suffice_and_one_where_they_do():
    reports = box("unary-randomized-response").privatize(points(3000), rng=3)
    found = ldpest.estimate(reports, "histogram-likelihood")
    assert found.attrs["mle_passes"] >= 3 and found.attrs["mle_converged"] == 1
    assert found.attrs["mle_likelihood_gap"] <= 1e-3
    counted = ldpest.estimate(box("randomized-response").privatize(points(3000), rng=3), "histogram-likelihood")
    assert counted.attrs["mle_passes"] == 1


@pytest.mark.parametrize("oracle", ["unary-randomized-response", "subset-selection"])
def test_it_passes_the_estimator_kit(oracle):
    check_estimator(ldpest.estimator("histogram-likelihood"), box(oracle), points(200), reps=200)


def test_every_way_of_reading_reports_gives_the_same_result(tmp_path):
    reports = box("subset-selection").privatize(points(5000), rng=np.random.default_rng(5))
    expected = ldpest.estimate(reports, "histogram-likelihood")
    assert expected.attrs["mle_passes"] >= 3  # a seed whose fit reads the reports several times (seed 4: 2 passes)
    path = tmp_path / "reports.nc"
    reports.to_netcdf(path)
    estimator = ldpest.estimator("histogram-likelihood")
    for result in (ldpest.estimate(list(reports.chunks(777)), estimator),
                   ldpest.estimate(ldpest.open_reports(path), estimator),
                   ldpest.estimate(ldpest.open_reports(path), estimator, scheduler="threads"),
                   ldpest.estimate(ldpest.read_reports(path, chunks=1000), estimator)):
        xr.testing.assert_identical(result, expected)
    with pytest.raises(ParameterError, match="reads the reports several times"):
        ldpest.estimate((chunk for chunk in reports.chunks(1000)), estimator)


def test_intervals_are_the_oracles_own_for_the_unbiased_densities():
    mech = box("hadamard-response")
    reports = mech.privatize(points(2000), rng=5)
    likelihood = ldpest.confidence_interval(ldpest.estimate(reports, "histogram-likelihood"))
    mean = ldpest.confidence_interval(ldpest.estimate(reports, "histogram-mean"))
    np.testing.assert_array_equal(likelihood["lower"].values, mean["lower"].values)
    np.testing.assert_array_equal(likelihood["upper"].values, mean["upper"].values)
    assert likelihood.attrs["interval_method"] == mean.attrs["interval_method"]


def test_reports_it_cannot_use_are_refused_clearly():
    laplace_cells = ldpest.mechanism("laplace-histogram", epsilon=1.0, low=[0], high=[1], bins=4)
    with pytest.raises(IncompatibleError, match="does not accept reports of mechanism 'laplace-histogram'"):
        ldpest.estimate(laplace_cells.privatize(points(100), rng=1), "histogram-likelihood")
    one_hot = box("laplace").privatize(points(100), rng=1)
    with pytest.raises(IncompatibleError, match=r"'histogram-likelihood' \(oracle 'laplace'\).*use 'histogram-mean'"):
        ldpest.estimate(one_hot, "histogram-likelihood")
    with pytest.raises(ParameterError, match="max_passes"):
        ldpest.estimator("histogram-likelihood", max_passes=1)


def test_the_cli_estimates_a_report_file(tmp_path):
    runner = CliRunner()
    data = tmp_path / "ages.csv"
    data.write_text("age\n" + "\n".join(f"{a:.2f}" for a in 18 + 80 * points(2000)) + "\n")
    reports, out = tmp_path / "reports.nc", tmp_path / "density.nc"
    made = runner.invoke(app, ["privatize", str(data), "-c", "age", "-m", "oracle-histogram", "-e", "2", "-p",
                               "low=[18]", "-p", "high=[90]", "-p", "bins=6", "-p", 'oracle="subset-selection"',
                               "--seed", "1", "-o", str(reports)])
    assert made.exit_code == 0, made.output
    result = runner.invoke(app, ["estimate", str(reports), "--estimator", "histogram-likelihood", "-o", str(out)])
    assert result.exit_code == 0, result.output
    ds = ldpest.io.result_files.read_result(out)
    assert ds.attrs["estimator"] == "histogram-likelihood" and ds.attrs["mle_converged"] == 1
    assert float(ds["mass"].sum()) + ds.attrs["outside_mass"] == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("n", [1, 10, 30])
@pytest.mark.parametrize("epsilon", [0.05, 50.0])
@pytest.mark.parametrize("oracle", ["unary-randomized-response", "subset-selection"])
def test_edges_equal_the_oracles_likelihood_estimate_and_give_masses_that_sum_to_one(oracle, n, epsilon):
    """Every point in the first cell (a boundary truth), at tiny n and the extreme epsilons."""
    mech = box(oracle, epsilon)
    reports = mech.privatize(np.full(n, 0.01), rng=np.random.default_rng(6))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="the estimate is uninformative", category=ldpest.EstimateWarning)
        histogram = ldpest.estimate(reports, "histogram-likelihood")
        frequency = ldpest.estimate(Reports.trusted(reports.values, mech.oracle), "frequency-likelihood")
    mass = histogram["mass"].values
    np.testing.assert_array_equal(mass, frequency["probability"].values[:-1])
    assert np.all(mass >= 0) and mass.sum() + histogram.attrs["outside_mass"] == pytest.approx(1.0, abs=1e-12)
    assert np.all(histogram["stderr"].values > 0)
