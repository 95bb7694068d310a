"""The kit's mechanism checks (:func:`mechanism_checks`, :func:`check_mechanism`)."""

from __future__ import annotations

import cProfile
import json
import math
import pstats
import tempfile
import warnings
from pathlib import Path

import numpy as np

from ..contract.base import FrequencyOracle, Mechanism
from ..contract.longitudinal import Longitudinal
from ..contract.registry import mechanism_from_spec
from ..contract.reports import Reports
from ..io.sources import read_reports
from ..stats.exactsum import ExactSum
from ..util.errors import DataDroppedWarning, DataError, ParameterError
from ..util.xxh32 import xxh32
from .checks import ALARM, Check, Report, expect_error, fail, run_checks
from .moments import covariance_factors_match, frequency_moments_match_channel, report_support_matches_channel
from .privacy import (
    _inputs_are_data,
    distribution_privacy,
    empirical_epsilon,
    keyed_matches_channel,
    sampler_matches_channel,
)

SEED = 20131205


def cycle(data, n: int) -> np.ndarray:
    """``n`` records: ``data`` repeated."""
    data = np.asarray(data)
    reps = math.ceil(n / len(data))
    return np.concatenate([data] * reps)[:n]


def channel_or_reason(mechanism):
    """``(channel, None)``, or ``(None, why)`` when the mechanism has no finite channel (None) or one
    too large to enumerate (its ``channel()`` raises ParameterError): the kit then checks privacy
    by distribution tests (docs/plugin-author-guide.md, "Prove it")."""
    try:
        channel = mechanism.channel()
    except ParameterError as exc:
        return None, f"channel too large to enumerate ({exc})"
    return (channel, None) if channel is not None else (None, "no finite channel")


def mechanism_checks(mechanism: Mechanism, data, *, expected_failures: dict | None = None,
                     seed: int = SEED) -> list[Check]:
    """The checks of :func:`check_mechanism` as a list (for ``pytest.mark.parametrize``)."""
    expected_failures = expected_failures or {}
    data = np.asarray(data, dtype=object if np.asarray(data).dtype.kind in "OUS" else None)

    def spec_round_trip():
        text = json.dumps(mechanism.spec)
        rebuilt = mechanism_from_spec(json.loads(text))
        if rebuilt != mechanism:
            fail(f"the spec {text} rebuilds {rebuilt!r}, which is not equal to {mechanism!r}")
        try:
            mechanism.epsilon = mechanism.epsilon * 2
        except AttributeError:
            pass
        else:
            fail("the mechanism is mutable: setting .epsilon succeeded (a changed epsilon breaks its guarantee)")

    def rejects_bad_epsilon():
        for bad in (0.0, -1.0, float("nan"), float("inf")):
            expect_error(ParameterError, f"epsilon={bad!r}", lambda bad=bad: _rebuild(mechanism, epsilon=bad))

    def rejects_bad_data():
        sample = data[:3]
        nan_data = np.array(sample, dtype=object)
        nan_data[1] = float("nan") if nan_data.ndim == 1 else np.full(nan_data.shape[1:], float("nan"))
        for label, bad in (("NaN data", nan_data), ("empty data", sample[:0])):
            expect_error(DataError, label, lambda bad=bad: mechanism.privatize(_as_numeric_if_possible(bad),
                                                                               rng=np.random.default_rng(seed)))

    channel, reason = channel_or_reason(mechanism)

    def exact_privacy():
        if not channel.rows_sum_to_one():
            fail("the channel's rows are not probability distributions" + (" (exactly)" if channel.exact else ""))
        if not channel.satisfies(mechanism.epsilon):
            proof = "proven" if channel.exact else "float"
            fail(f"the channel's worst log likelihood ratio is {channel.max_log_ratio():.17g} > epsilon = "
                 f"{mechanism.epsilon:.17g} ({proof} check)")
        sampler_matches_channel(mechanism, channel, data, seed)

    def distributions():
        distribution_privacy(mechanism, data, seed)

    def distinguishing_audit():
        bound, where = empirical_epsilon(mechanism, data, seed)
        if bound > mechanism.epsilon:
            fail(f"the empirical epsilon lower bound {bound:.4f} exceeds the claimed epsilon = {mechanism.epsilon:g} "
                 f"({where}): the sampler is not epsilon-LDP, whatever its channel says")

    def vectorised():
        small, large = cycle(data, 100), cycle(data, 10_000)
        calls_small = _python_calls(lambda: mechanism.privatize(small, rng=np.random.default_rng(seed)))
        calls_large = _python_calls(lambda: mechanism.privatize(large, rng=np.random.default_rng(seed)))
        if calls_large > 2 * calls_small + 50:
            fail(f"privatize makes {calls_small} Python calls for 100 records but {calls_large} for 10000: "
                 "a per-record loop (vectorise over records)")
        reports = mechanism.privatize(large, rng=np.random.default_rng(seed))
        if not isinstance(reports, Reports) or reports.n != len(large):
            fail(f"privatize of {len(large)} records returned {getattr(reports, 'n', reports)!r}, not one report each")

    def reproducible():
        a = mechanism.privatize(cycle(data, 500), rng=np.random.default_rng(seed))
        b = mechanism.privatize(cycle(data, 500), rng=np.random.default_rng(seed))
        if not np.array_equal(a.values, b.values):
            fail("the same seed gave different reports: randomness not drawn from the rng argument")

    def reports_round_trip():
        reports = mechanism.privatize(cycle(data, 300), rng=np.random.default_rng(seed))
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "reports.nc"
            reports.to_netcdf(path)
            back = read_reports(path)
        if back.spec != reports.spec or not np.array_equal(back.values, reports.values):
            fail("reports changed in a NetCDF round trip")

    def frequency_moments():
        frequency_moments_match_channel(mechanism, channel)
        report_support_matches_channel(mechanism, channel)

    def bit_columns():
        name, ones = mechanism.bit_column_statistic()
        values = np.asarray(mechanism.privatize(cycle(data, 500), rng=np.random.default_rng(seed)).values)
        require_one_column_each(mechanism, values, "bit_column_statistic")
        if not np.isin(values, (0, 1)).all():
            fail("bit_column_statistic is declared, but reports hold values other than 0 and 1")
        if ones is not None and not np.all(values.sum(axis=1) == ones):
            fail(f"bit_column_statistic declares {ones} ones per report; reports hold "
                 f"{sorted(set(values.sum(axis=1).tolist()))[:5]}")
        stats = mechanism.frequency_statistics(values)
        if set(stats) != {name} or not np.array_equal(np.asarray(stats[name]), values.sum(axis=0)):
            fail(f"bit_column_statistic declares frequency_statistics = {{{name!r}: column sums}}; it returns "
                 f"{sorted(stats)}, not those sums")

    def lattice_columns():
        name, step = mechanism.lattice_column_statistic()
        values = np.asarray(mechanism.privatize(cycle(data, 500), rng=np.random.default_rng(seed)).values)
        lattice_sums_match(mechanism, name, step, values, lambda: mechanism.frequency_statistics(values))

    def linear_hash():
        name, prime, g = mechanism.linear_hash_statistic()
        values = np.asarray(mechanism.privatize(cycle(data, 500), rng=np.random.default_rng(seed)).values)
        if values.ndim != 2 or values.shape[1] != 3 or values.dtype.kind not in "iu":
            fail(f"linear_hash_statistic is declared, but reports are {values.dtype} of shape {values.shape}, not "
                 "three integer columns (a, c, y)")
        a, c, y = (values[:, k].astype(object) for k in range(3))
        if not (all(1 <= v < prime for v in a) and all(0 <= v < prime for v in c) and all(0 <= v < g for v in y)):
            fail(f"linear_hash_statistic declares 1 <= a < {prime}, 0 <= c < {prime} and 0 <= y < {g}; reports hold "
                 "values outside")
        support = [sum(int(g * ((ai * j + ci) % prime) // prime == yi) for ai, ci, yi in zip(a, c, y, strict=True))
                   for j in range(len(mechanism.categories))]
        stats = mechanism.frequency_statistics(values)
        if set(stats) != {name} or not np.array_equal(np.asarray(stats[name]), support):
            fail(f"linear_hash_statistic declares frequency_statistics = {{{name!r}: supports}}; it returns "
                 f"{sorted(stats)}, not the supports {support[:5]}...")

    def decimal_xxh32():
        name, g = mechanism.decimal_xxh32_statistic()
        values = np.asarray(mechanism.privatize(cycle(data, 500), rng=np.random.default_rng(seed)).values)
        if values.ndim != 2 or values.shape[1] != 2 or values.dtype.kind not in "iu":
            fail(f"decimal_xxh32_statistic is declared, but reports are {values.dtype} of shape {values.shape}, not "
                 "two integer columns (y, s)")
        y, s = (values[:, k].astype(object) for k in range(2))
        if not (all(0 <= v < g for v in y) and all(0 <= v < 1 << 63 for v in s)):
            fail(f"decimal_xxh32_statistic declares 0 <= y < {g} and 0 <= s < 2^63; reports hold values outside")
        support = [sum(int(xxh32(str(j).encode(), si) % g == yi) for yi, si in zip(y, s, strict=True))
                   for j in range(len(mechanism.categories))]
        stats = mechanism.frequency_statistics(values)
        if set(stats) != {name} or not np.array_equal(np.asarray(stats[name]), support):
            fail(f"decimal_xxh32_statistic declares frequency_statistics = {{{name!r}: supports}}; it returns "
                 f"{sorted(stats)}, not the supports {support[:5]}...")

    def report_alphabet():
        size = mechanism.report_alphabet_size()
        if isinstance(size, bool) or not isinstance(size, int | np.integer) or size < 1:
            fail(f"report_alphabet_size() must be a positive integer or None, got {size!r}")
        if channel is not None and channel.shape[1] > size:
            fail(f"report_alphabet_size() declares {size} distinct reports; the channel has {channel.shape[1]} outputs")
        values = np.asarray(mechanism.privatize(cycle(data, 5000), rng=np.random.default_rng(seed)).values)
        seen = len(np.unique(values.reshape(len(values), -1), axis=0))
        if seen > size:
            fail(f"report_alphabet_size() declares {size} distinct reports; 5000 privatised records gave {seen}")

    privacy = ("exact_privacy", exact_privacy) if channel is not None else ("distribution_privacy", distributions)
    notes = {"distribution_privacy": f"{reason}: distribution tests instead of a proof"} if reason else {}
    named = [("spec_round_trip", spec_round_trip), ("rejects_bad_epsilon", rejects_bad_epsilon),
             ("rejects_bad_data", rejects_bad_data), privacy, ("distinguishing_audit", distinguishing_audit),
             ("vectorised", vectorised), ("reproducible", reproducible), ("reports_round_trip", reports_round_trip)]
    if isinstance(mechanism, FrequencyOracle) and channel is not None:
        named.append(("frequency_moments", frequency_moments))
    if isinstance(mechanism, FrequencyOracle) and mechanism.frequency_cross_covariance_factors(
            np.full(len(mechanism.categories), 1.0 / len(mechanism.categories))) is not None:
        named.append(("covariance_factors", lambda: covariance_factors_match(mechanism)))
    if isinstance(mechanism, FrequencyOracle) and mechanism.bit_column_statistic() is not None:
        named.append(("bit_columns", bit_columns))
    if isinstance(mechanism, FrequencyOracle) and mechanism.lattice_column_statistic() is not None:
        named.append(("lattice_columns", lattice_columns))
    if isinstance(mechanism, FrequencyOracle) and mechanism.linear_hash_statistic() is not None:
        named.append(("linear_hash", linear_hash))
    if isinstance(mechanism, FrequencyOracle) and mechanism.decimal_xxh32_statistic() is not None:
        named.append(("decimal_xxh32", decimal_xxh32))
    if mechanism.report_alphabet_size() is not None:
        named.append(("report_alphabet", report_alphabet))
    if isinstance(mechanism, Longitudinal):
        named += longitudinal_checks(mechanism, data, seed)
    return [Check(name, function, expected_failures.get(name), notes.get(name, "")) for name, function in named]


def require_one_column_each(mechanism, values: np.ndarray, declaration: str) -> None:
    """Fail unless ``values`` (privatised reports) hold one column per report column, as ``declaration`` (a
    statistic Spark computes column by column) assumes."""
    if values.ndim != 2 or values.shape[1] != len(mechanism.report_columns()):
        fail(f"{declaration} is declared, but reports have shape {values.shape}, not one column per report column "
             f"({len(mechanism.report_columns())})")


def lattice_sums_match(mechanism, name: str, step: float, values: np.ndarray, statistics) -> None:
    """Fail unless ``step`` is a power of two, ``values`` (privatised reports) lie on its lattice with one column
    per report column, and ``statistics()`` is ``{name: ExactSum.of(values, step)}``: what a declared
    ``lattice_column_statistic`` promises (Spark then sums the columns in long units of ``step``)."""
    if math.frexp(step)[0] != 0.5:
        fail(f"lattice_column_statistic declares step {step!r}, which is not a power of two")
    require_one_column_each(mechanism, values, "lattice_column_statistic")
    units = values / step
    if not (np.isfinite(units).all() and np.array_equal(np.rint(units), units)):
        fail(f"lattice_column_statistic declares the lattice of step {step!r}; reports hold values off it")
    found = statistics()
    if set(found) != {name} or not isinstance(found[name], ExactSum) or found[name] != ExactSum.of(values, step):
        fail(f"lattice_column_statistic declares the statistics {{{name!r}: exact column sums}}; they are "
             f"{sorted(found)}, not those sums")


def longitudinal_checks(mechanism, data, seed: int) -> list:
    """The checks of a mechanism for repeated collection (:class:`ldpest.Longitudinal`):

    * ``permanent_privacy``: every check above passes for ``mechanism.permanent()`` at ``epsilon_inf``
      (its exact channel proven, its sampler drawing it), and ``epsilon <= epsilon_inf``;
    * ``memoised``: with the same secrets the permanent responses repeat exactly, with other secrets
      they differ, and keyed by many users' secrets they have the permanent channel's law at every
      input compared (chi-square, as ``exact_privacy``).
    """
    from ..privacy.memo import ClientState

    permanent = mechanism.permanent()

    def permanent_privacy():
        if not mechanism.epsilon <= mechanism.epsilon_inf:
            fail(f"epsilon = {mechanism.epsilon!r} exceeds epsilon_inf = {mechanism.epsilon_inf!r}: one report "
                 "cannot leak more than every report of its value together")
        if permanent.epsilon != mechanism.epsilon_inf:
            fail(f"the permanent response declares epsilon = {permanent.epsilon!r}, not epsilon_inf = "
                 f"{mechanism.epsilon_inf!r}")
        report = run_checks(mechanism_checks(permanent, data, seed=seed), raise_on_failure=False)
        if report.failures:
            fail("the permanent response fails " + "; ".join(f"{r.name}: {r.message}" for r in report.failures))

    def memoised():
        channel, _ = channel_or_reason(permanent)
        if channel is not None and _inputs_are_data(mechanism, channel):
            rows = np.resize(np.arange(len(channel.inputs)), 4096)
            records = repeated_rows(channel.inputs, rows)
            # P(two secrets give the same response to every record): the test below is conclusive
            collision = float(np.sum(np.log([np.sum(channel.row(i) ** 2) for i in range(len(channel.inputs))])[rows]))
        else:
            records, collision = cycle(data, 4096), -math.inf
        encoded = mechanism.encode_data(records)
        users = [f"user{i}" for i in range(len(records))]
        state = ClientState()
        first = mechanism.memoised_permanent(encoded, users, state)
        again = mechanism.memoised_permanent(encoded, users, state)
        if not np.array_equal(first, again):
            fail("the same users' secrets gave different permanent responses: the memoisation does not repeat")
        other = mechanism.memoised_permanent(encoded, users, ClientState())
        if np.array_equal(first, other) and collision < math.log(ALARM):
            fail(f"other secrets gave the same {len(records)} permanent responses (probability "
                 f"e^{collision:.0f}): the response does not depend on the secret")
        if channel is not None:
            keyed_matches_channel(mechanism, channel, data, seed)

    return [("permanent_privacy", permanent_privacy), ("memoised", memoised)]


def check_mechanism(mechanism: Mechanism, data, *, expected_failures: dict | None = None, seed: int = SEED,
                    raise_on_failure: bool = True) -> Report:
    """Run every mechanism check; raise ConformanceError listing the failures.

    ``data``: valid raw data for the mechanism (at least two distinct records; for a mechanism with
    numeric inputs, records off the channel's grid test the step from a raw record to the channel).
    ``expected_failures``: ``{check_name: reason}`` for checks known to fail.
    """
    return run_checks(mechanism_checks(mechanism, data, expected_failures=expected_failures, seed=seed),
                      raise_on_failure)


def repeated_rows(inputs, rows) -> np.ndarray:
    """The raw records ``inputs[rows]`` (labels, numbers or rows), as privatize takes them."""
    picked = [inputs[i] for i in rows]
    return np.asarray(picked, dtype=object if isinstance(picked[0], str | tuple) else None)


def _rebuild(mechanism: Mechanism, **changes) -> Mechanism:
    params = {**mechanism.params, **changes}
    return type(mechanism)(**params)


def _as_numeric_if_possible(values):
    try:
        return np.asarray(values.tolist(), dtype=float)
    except (TypeError, ValueError):
        return values


def _python_calls(function) -> int:
    profile = cProfile.Profile()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataDroppedWarning)
        profile.runcall(function)
    return sum(stat[1] for stat in pstats.Stats(profile).stats.values())
