"""Means of several numbers per device: ``multidimensional`` (issue 24; Wang et al. 2019, k of d
attributes per report at epsilon / k each).  Seeded; tolerances from the stated variances."""

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ldpest
from ldpest.testing import check_estimator, check_mechanism
from ldpest_numeric.multi import Multidimensional, wang_k

LDPEST = str(Path(sys.executable).with_name("ldpest"))
LOW, HIGH = [0.0, 0.0, -1.0], [500.0, 100.0, 1.0]


def make(epsilon=5.0, **params):
    return ldpest.mechanism("multidimensional", epsilon=epsilon, low=params.pop("low", LOW),
                            high=params.pop("high", HIGH), **params)


def data(n, rng):
    return np.column_stack([rng.uniform(0, 500, n), 100 * rng.beta(2, 5, n), np.where(rng.random(n) < 0.3, -1.0, 1.0)])


def test_k_is_wang_et_al_rule():
    assert [wang_k(e, 10) for e in (0.5, 2.4, 2.5, 5, 12.6, 40)] == [1, 1, 1, 2, 5, 10]
    assert make(5.0).k == 2 and make(1.0).k == 1 and make(30.0).k == 3


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0, 4.0])
@pytest.mark.parametrize("k", [1, 2])
def test_the_kit_proves_duchi_attributes(epsilon, k):
    mech = make(epsilon, low=[0, 0], high=[1, 10], base="duchi", k=k)
    assert mech.channel().satisfies(epsilon) and mech.proven_private()
    points = np.array([[0.0, 0.0], [1.0, 10.0], [0.5, 2.0], [0.2, 9.0]])
    check_mechanism(mech, np.concatenate([points, np.random.default_rng(1).uniform([0, 0], [1, 10], (30, 2))]))


@pytest.mark.parametrize("epsilon", [3.0, 6.0])
def test_the_kit_proves_hybrid_attributes_off_the_grid(epsilon):
    """Bounds that differ and do not start at 0, so codes drawn for the wrong bounds would show."""
    mech = make(epsilon, low=[0, 2], high=[1, 3.5], base="hybrid", k=2 if epsilon > 5 else 1, steps=4)
    assert mech.channel().satisfies(epsilon)
    check_mechanism(mech, np.random.default_rng(2).random((40, 2)) * [1, 1.5] + [0, 2])


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 5.0, 25.0, 700.0])
def test_large_settings_are_proven_and_tight(epsilon):
    mech = make(epsilon, low=[0] * 10, high=[1] * 10)
    assert mech.proven_private()
    if epsilon <= 25:  # the k attributes' ratios multiply to e^epsilon, within 1e-9
        assert mech.k * math.log(mech.level_ratio()) > epsilon * (1 - 1e-9)


class DataPicks(Multidimensional):
    """A broken probe: the first attribute is always picked when it is above its middle."""

    name = "data-picks-probe"

    def _privatize(self, x, rng):
        out = super()._privatize(x, rng)
        high = x[:, 0] > (self.params["low"][0] + self.params["high"][0]) / 2
        again = super()._privatize(x[high], rng)
        while True:
            missing = again[:, 0] != 0
            if not missing.any():
                break
            again[missing] = super()._privatize(x[high][missing], rng)
        out[high] = again
        return out


def test_the_kit_fails_picks_that_depend_on_the_data():
    from ldpest.testing import mechanism_checks
    from ldpest.testing.checks import run_checks

    for probe, fails in ((DataPicks, True), (Multidimensional, False)):
        mech = probe(epsilon=1.0, low=[0, 0], high=[1, 1], base="duchi", k=1)
        records = np.random.default_rng(3).random((20, 2))
        checks = [c for c in mechanism_checks(mech, records) if c.name == "exact_privacy"]
        assert bool(run_checks(checks, raise_on_failure=False).failures) == fails


def test_each_attribute_mean_is_unbiased_and_its_stderr_is_the_spread():
    mech = make(5.0)
    x = data(4000, np.random.default_rng(4))
    rng = np.random.default_rng(5)
    results = [ldpest.estimate(mech.privatize(x, rng=rng)) for _ in range(600)]
    values = np.array([r["unprojected"].values for r in results])
    stderr = np.array([r["stderr"].values for r in results])
    z = (values.mean(axis=0) - x.mean(axis=0)) / (values.std(axis=0, ddof=1) / math.sqrt(len(values)))
    assert np.abs(z).max() < 5
    # the stderr describes the population the users were drawn from: it adds the data's spread
    population = np.sqrt(values.var(axis=0, ddof=1) + x.var(axis=0) / len(x))
    ratio = population / np.sqrt((stderr ** 2).mean(axis=0))
    assert np.all(np.abs(ratio - 1) < 0.10), ratio


@pytest.mark.slow
@pytest.mark.parametrize("n", [100, 10_000])
def test_intervals_cover_each_attribute(n):
    mech = make(5.0)
    rng = np.random.default_rng(n)
    reps, truth = 1500, np.array([250.0, 100 * 2 / 7, 0.4])  # means of the laws data() draws from
    hits = []
    for _ in range(reps):
        result = ldpest.confidence_interval(ldpest.estimate(mech.privatize(data(n, rng), rng=rng)))
        hits.append((result["lower"].values <= truth) & (truth <= result["upper"].values))
    rates = np.mean(hits, axis=0)
    slack = 3 * math.sqrt(0.95 * 0.05 / reps)
    assert np.all((rates >= 0.94 - slack) & (rates <= 0.96 + slack)), rates


def test_n_one_gives_a_finite_worst_case_stderr():
    result = ldpest.estimate(make(5.0).privatize(data(1, np.random.default_rng(1)), rng=1))
    assert np.all(np.isfinite(result["stderr"].values)) and np.all(result["stderr"].values > 0)


def test_the_estimator_kit_passes():
    mech = make(5.0, low=[0, 0], high=[1, 1], base="duchi", k=1)
    check_estimator(ldpest.estimator("mean"), mech, np.random.default_rng(6).random((60, 2)), reps=200)


@pytest.mark.parametrize(("params", "message"), [
    ({"low": [0, 0], "high": [1]}, "same length"),
    ({"k": 4}, "at most d = 3"),
    ({"base": "laplace"}, "base must be one of"),
    ({"names": ["a"]}, "names must be a list of 3"),
])
def test_bad_parameters_are_refused(params, message):
    with pytest.raises(ldpest.ParameterError, match=message):
        make(5.0, **params)


def test_bad_data_and_reports_name_the_attribute_and_row():
    mech = make(5.0, names=["latency", "cpu", "score"])
    x = data(10, np.random.default_rng(7))
    x[4, 1] = 120.0
    with pytest.raises(ldpest.DataError, match="attribute 'cpu'.*outside") as info:
        mech.privatize(x)
    assert info.value.row == 4
    reports = mech.privatize(data(10, np.random.default_rng(8)), rng=1).values.copy()
    reports[2, 1] = reports[2, 0]
    with pytest.raises(ldpest.DataError, match="distinct attributes") as info:
        ldpest.Reports.from_array(reports, mech)
    assert info.value.row == 2


def test_the_cli_names_the_attributes_after_the_columns(tmp_path):
    x = data(3000, np.random.default_rng(9))
    (tmp_path / "d.csv").write_text("latency,cpu,score\n" + "\n".join(",".join(f"{v:.4f}" for v in row) for row in x))
    done = subprocess.run([LDPEST, "estimate", "d.csv", "--raw", "-c", "latency", "-c", "cpu", "-c", "score",
                           "-m", "multidimensional", "-e", "5", "-p", "low=[0, 0, -1]", "-p", "high=[500, 100, 1]",
                           "--seed", "1", "-o", "means.csv"], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "means.csv").read_text()
    assert text.splitlines()[0].startswith("attribute,mean") and "cpu" in text


def test_simulate_scores_the_attribute_means(tmp_path):
    done = subprocess.run([LDPEST, "simulate", "-m", "multidimensional", "-e", "5", "--n", "1e3,1e4", "--truth",
                           "beta(2,2)", "-p", "low=[0, 0]", "-p", "high=[1, 1]", "--reps", "4", "-o", "s.nc"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    import xarray as xr

    with xr.open_dataset(tmp_path / "s.nc") as study:
        errors = study[next(iter(study.data_vars))].values.ravel()
    assert np.all(np.isfinite(errors)) and errors[0] > errors[-1]  # the error falls with n


@pytest.mark.parametrize("epsilon", [2.0, 5.0])
def test_code_counts_in_blocks_equal_one_count_of_every_pair(epsilon, rng):
    """Across several blocks of 65,536 reports (and a partial one), k = 1 and k = 2."""
    mech = make(epsilon)
    values = np.asarray(mech.privatize(rng.random((150_001, mech.d)) * 0.5, rng=rng).values)
    width = max(a.code_count for a in mech.attributes)
    k = mech.k
    pairs = (values[:, :k].astype(np.int64) * width + values[:, k:]).ravel()
    expected = np.bincount(pairs, minlength=mech.d * width).reshape(mech.d, width)
    assert np.array_equal(mech.code_counts(values), expected)
    assert mech.code_counts(values).sum() == k * len(values)


@pytest.mark.parametrize(("value", "message"), [(np.nan, "NaN or infinite"), (np.inf, "NaN or infinite"),
                                                (-np.inf, "NaN or infinite"), (100.5, "attribute 'cpu'.*outside")])
@pytest.mark.parametrize("row", [0, 6, 9])
def test_the_bounds_check_finds_every_bad_number(value, message, row):
    """One min and one max per column decide; a NaN anywhere, an infinity or a number past a
    bound is refused with its row, and clip still refuses NaN."""
    x = data(10, np.random.default_rng(3))
    x[row, 1] = value
    for outside in ("refuse", "clip"):
        if outside == "clip" and "outside" in message:
            continue
        with pytest.raises(ldpest.DataError, match=message) as info:
            make(5.0, names=["latency", "cpu", "score"], outside=outside).privatize(x)
        assert info.value.row == row


def test_privatise_never_writes_the_data_and_takes_the_bounds_themselves():
    x = data(500, np.random.default_rng(4))
    x[:3] = [LOW, HIGH, [250.0, 0.0, 1.0]]
    before = x.copy()
    reports = make(2.0).privatize(x, rng=1)
    assert np.array_equal(x, before) and reports.values.shape == (500, 2)
    clipped = make(2.0, outside="clip").encode_data(x + [1.0, 0.0, 0.0])
    assert clipped[1, 0] == HIGH[0] and np.array_equal(x, before)


def test_each_attribute_codes_follow_its_own_channel_when_drawn_in_one_call():
    """Codes drawn in one call for all attributes (bounds differ) have, per attribute, the law of
    that attribute's base channel at the data's grid point: a chi-square test at each attribute."""
    from scipy import stats

    mech = make(2.0, base="duchi")
    n = 60_000
    x = np.tile([125.0, 90.0, -0.5], (n, 1))
    reports = np.asarray(mech.privatize(x, rng=11).values)
    for j, attribute in enumerate(mech.attributes):
        codes = reports[reports[:, 0] == j, 1]
        rows, weights = attribute.channel_mixture(float(x[0, j]))
        channel = attribute.base_channel()
        law = sum(w * np.asarray(channel.row(int(r)), dtype=np.float64) for r, w in zip(rows, weights, strict=True))
        observed = np.bincount(codes, minlength=len(law))
        assert stats.chisquare(observed, law * codes.size).pvalue > 1e-4
