"""The kit's estimator checks (:func:`estimator_checks`, :func:`check_estimator`)."""

from __future__ import annotations

import math
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..contract.base import Estimator, FrequencyOracle, Mechanism
from ..contract.registry import family_of
from ..contract.results import confidence_interval, estimate_variable, uncertainty_of
from ..io.result_files import read_result, result_table, write_result
from ..util.errors import DataError, EstimateWarning, LdpestError, ParameterError
from ..util.xarray import xr
from .checks import Check, ConformanceError, Report, Z, expect_error, fail, run_checks
from .mechanisms import SEED, cycle, lattice_sums_match, require_one_column_each
from .privacy import privatize_quietly

REQUIRED_ATTRS = {"mechanism", "estimator", "epsilon", "n", "projection", "mechanism_spec", "estimator_spec",
                  "estimate_variable", "ldpest_version"}


def default_target(estimator: Estimator, mechanism: Mechanism, data) -> tuple[str, np.ndarray]:
    """The mean of the estimator's result over privatisations of fixed ``data``: what the
    mechanism's family says (:meth:`ldpest.Family.expected`; the built-in families: empirical
    frequencies, cell masses per volume, mean basis values)."""
    try:
        return family_of(mechanism).expected(estimator, mechanism, data)
    except (NotImplementedError, ParameterError) as exc:
        raise ConformanceError(f"no default target ({exc}): pass target=(variable, values) or target(data)") from None


def estimator_checks(estimator: Estimator, mechanism: Mechanism, data, *, target=None,
                     expected_failures: dict | None = None, seed: int = SEED, reps: int = 400) -> list[Check]:
    """The checks of :func:`check_estimator` as a list (for ``pytest.mark.parametrize``)."""
    expected_failures = expected_failures or {}
    data = np.asarray(data)

    # skewed on purpose: a uniform truth is a fixed point of symmetric mechanisms,
    # where even an estimator that forgets to debias looks unbiased
    skewed = np.concatenate([data, np.repeat(data[:1], max(1, len(data) // 2), axis=0)])

    def expected_on(values):
        if callable(target):
            return target(values)
        return target if target is not None else default_target(estimator, mechanism, values)

    def unbiased():
        variable, expected = expected_on(skewed)
        rng = np.random.default_rng(seed)
        draws = np.array([estimator.estimate(privatize_quietly(mechanism, skewed, rng))[variable].values
                          for _ in range(reps)])
        mean, se = draws.mean(axis=0), draws.std(axis=0, ddof=1) / math.sqrt(reps)
        z = np.abs(mean - expected) / np.where(se > 0, se, np.inf)
        bad = np.abs(mean - expected) > np.maximum(Z * se, 1e-12)
        if bad.any():
            worst = np.unravel_index(int(np.argmax(np.where(bad, z, 0))), z.shape)
            fail(f"{variable} is biased: mean over {reps} privatisations of fixed data is {mean[worst]:.6g} at "
                 f"{worst}, expected {np.asarray(expected)[worst]:.6g} (|z| = {z[worst]:.1f} > {Z:g})")

    def stderr_calibrated():
        rng = np.random.default_rng(seed + 1)
        values, variances = [], []
        name = None
        for _ in range(reps):
            resampled = data[rng.integers(0, len(data), len(data))]  # the data are redrawn too
            result = estimator.estimate(privatize_quietly(mechanism, resampled, rng))
            name = uncertainty_of(result)
            values.append(result[name].values)
            variances.append(result["stderr"].values ** 2)
        values, variances = np.array(values), np.array(variances).mean(axis=0)
        empirical = values.var(axis=0, ddof=1)
        informative = variances > 1e-300
        ratio = empirical[informative] / variances[informative]
        tolerance = Z * math.sqrt(2 / (reps - 1)) + 2.0 / len(data)
        if np.any(np.abs(ratio - 1) > tolerance):
            fail(f"stderr is not calibrated (it describes {name}): empirical variance / stderr^2 ranges "
                 f"{ratio.min():.3f}..{ratio.max():.3f}, outside 1 +- {tolerance:.3f}")

    def streaming_equals_one_shot():
        reports = privatize_quietly(mechanism, cycle(data, 5000), np.random.default_rng(seed))
        xr.testing.assert_identical(estimator.estimate(list(reports.chunks(333))), estimator.estimate(reports))

    def statistics_add_in_any_order():
        reports = privatize_quietly(mechanism, cycle(data, 3000), np.random.default_rng(seed))
        chunks = list(reports.chunks(250))
        counted = []

        def added(order):
            def aggregate(chosen):  # every pass of estimators that make several (Estimator.next_pass)
                total = sum(order([chosen.aggregate(c) for c in chunks]))
                counted.append(total.n)
                return total
            return aggregate
        forward = estimator.estimate_passes(added(list))
        backward = estimator.estimate_passes(added(lambda parts: parts[::-1]))
        xr.testing.assert_identical(forward, backward)
        if any(n != reports.n for n in counted):
            fail(f"statistics count {sorted(set(counted) - {reports.n})} reports, not {reports.n}")

    def result_schema():
        result = estimator.estimate(privatize_quietly(mechanism, cycle(data, 500), np.random.default_rng(seed)))
        check_result(result)

    def rejects_empty():
        reports = privatize_quietly(mechanism, cycle(data, 10), np.random.default_rng(seed))
        expect_error(DataError, "estimating zero reports", lambda: estimator.estimate(reports[0:0]))

    def frequency_statistics():
        reports = privatize_quietly(mechanism, cycle(data, 500), np.random.default_rng(seed))
        arrays = estimator.aggregate(reports).arrays
        expected = mechanism.frequency_statistics(reports.values)
        if set(arrays) != set(expected) or not all(np.array_equal(np.asarray(arrays[key]), np.asarray(expected[key]))
                                                   for key in expected):
            fail("aggregates_frequency_statistics is True, but the statistics are not the oracle's "
                 f"frequency_statistics: {sorted(arrays)} against {sorted(expected)}")

    def lattice_statistics():
        name, step = estimator.lattice_column_statistic(mechanism)
        reports = privatize_quietly(mechanism, cycle(data, 500), np.random.default_rng(seed))
        lattice_sums_match(mechanism, name, step, np.asarray(reports.values),
                           lambda: estimator.aggregate(reports).arrays)

    def threshold_statistics():
        name, threshold = estimator.threshold_count_statistic(mechanism)
        reports = privatize_quietly(mechanism, cycle(data, 500), np.random.default_rng(seed))
        values = np.asarray(reports.values, dtype=np.float64)
        require_one_column_each(mechanism, values, "threshold_count_statistic")
        arrays = estimator.aggregate(reports).arrays
        expected = (values <= threshold).sum(axis=0, dtype=np.int64)
        if set(arrays) != {name} or not np.array_equal(np.asarray(arrays[name]), expected):
            fail(f"threshold_count_statistic declares the statistics {{{name!r}: counts of values at most "
                 f"{threshold!r} per column}}; they are {sorted(arrays)}, not those counts")

    named = [("unbiased", unbiased), ("stderr_calibrated", stderr_calibrated),
             ("streaming_equals_one_shot", streaming_equals_one_shot),
             ("statistics_add_in_any_order", statistics_add_in_any_order), ("result_schema", result_schema),
             ("rejects_empty", rejects_empty)]
    if estimator.aggregates_frequency_statistics and isinstance(mechanism, FrequencyOracle):
        named.append(("frequency_statistics", frequency_statistics))
    if estimator.lattice_column_statistic(mechanism) is not None:
        named.append(("lattice_statistics", lattice_statistics))
    if estimator.threshold_count_statistic(mechanism) is not None:
        named.append(("threshold_statistics", threshold_statistics))
    return [Check(name, _small_samples_expected(function), expected_failures.get(name)) for name, function in named]


def check_result(result) -> None:
    """The result schema of DESIGN.md ("Results"), proven by the tools that read results: the
    estimate and its stderr (saying which estimate it describes and how), intervals from
    ``ldpest.confidence_interval`` that say the same, the summary table, and the real writers
    (.nc, .csv with its sidecar, .json), which must give the result back."""
    if not isinstance(result, xr.Dataset):
        fail(f"estimate returned {type(result).__name__}, not an xarray.Dataset")
    missing = REQUIRED_ATTRS - set(result.attrs)
    if missing:
        fail(f"result attrs lack {sorted(missing)}")
    try:
        name = estimate_variable(result)
    except LdpestError as exc:
        fail(str(exc))
    if "stderr" not in result or result["stderr"].dims != result[name].dims:
        fail(f"result must hold 'stderr' over the dims of {name!r}")
    described = result["stderr"].attrs.get("estimate")
    if described not in result or result[described].dims != result[name].dims:
        fail(f"stderr's 'estimate' attribute must name the estimate it describes, got {described!r}")
    if not result["stderr"].attrs.get("method"):
        fail("stderr's 'method' attribute must say how it was computed (analytic, exact, bootstrap, ...)")
    if not result[name].attrs.get("long_name"):
        fail(f"{name!r} has no long_name")
    stderr = result["stderr"].values
    if np.any(np.isinf(stderr) | (stderr < 0)):
        fail("stderr must be finite and not negative")
    with_ci = confidence_interval(result, 0.9)
    for bound in ("lower", "upper"):
        attrs = with_ci[bound].attrs
        if attrs.get("estimate") != described or not attrs.get("method") or attrs.get("level") != 0.9:
            fail(f"{bound} must say which estimate it covers (estimate), how (method) and at which level")
    lower, upper = with_ci["lower"].values, with_ci["upper"].values
    if np.any(np.isfinite(lower) & np.isfinite(upper) & (lower > upper)):
        fail("an interval's lower end is above its upper end")
    table = result_table(with_ci)
    if len(table) != max(1, int(np.prod(result[name].shape))):
        fail(f"the summary table has {len(table)} rows for {result[name].size} estimates")
    with tempfile.TemporaryDirectory() as folder:
        for suffix in (".nc", ".csv", ".json"):
            write_result(with_ci, Path(folder) / f"result{suffix}")
        for suffix in (".nc", ".json"):
            back = read_result(Path(folder) / f"result{suffix}")
            if not np.allclose(back[name].values, result[name].values, equal_nan=True) or \
                    back.attrs.get("estimate_variable") != name:
                fail(f"the {suffix} writer does not give the result back")


def check_estimator(estimator: Estimator, mechanism: Mechanism, data, *, target=None,
                    expected_failures: dict | None = None, seed: int = SEED, reps: int = 400,
                    raise_on_failure: bool = True) -> Report:
    """Run every estimator check with reports of ``mechanism`` on ``data``.

    ``target``: what the estimate equals on average given the raw data, when the mechanism's
    family does not say (:meth:`ldpest.Family.expected`): ``(variable, values)``, or a callable
    ``target(data) -> (variable, values)``, which the ``unbiased`` check calls on the data it
    privatises (``data`` plus ``len(data) // 2`` copies of its first record, so that the truth
    is not uniform).
    """
    checks = estimator_checks(estimator, mechanism, data, target=target, expected_failures=expected_failures,
                              seed=seed, reps=reps)
    return run_checks(checks, raise_on_failure)


def _small_samples_expected(check: Callable[[], None]) -> Callable[[], None]:
    """The estimator checks estimate hundreds of small samples on purpose; the EstimateWarning that
    a small sample tells little is expected there, and is not shown."""
    def run() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EstimateWarning)
            check()
    return run
