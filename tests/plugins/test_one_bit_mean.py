"""The numeric example plugin (plugins/ldpest-one-bit-mean), installed with pip as a third party
would: a 0-d result with its own exact interval, through privatize, estimate, the kit, simulate,
plot and the CLI (issue 22)."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from plugin_fixtures import ROOT, pip_install_target
from scipy import stats
from typer.testing import CliRunner

import ldpest
from ldpest.testing import check_estimator, check_mechanism

PLUGIN = ROOT / "plugins" / "ldpest-one-bit-mean"
LDPEST = str(Path(sys.executable).with_name("ldpest"))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return pip_install_target(PLUGIN, tmp_path_factory.mktemp("site"))


@pytest.fixture(autouse=True)
def installed(site, monkeypatch, fresh_registry):
    monkeypatch.syspath_prepend(str(site))
    ldpest.reset_registry()


def make(epsilon=1.0, low=0.0, high=10.0, **params):
    return ldpest.mechanism("one-bit-mean", epsilon=epsilon, low=low, high=high, **params)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_the_kit_passes(epsilon):
    data = np.concatenate([[0.0, 10.0], np.random.default_rng(1).uniform(0, 10, 120)])
    mech = make(epsilon)
    check_mechanism(mech, data)
    check_estimator(ldpest.estimator("one-bit-mean"), mech, data, reps=200)


def test_a_mean_is_a_0d_result_with_its_units_and_its_own_exact_interval(rng):
    x = rng.uniform(0, 10, 20_000)
    result = ldpest.confidence_interval(ldpest.estimate(make(units="s").privatize(x, rng=rng)))
    assert result["mean"].dims == () and result["mean"].attrs["units"] == "s"
    assert result["stderr"].attrs == {**result["stderr"].attrs, "estimate": "mean", "method": "analytic"}
    assert result["lower"].attrs["estimate"] == "mean" and result["lower"].attrs["method"].startswith("exact")
    assert result["lower"].attrs["units"] == "s" and result.attrs["interval_estimate"] == "mean"
    assert abs(float(result["mean"]) - x.mean()) < 5 * float(result["stderr"])
    assert float(result["lower"]) < float(result["mean"]) < float(result["upper"])


@pytest.mark.parametrize("n", [1, 10, 30, 1000])
@pytest.mark.parametrize("truth", [0.0, 2.5, 10.0])
def test_the_exact_interval_covers_at_every_n_and_on_the_bounds(n, truth):
    """Every count c of ones, weighted by its binomial probability: the coverage of the interval
    that the real estimator and confidence_interval give (the kit of test_intervals.py)."""
    mech, estimator = make(), ldpest.estimator("one-bit-mean")
    p = mech.p
    pi = (1 - p) + (2 * p - 1) * truth / 10
    coverage = 0.0
    for c in range(n + 1):
        stats_ = ldpest.SufficientStats(estimator.statistics_spec_json, mech.spec_json, n,
                                        {"ones": np.array(c, dtype=np.int64)})
        with_ci = ldpest.confidence_interval(estimator.finalize(stats_), 0.95)
        assert float(with_ci["stderr"]) > 0
        if float(with_ci["lower"]) <= truth <= float(with_ci["upper"]):
            coverage += stats.binom.pmf(c, n, pi)
    assert coverage >= 0.95


def test_mean_and_variance_match_the_closed_forms(rng):
    """Over repetitions: mean within 5 standard errors of the truth, and the empirical variance
    within 5 standard errors of (high - low)^2 pi (1 - pi) / (n (2p - 1)^2)."""
    mech, n, reps = make(2.0), 400, 2000
    estimator = ldpest.estimator("one-bit-mean")
    x = rng.beta(5, 2, n) * 10
    draws = np.array([float(estimator.estimate(mech.privatize(x, rng=rng))["mean"]) for _ in range(reps)])
    p = mech.p
    pis = (1 - p) + (2 * p - 1) * x / 10
    variance = 100 * np.sum(pis * (1 - pis)) / (n * (2 * p - 1)) ** 2  # given the fixed data
    assert abs(draws.mean() - x.mean()) < 5 * math.sqrt(variance / reps)
    assert abs(draws.var(ddof=1) / variance - 1) < 5 * math.sqrt(2 / (reps - 1))


def test_without_the_plugin_the_interval_comes_from_the_written_stderr(rng, tmp_path, monkeypatch, site):
    result = ldpest.estimate(make().privatize(rng.uniform(0, 10, 500), rng=rng))
    path = tmp_path / "mean.nc"
    ldpest.io.result_files.write_result(result, path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(site)])
    for module in [m for m in sys.modules if m.startswith("ldpest_one_bit_mean")]:
        monkeypatch.delitem(sys.modules, module)
    ldpest.reset_registry()
    back = ldpest.confidence_interval(ldpest.io.result_files.read_result(path))
    assert back["lower"].attrs["method"] == "normal" and back["lower"].attrs["estimate"] == "mean"


def test_the_cli_prints_writes_and_plots_a_mean(tmp_path, site):
    data = tmp_path / "latencies.csv"
    data.write_text("latency\n" + "\n".join(f"{v:.3f}" for v in np.random.default_rng(2).uniform(0, 500, 3000)))
    env = {**os.environ, "PYTHONPATH": str(site)}

    def run(*args):
        return subprocess.run([LDPEST, *map(str, args)], capture_output=True, text=True, env=env)

    out = tmp_path / "mean.nc"
    shown = run("estimate", data, "--raw", "-c", "latency", "-m", "one-bit-mean", "-e", "1", "-p", "low=0",
                "-p", "high=500", "-p", 'units="ms"', "--seed", "1", "-o", out)
    assert shown.returncode == 0, shown.stderr
    assert "mean [ms] by one-bit-mean" in shown.stdout and "exact (Clopper-Pearson" in shown.stdout
    assert "internal error" not in shown.stderr
    for suffix in (".csv", ".json"):
        assert run("estimate", data, "--raw", "-c", "latency", "-m", "one-bit-mean", "-e", "1", "-p", "low=0",
                   "-p", "high=500", "--seed", "1", "-o", tmp_path / f"mean{suffix}").returncode == 0
    table = (tmp_path / "mean.csv").read_text().splitlines()
    assert table[0].split(",") == ["mean", "stderr", "ones", "lower", "upper"] and len(table) == 2
    assert json.loads((tmp_path / "mean.json").read_text())["attrs"]["estimate_variable"] == "mean"
    picture = run("plot", out, "-o", tmp_path / "mean.png")
    assert picture.returncode == 0 and (tmp_path / "mean.png").stat().st_size > 5000
    described = run("plugins", "one-bit-mean")
    assert "units" in described.stdout and "units of the data" in described.stdout
    assert "(required): smallest possible value of the data" in described.stdout


def test_a_mean_plot_draws_one_point_with_its_own_interval(rng):
    from ldpest.plotting import draw_result

    result = ldpest.estimate(make(units="s").privatize(rng.uniform(0, 10, 2000), rng=rng))
    figure = draw_result(result)
    [axes] = figure.axes
    labels = [text.get_text() for text in axes.get_legend().get_texts()]
    assert labels == ["mean; mean, 95% interval (exact (Clopper-Pearson on the count of ones))"]
    assert axes.get_ylabel() == "mean [s]"
    import matplotlib.pyplot as plt

    plt.close(figure)


def test_simulate_uses_the_plugins_family(tmp_path):
    from ldpest.cli import app

    result = CliRunner().invoke(app, ["simulate", "-m", "one-bit-mean", "-p", "low=0", "-p", "high=10", "-e", "1",
                                      "--n", "1e3,1e5", "--truth", "beta(5,2)", "--reps", "200",
                                      "-o", str(tmp_path / "study.nc"), "--plot", str(tmp_path / "study.png")])
    assert result.exit_code == 0, result.output
    study = ldpest.io.result_files.read_result(tmp_path / "study.nc")
    assert study.attrs["family"] == "one-bit-mean" and study.attrs["theoretical_slope"] == -1.0
    assert study.attrs["simulation"] == "exact aggregate" and study.attrs["metric"] == "squared error of the mean"
    mech = make()
    p = mech.p
    mu = 10 * stats.beta(5, 2).mean()
    for n in (1000, 100_000):
        pi = (1 - p) + (2 * p - 1) * mu / 10
        expected = 100 * pi * (1 - pi) / (n * (2 * p - 1) ** 2)  # E (mean - mu)^2, exactly
        row = study.sel(epsilon=1.0, n=n)
        assert abs(float(row["mean_error"]) - expected) < 5 * float(row["stderr_error"])
    assert (tmp_path / "study.png").stat().st_size > 5000
