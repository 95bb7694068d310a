"""ldpest.testing: every built-in plugin passes; each broken one fails, saying why."""

import sys
from pathlib import Path

import numpy as np
import pytest
from plugin_fixtures import EXAMPLE_PLUGIN, pip_install_target

import ldpest
import ldpest.privacy.noise  # noqa: F401  (used by the broken plugin)
from ldpest.testing import (
    ConformanceError,
    check_estimator,
    check_mechanism,
    estimator_checks,
    mechanism_checks,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
import broken_plugin  # noqa: E402

LABELS = ["a", "b", "c"] * 40
RNG = np.random.default_rng(3)
POINTS_1D = RNG.uniform(0, 1, 200)
POINTS_2D = RNG.uniform(-1, 1, (200, 2))

BUILT_IN = [
    ("randomized-response", {"categories": ["a", "b", "c"]}, LABELS, ["frequency", "frequency-likelihood"]),
    ("unary-randomized-response", {"categories": ["a", "b", "c"]}, LABELS, ["frequency", "frequency-likelihood"]),
    ("laplace", {"categories": ["a", "b", "c"]}, LABELS, ["frequency"]),
    ("laplace-histogram", {"low": [0], "high": [1], "bins": 4}, POINTS_1D, ["histogram-mean", "histogram-cdf"]),
    ("laplace-histogram", {"low": [-1, -1], "high": [1, 1], "bins": 3}, POINTS_2D, ["histogram-cdf"]),
    ("laplace-histogram", {"radius": 1.0, "h": 0.5, "d": 2}, POINTS_2D * 0.7, ["histogram-mean"]),
    ("linf-sampling", {"basis": "trigonometric", "k": 4}, POINTS_1D, ["series"]),
    ("linf-sampling", {"basis": "walsh", "k": 3}, POINTS_1D, ["series"]),
    ("laplace-series", {"basis": "trigonometric", "k": 3}, POINTS_1D, ["series"]),
]


def built_in_mechanism_checks():
    for case, (name, params, data, _) in enumerate(BUILT_IN):
        mech = ldpest.mechanism(name, epsilon=1.0, **params)
        for check in mechanism_checks(mech, data):
            yield pytest.param(check, id=f"{case}-{name}-{check.name}")


def built_in_estimator_checks():
    for case, (name, params, data, estimators) in enumerate(BUILT_IN):
        mech = ldpest.mechanism(name, epsilon=1.0, **params)
        for estimator in estimators:
            for check in estimator_checks(ldpest.estimator(estimator), mech, data, reps=200):
                yield pytest.param(check, id=f"{case}-{name}-{estimator}-{check.name}")


@pytest.mark.parametrize("check", list(built_in_mechanism_checks()))
def test_built_in_mechanisms_conform(check):
    check()


@pytest.mark.parametrize("check", list(built_in_estimator_checks()))
def test_built_in_estimators_conform(check):
    check()


def test_third_party_example_plugin_conforms(tmp_path_factory, monkeypatch, fresh_registry):
    monkeypatch.syspath_prepend(str(pip_install_target(EXAMPLE_PLUGIN, tmp_path_factory.mktemp("site"))))
    for epsilon in (0.05, 12.0):  # its sampler draws bits by words_below: the law at the extremes too
        extreme = ldpest.mechanism("optimized-unary-encoding", epsilon=epsilon, categories=["a", "b", "c"])
        report = check_mechanism(extreme, LABELS)
        assert [r.name for r in report.results if r.passed] == [r.name for r in report.results], epsilon
    mech = ldpest.mechanism("optimized-unary-encoding", epsilon=1.0, categories=["a", "b", "c"])
    report = check_mechanism(mech, LABELS)
    assert [r.name for r in report.results if r.passed] == [r.name for r in report.results]
    check_estimator(ldpest.estimator("frequency"), mech, LABELS, reps=200)
    check_estimator(ldpest.estimator("frequency-likelihood"), mech, LABELS, reps=200)


@pytest.fixture
def broken(fresh_registry):
    ldpest.register_plugin(broken_plugin.Plugin(), name="broken-example")


@pytest.mark.parametrize("name,check,message", [
    ("broken-overconfident", "exact_privacy", "worst log likelihood ratio is 2"),
    ("broken-lying-channel", "exact_privacy", "does not sample the declared channel"),
    ("broken-float-laplace", "distribution_privacy", "low-order bits of coordinate"),
    ("broken-half-noise", "distribution_privacy", "exceeds epsilon"),
    ("broken-looping", "vectorised", "per-record loop"),
    ("broken-global-random", "reproducible", "same seed gave different reports"),
    ("broken-independent-covariance", "frequency_moments", "frequency_cross_covariance gives n Cov("),
    ("broken-column-covariance", "frequency_moments", "cross_covariance_columns is True, but"),
    ("broken-bit-columns", "bit_columns", "declares 1 ones per report"),
    ("broken-lattice-step", "lattice_columns", "reports hold values off it"),
    ("broken-lattice-sums", "lattice_columns", "they are ['sums'], not those sums"),
    ("broken-linear-hash", "linear_hash", "not the supports"),
    ("broken-xxh32", "decimal_xxh32", "not the supports"),
    ("broken-alphabet", "report_alphabet", "declares 2 distinct reports; the channel has 3 outputs"),
    ("broken-alphabet-sampled", "report_alphabet", "declares 2 distinct reports; 5000 privatised records gave 3"),
    ("broken-late-covariance", "frequency_moments", "n Cov('c', "),
    ("broken-late-variance", "frequency_moments", "frequency_variance at 'c'"),
    ("broken-late-factors", "covariance_factors", "frequency_cross_covariance_factors give n Cov('b', 'c') = "),
])
def test_broken_mechanisms_fail_with_a_message_saying_what_is_wrong(broken, name, check, message):
    mech = ldpest.mechanism(name, epsilon=1.0, categories=["a", "b", "c"])
    report = check_mechanism(mech, LABELS, raise_on_failure=False)
    failed = {r.name: r.message for r in report.failures}
    assert check in failed, str(report)
    assert message in failed[check], failed[check]
    with pytest.raises(ConformanceError, match=check):
        check_mechanism(mech, LABELS)


def test_mironov_distinguisher_fails_on_ldpest_laplace_and_succeeds_on_naive_float_laplace(broken):
    """The floating-point attack: outputs of naive float Laplace reveal the input through their
    low-order bits; ldpest's lattice noise gives every input the same output lattice."""
    for name, leaks in (("laplace", False), ("broken-float-laplace", True)):
        mech = ldpest.mechanism(name, epsilon=1.0, categories=["a", "b"])
        rng = np.random.default_rng(0)
        zero = mech.privatize(["b"] * 200_000, rng=rng).values[:, 0]  # coordinate "a" under input b: 0 + noise
        one = mech.privatize(["a"] * 200_000, rng=rng).values[:, 0]  # under input a: 1 + noise
        from ldpest.testing.privacy import lowest_bit as _lowest_bit

        fine = lambda z: np.mean(_lowest_bit(z) < -53)  # noqa: E731  (granularity finer than 1 + noise allows)
        if leaks:
            assert fine(zero) > 0.1 and fine(one) == 0.0  # a near-certain distinguisher
        else:
            assert fine(zero) == fine(one) == 0.0
            assert set(np.unique(_lowest_bit(zero))) <= set(range(-60, 10)) and _lowest_bit(one).min() >= -30


@pytest.mark.parametrize("name,check,message", [
    ("broken-naive-frequency", "unbiased", "is biased"),
    ("broken-overconfident-stderr", "stderr_calibrated", "stderr is not calibrated"),
    ("broken-extra-statistics", "frequency_statistics", "are not the oracle's frequency_statistics"),
])
def test_broken_estimators_fail_with_a_message(broken, name, check, message):
    mech = ldpest.mechanism("randomized-response", epsilon=1.0, categories=["a", "b", "c"])
    report = check_estimator(ldpest.estimator(name), mech, LABELS, reps=200, raise_on_failure=False)
    failed = {r.name: r.message for r in report.failures}
    assert check in failed and message in failed[check], str(report)


def test_an_estimator_declaring_the_wrong_lattice_fails_the_kit(broken):
    """histogram-mean's own statistics with a lattice twice as coarse as the noise's declared: the kit's
    lattice_statistics check finds reports off it (the honest estimator passes it: test_built_in_estimators_conform)."""
    mech = ldpest.mechanism("laplace-histogram", epsilon=1.0, low=[0.0], high=[1.0], bins=4)
    points = np.linspace(0.05, 0.95, 12)
    report = check_estimator(ldpest.estimator("broken-histogram-lattice"), mech, points, reps=200,
                             raise_on_failure=False)
    failed = {r.name: r.message for r in report.failures}
    assert "reports hold values off it" in failed.get("lattice_statistics", ""), str(report)
    honest = check_estimator(ldpest.estimator("histogram-mean"), mech, points, reps=200, raise_on_failure=False)
    assert "lattice_statistics" in {r.name for r in honest.results if r.passed}, str(honest)


def test_an_estimator_declaring_the_wrong_threshold_fails_the_kit(broken):
    """histogram-cdf's counts of values at most 1/2, declared as counts at most 1/4: the kit's threshold_statistics
    check finds they differ; the honest estimator passes it."""
    mech = ldpest.mechanism("laplace-histogram", epsilon=1.0, low=[0.0], high=[1.0], bins=4)
    points = np.linspace(0.05, 0.95, 12)
    report = check_estimator(ldpest.estimator("broken-cdf-threshold"), mech, points, reps=200, raise_on_failure=False)
    failed = {r.name: r.message for r in report.failures}
    assert "not those counts" in failed.get("threshold_statistics", ""), str(report)
    honest = check_estimator(ldpest.estimator("histogram-cdf"), mech, points, reps=200, raise_on_failure=False)
    assert "threshold_statistics" in {r.name for r in honest.results if r.passed}, str(honest)


def test_declared_expected_failures_do_not_raise(broken):
    mech = ldpest.mechanism("broken-looping", epsilon=1.0, categories=["a", "b", "c"])
    report = check_mechanism(mech, LABELS, expected_failures={"vectorised": "reference implementation"})
    [result] = [r for r in report.results if r.name == "vectorised"]
    assert not result.passed and result.expected_failure == "reference implementation"
    assert "expected failure" in str(report)
