"""Conformance kit for plugin authors: ``check_mechanism`` and ``check_estimator``.

Like scikit-learn's ``check_estimator``: a third-party author runs these in
their own test suite to show that a plugin honours ldpest's contract::

    from ldpest.testing import check_mechanism, check_estimator

    def test_my_mechanism():
        check_mechanism(MyMechanism(epsilon=1.0, categories=["a", "b", "c"]), data=["a", "b", "c"] * 100)

    # or one pytest test per check:
    @pytest.mark.parametrize("check", mechanism_checks(mech, data), ids=lambda c: c.name)
    def test_conformance(check):
        check()

Each check proves one promise and, when it fails, says what is wrong:

* ``spec_round_trip``: the spec is JSON, rebuilds an equal mechanism, and the
  mechanism is immutable;
* ``rejects_bad_epsilon``: epsilon <= 0, NaN or infinite raise ParameterError;
* ``rejects_bad_data``: NaN and empty data raise DataError;
* ``exact_privacy`` (finite output space): the channel is a stochastic matrix
  whose worst likelihood ratio is at most e^epsilon - a proof when the channel
  holds exact fractions (:class:`ldpest.Channel`, built from the sampler's
  integer thresholds with :mod:`ldpest.privacy.exact`) - and ``privatize`` really
  samples that channel (chi-square test);
* ``distribution_privacy`` (otherwise): for two inputs, the empirical
  probabilities of many events (quantile bins and tails of a discriminating
  projection, and the low-order-bit pattern of every coordinate: the
  floating-point attack of Mironov 2012) never differ by more than e^epsilon
  beyond sampling error, and no event possible under one input is impossible
  under the other;
* ``vectorised``: privatising 100x more records makes no more Python calls
  (no per-record loop), and returns one report per record;
* ``reproducible``: the same seed gives the same reports;
* ``reports_round_trip``: NetCDF round trip keeps values and spec;
* for estimators, ``unbiased`` (mean of the unprojected estimate over
  repeated privatisations of fixed data equals its value on the raw data,
  within 5 standard errors), ``stderr_calibrated`` (data redrawn as well as the
  noise), ``streaming_equals_one_shot`` (bit for bit), ``statistics_add_in_any_order``,
  ``result_schema`` and ``rejects_empty``.

Checks compare error *types*, never wording.  Statistical checks are seeded and
their tolerances come from sampling variances (5 standard errors).
"""

from __future__ import annotations

import cProfile
import json
import math
import pstats
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy import stats as scipy_stats

from .contract.base import Estimator, FrequencyOracle, Mechanism
from .contract.registry import mechanism_from_spec
from .contract.reports import Reports
from .io.sources import read_reports
from .util.errors import DataDroppedWarning, DataError, EstimateWarning, ParameterError
from .util.xarray import xr

Z = 5.0


class ConformanceError(AssertionError):
    """Raised by check_mechanism / check_estimator when a check fails."""


@dataclass
class Check:
    """One named check; call it to run it (raises ConformanceError on failure)."""

    name: str
    function: Callable[[], None]
    expected_failure: str | None = None

    def __call__(self) -> None:
        self.function()

    def __repr__(self) -> str:
        return f"<check {self.name}>"


@dataclass
class CheckResult:
    name: str
    passed: bool
    message: str = ""
    expected_failure: str | None = None


@dataclass
class Report:
    results: list[CheckResult] = field(default_factory=list)

    @property
    def failures(self) -> list[CheckResult]:
        return [r for r in self.results if not r.passed and r.expected_failure is None]

    def __str__(self) -> str:
        lines = []
        for r in self.results:
            status = "ok" if r.passed else ("expected failure" if r.expected_failure else "FAILED")
            lines.append(f"{r.name}: {status}" + (f" - {r.message}" if r.message else ""))
        return "\n".join(lines)


def _fail(message: str):
    raise ConformanceError(message)


def _run(checks: list[Check], raise_on_failure: bool) -> Report:
    report = Report()
    for check in checks:
        try:
            check()
        except Exception as exc:  # every failure is reported, not only the first
            message = f"{type(exc).__name__}: {exc}" if not isinstance(exc, ConformanceError) else str(exc)
            report.results.append(CheckResult(check.name, False, message, check.expected_failure))
        else:
            note = "passed although declared as an expected failure" if check.expected_failure else ""
            report.results.append(CheckResult(check.name, True, note, check.expected_failure))
    if raise_on_failure and report.failures:
        raise ConformanceError("conformance checks failed:\n" + "\n".join(
            f"  {r.name}: {r.message}" for r in report.failures))
    return report


def _expect_error(error: type, what: str, action) -> None:
    """``action()`` must raise ``error`` (the type, not the wording, is the contract)."""
    try:
        action()
    except error:
        return
    except Exception as exc:
        _fail(f"{what} raised {type(exc).__name__}, not ldpest.{error.__name__}")
    _fail(f"{what} was accepted")


def _rebuild(mechanism: Mechanism, **changes) -> Mechanism:
    params = {**mechanism.params, **changes}
    return type(mechanism)(**params)


# -- mechanism checks ---------------------------------------------------------------
def mechanism_checks(mechanism: Mechanism, data, *, expected_failures: dict | None = None,
                     seed: int = 20131205) -> list[Check]:
    """The checks of :func:`check_mechanism` as a list (for ``pytest.mark.parametrize``)."""
    expected_failures = expected_failures or {}
    data = np.asarray(data, dtype=object if np.asarray(data).dtype.kind in "OUS" else None)

    def spec_round_trip():
        text = json.dumps(mechanism.spec)
        rebuilt = mechanism_from_spec(json.loads(text))
        if rebuilt != mechanism:
            _fail(f"the spec {text} rebuilds {rebuilt!r}, which is not equal to {mechanism!r}")
        try:
            mechanism.epsilon = mechanism.epsilon * 2
        except AttributeError:
            pass
        else:
            _fail("the mechanism is mutable: setting .epsilon succeeded (a changed epsilon breaks its guarantee)")

    def rejects_bad_epsilon():
        for bad in (0.0, -1.0, float("nan"), float("inf")):
            _expect_error(ParameterError, f"epsilon={bad!r}", lambda bad=bad: _rebuild(mechanism, epsilon=bad))

    def rejects_bad_data():
        sample = data[:3]
        nan_data = np.array(sample, dtype=object)
        nan_data[1] = float("nan") if nan_data.ndim == 1 else np.full(nan_data.shape[1:], float("nan"))
        for label, bad in (("NaN data", nan_data), ("empty data", sample[:0])):
            _expect_error(DataError, label, lambda bad=bad: mechanism.privatize(_as_numeric_if_possible(bad),
                                                                        rng=np.random.default_rng(seed)))

    def exact_privacy():
        channel = mechanism.channel()
        matrix = channel.probabilities()
        if np.any(matrix < 0) or not np.allclose(matrix.sum(axis=1), 1.0, atol=1e-12):
            _fail("the channel's rows are not probability distributions")
        if not channel.satisfies(mechanism.epsilon):
            proof = "proven" if channel.exact else "float"
            _fail(f"the channel's worst log likelihood ratio is {channel.max_log_ratio():.17g} > epsilon = "
                  f"{mechanism.epsilon:.17g} ({proof} check)")
        _check_sampler_matches_channel(mechanism, channel, seed)

    def distribution_privacy():
        _distribution_privacy(mechanism, data, seed)

    def vectorised():
        small, large = _cycle(data, 100), _cycle(data, 10_000)
        calls_small = _python_calls(lambda: mechanism.privatize(small, rng=np.random.default_rng(seed)))
        calls_large = _python_calls(lambda: mechanism.privatize(large, rng=np.random.default_rng(seed)))
        if calls_large > 2 * calls_small + 50:
            _fail(f"privatize makes {calls_small} Python calls for 100 records but {calls_large} for 10000: "
                  "a per-record loop (vectorise over records)")
        reports = mechanism.privatize(large, rng=np.random.default_rng(seed))
        if not isinstance(reports, Reports) or reports.n != len(large):
            _fail(f"privatize of {len(large)} records returned {getattr(reports, 'n', reports)!r}, not one report each")

    def reproducible():
        a = mechanism.privatize(_cycle(data, 500), rng=np.random.default_rng(seed))
        b = mechanism.privatize(_cycle(data, 500), rng=np.random.default_rng(seed))
        if not np.array_equal(a.values, b.values):
            _fail("the same seed gave different reports: randomness not drawn from the rng argument")

    def reports_round_trip():
        reports = mechanism.privatize(_cycle(data, 300), rng=np.random.default_rng(seed))
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "reports.nc"
            reports.to_netcdf(path)
            back = read_reports(path)
        if back.spec != reports.spec or not np.array_equal(back.values, reports.values):
            _fail("reports changed in a NetCDF round trip")

    if _has_channel(mechanism):
        privacy = ("exact_privacy", exact_privacy)
    else:
        privacy = ("distribution_privacy", distribution_privacy)
    named = [("spec_round_trip", spec_round_trip), ("rejects_bad_epsilon", rejects_bad_epsilon),
             ("rejects_bad_data", rejects_bad_data), privacy, ("vectorised", vectorised),
             ("reproducible", reproducible), ("reports_round_trip", reports_round_trip)]
    return [Check(name, function, expected_failures.get(name)) for name, function in named]


def check_mechanism(mechanism: Mechanism, data, *, expected_failures: dict | None = None, seed: int = 20131205,
                    raise_on_failure: bool = True) -> Report:
    """Run every mechanism check; raise ConformanceError listing the failures.

    ``data``: valid raw data for the mechanism (at least two distinct records).
    ``expected_failures``: ``{check_name: reason}`` for checks known to fail.
    """
    return _run(mechanism_checks(mechanism, data, expected_failures=expected_failures, seed=seed), raise_on_failure)


def _has_channel(mechanism) -> bool:
    try:
        return mechanism.channel() is not None
    except ParameterError:  # too large to enumerate
        return False


def _as_numeric_if_possible(values):
    try:
        return np.asarray(values.tolist(), dtype=float)
    except (TypeError, ValueError):
        return values


def _cycle(data, n):
    data = np.asarray(data)
    reps = math.ceil(n / len(data))
    return np.concatenate([data] * reps)[:n]


def _python_calls(function) -> int:
    profile = cProfile.Profile()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataDroppedWarning)
        profile.runcall(function)
    return sum(stat[1] for stat in pstats.Stats(profile).stats.values())


def _report_keys(values: np.ndarray) -> list:
    values = np.asarray(values)
    return [tuple(row) for row in values.reshape(values.shape[0], -1).tolist()]


def _check_sampler_matches_channel(mechanism, channel, seed, draws=20_000):
    try:
        inputs = mechanism.encode_data(np.asarray(channel.inputs[:2], dtype=object))
    except (DataError, ValueError, TypeError):
        return  # channel inputs are not data (e.g. extreme points of a mixture); the matrix alone is checked
    del inputs
    index = {key: j for j, key in enumerate(_report_keys(channel.outputs))}
    rng = np.random.default_rng(seed)
    for i in range(min(2, len(channel.inputs))):
        reports = mechanism.privatize(np.asarray([channel.inputs[i]] * draws, dtype=object), rng=rng)
        keys = _report_keys(reports.values)
        unknown = [k for k in keys if k not in index]
        if unknown:
            _fail(f"privatize produced {len(unknown)} report(s) outside the channel's outputs, e.g. {unknown[0]}")
        counts = np.bincount([index[k] for k in keys], minlength=len(index))
        expected = channel.probabilities()[i] * draws
        keep = expected >= 5
        observed = np.append(counts[keep], counts[~keep].sum())
        target = np.append(expected[keep], expected[~keep].sum())
        if target[-1] == 0:
            observed, target = observed[:-1], target[:-1]
        if observed.size > 1 and scipy_stats.chisquare(observed, target * observed.sum() / target.sum()).pvalue < 1e-6:
            _fail(f"privatize does not sample the declared channel for input {channel.inputs[i]!r} "
                  "(chi-square p < 1e-6): the exact privacy proof does not apply to it")


def _distribution_privacy(mechanism, data, seed, draws=100_000):
    """Empirical likelihood ratios of many events for two inputs (see module doc)."""
    rng = np.random.default_rng(seed)
    data = np.asarray(data)
    first = data[0]
    other = next((x for x in data[1:] if not np.array_equal(x, first)), None)
    if other is None:
        _fail("data must hold at least two distinct records")
    epsilon = mechanism.epsilon
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataDroppedWarning)
        a = np.asarray(mechanism.privatize(np.asarray([first] * draws), rng=rng).values, dtype=float)
        b = np.asarray(mechanism.privatize(np.asarray([other] * draws), rng=rng).values, dtype=float)
    a, b = a.reshape(draws, -1), b.reshape(draws, -1)
    events = []
    direction = a.mean(axis=0) - b.mean(axis=0)
    if np.any(direction != 0):
        ta, tb = a @ direction, b @ direction
        edges = np.quantile(np.concatenate([ta, tb]), np.linspace(0, 1, 41)[1:-1])
        events += [("projection bin", np.searchsorted(edges, ta), np.searchsorted(edges, tb), len(edges) + 1)]
        for q in (0.001, 0.01, 0.05, 0.95, 0.99, 0.999):
            cut = np.quantile(np.concatenate([ta, tb]), q)
            side = (lambda t, c=cut: t <= c) if q < 0.5 else (lambda t, c=cut: t > c)
            events += [(f"projection tail {q}", side(ta).astype(int), side(tb).astype(int), 2)]
    for j in np.flatnonzero(np.any(a != b, axis=0))[:8]:
        la, lb = _lowest_bit(a[:, j]), _lowest_bit(b[:, j])
        low = min(la.min(), lb.min())
        events += [(f"low-order bits of coordinate {j}", la - low, lb - low, int(max(la.max(), lb.max()) - low) + 1)]
    for name, codes_a, codes_b, size in events:
        ca = np.bincount(codes_a, minlength=size).astype(float)
        cb = np.bincount(codes_b, minlength=size).astype(float)
        for big, small, direction_name in ((ca, cb, "first"), (cb, ca, "second")):
            impossible = (small == 0) & (big >= 30 * math.exp(epsilon))
            if impossible.any():
                _fail(f"{name}: an event seen {int(big[impossible].max())} times under the {direction_name} input "
                      f"never occurs under the other (infinite likelihood ratio; epsilon = {epsilon:g})")
            both = (big >= 30) & (small >= 30)
            if both.any():
                log_ratio = np.log(big[both] / small[both])
                slack = Z * np.sqrt(1 / big[both] + 1 / small[both])
                excess = log_ratio - epsilon - slack
                if np.any(excess > 0):
                    worst = int(np.argmax(excess))
                    _fail(f"{name}: empirical log likelihood ratio {log_ratio[worst]:.3f} exceeds epsilon = "
                          f"{epsilon:g} by more than sampling error ({slack[worst]:.3f})")


def _lowest_bit(values: np.ndarray) -> np.ndarray:
    """Exponent of the lowest set bit of each float (the granularity an attacker reads)."""
    mantissa, exponent = np.frexp(values)
    integer = np.abs((mantissa * 2.0 ** 53).astype(np.int64))
    trailing = np.zeros_like(integer)
    nonzero = integer != 0
    lowest = integer & -integer
    trailing[nonzero] = np.log2(lowest[nonzero]).astype(np.int64)
    return np.where(nonzero, exponent - 53 + trailing, 0).astype(np.int64)


# -- estimator checks ---------------------------------------------------------------
def default_target(estimator: Estimator, mechanism: Mechanism, data) -> tuple[str, np.ndarray]:
    """The unprojected estimate's conditional mean given the raw data, for the built-in families.

    Frequency oracles: empirical frequencies; histograms: empirical cell
    masses / cell volume; series: mean of the basis functions.
    """
    if isinstance(mechanism, FrequencyOracle):
        codes = mechanism.encode_data(data)
        return "unprojected", np.bincount(codes, minlength=len(mechanism.categories)) / len(codes)
    if hasattr(mechanism, "partition"):
        cells = mechanism.encode_data(data)
        masses = np.bincount(cells[cells >= 0], minlength=mechanism.partition.size) / len(cells)
        return "unprojected", mechanism.partition.to_grid(masses / mechanism.partition.cell_volume)
    if hasattr(mechanism, "basis"):
        x = mechanism.encode_data(data)
        return "coefficient", mechanism.basis.evaluate(x, mechanism.k).mean(axis=0)
    raise ConformanceError("no default target for this family: pass target=(variable, values)")


def estimator_checks(estimator: Estimator, mechanism: Mechanism, data, *, target=None,
                     expected_failures: dict | None = None, seed: int = 20131205, reps: int = 400) -> list[Check]:
    """The checks of :func:`check_estimator` as a list (for ``pytest.mark.parametrize``)."""
    expected_failures = expected_failures or {}
    data = np.asarray(data)

    def privatized(values, rng):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DataDroppedWarning)
            return mechanism.privatize(values, rng=rng)

    # skewed on purpose: a uniform truth is a fixed point of symmetric mechanisms,
    # where even an estimator that forgets to debias looks unbiased
    skewed = np.concatenate([data, np.repeat(data[:1], max(1, len(data) // 2), axis=0)])

    def unbiased():
        variable, expected = target if target is not None else default_target(estimator, mechanism, skewed)
        rng = np.random.default_rng(seed)
        draws = np.array([estimator.estimate(privatized(skewed, rng))[variable].values for _ in range(reps)])
        mean, se = draws.mean(axis=0), draws.std(axis=0, ddof=1) / math.sqrt(reps)
        z = np.abs(mean - expected) / np.where(se > 0, se, np.inf)
        bad = np.abs(mean - expected) > np.maximum(Z * se, 1e-12)
        if bad.any():
            worst = np.unravel_index(int(np.argmax(np.where(bad, z, 0))), z.shape)
            _fail(f"{variable} is biased: mean over {reps} privatisations of fixed data is {mean[worst]:.6g} at "
                  f"{worst}, expected {np.asarray(expected)[worst]:.6g} (|z| = {z[worst]:.1f} > {Z:g})")

    def stderr_calibrated():
        rng = np.random.default_rng(seed + 1)
        values, variances = [], []
        name = None
        for _ in range(reps):
            resampled = data[rng.integers(0, len(data), len(data))]  # the data are redrawn too
            result = estimator.estimate(privatized(resampled, rng))
            name = "unprojected" if "unprojected" in result else result.attrs["estimate_variable"]
            values.append(result[name].values)
            variances.append(result["stderr"].values ** 2)
        values, variances = np.array(values), np.array(variances).mean(axis=0)
        empirical = values.var(axis=0, ddof=1)
        informative = variances > 1e-300
        ratio = empirical[informative] / variances[informative]
        tolerance = Z * math.sqrt(2 / (reps - 1)) + 2.0 / len(data)
        if np.any(np.abs(ratio - 1) > tolerance):
            _fail("stderr is not calibrated: empirical variance / stderr^2 ranges "
                  f"{ratio.min():.3f}..{ratio.max():.3f}, "
                  f"outside 1 +- {tolerance:.3f}")

    def streaming_equals_one_shot():
        reports = privatized(_cycle(data, 5000), np.random.default_rng(seed))
        xr.testing.assert_identical(estimator.estimate(reports.chunks(333)), estimator.estimate(reports))

    def statistics_add_in_any_order():
        reports = privatized(_cycle(data, 3000), np.random.default_rng(seed))
        parts = [estimator.aggregate(c) for c in reports.chunks(250)]
        forward = sum(parts)
        backward = sum(reversed(parts))
        xr.testing.assert_identical(estimator.finalize(forward), estimator.finalize(backward))
        if forward.n != reports.n:
            _fail(f"statistics count {forward.n} reports, not {reports.n}")

    def result_schema():
        result = estimator.estimate(privatized(_cycle(data, 500), np.random.default_rng(seed)))
        if not isinstance(result, xr.Dataset):
            _fail(f"estimate returned {type(result).__name__}, not an xarray.Dataset")
        required = {"mechanism", "estimator", "epsilon", "n", "projection", "mechanism_spec", "ldpest_version"}
        missing = required - set(result.attrs)
        if missing:
            _fail(f"result attrs lack {sorted(missing)}")
        variable = result.attrs.get("estimate_variable")
        if variable not in ("probability", "density") or "stderr" not in result:
            _fail("result must hold 'probability' or 'density' and 'stderr'")

    def rejects_empty():
        reports = privatized(_cycle(data, 10), np.random.default_rng(seed))
        _expect_error(DataError, "estimating zero reports", lambda: estimator.estimate(reports[0:0]))

    named = [("unbiased", unbiased), ("stderr_calibrated", stderr_calibrated),
             ("streaming_equals_one_shot", streaming_equals_one_shot),
             ("statistics_add_in_any_order", statistics_add_in_any_order), ("result_schema", result_schema),
             ("rejects_empty", rejects_empty)]
    return [Check(name, _small_samples_expected(function), expected_failures.get(name)) for name, function in named]


def _small_samples_expected(check: Callable[[], None]) -> Callable[[], None]:
    """The estimator checks estimate hundreds of small samples on purpose; the EstimateWarning that
    a small sample tells little is expected there, and is not shown."""
    def run() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EstimateWarning)
            check()
    return run


def check_estimator(estimator: Estimator, mechanism: Mechanism, data, *, target=None,
                    expected_failures: dict | None = None, seed: int = 20131205, reps: int = 400,
                    raise_on_failure: bool = True) -> Report:
    """Run every estimator check with reports of ``mechanism`` on ``data``.

    ``target``: ``(variable, values)``, the unprojected estimate's mean given
    the raw data, if the family is not a built-in one (see :func:`default_target`);
    the ``unbiased`` check uses ``data`` plus ``len(data) // 2`` copies of its
    first record (so the truth is not uniform), and ``target`` must be computed on that.
    """
    checks = estimator_checks(estimator, mechanism, data, target=target, expected_failures=expected_failures,
                              seed=seed, reps=reps)
    return _run(checks, raise_on_failure)
