"""The kit's privacy checks.

* :func:`sampler_matches_channel`: ``privatize`` samples the declared channel, for every input of
  the channel (or, beyond :data:`MAX_INPUTS`, the first, the last and a random sample), and for
  data records off the channel's inputs, the mixture of rows that ``channel_mixture(x)`` claims
  (the step that touches the raw x: randomised rounding, a vertex draw).  Chi-square tests with a
  Bonferroni correction over all of them: a sampler that leaks at one late input fails.
* :func:`distribution_privacy`: without a finite channel, empirical likelihood ratios of many
  events for two inputs (quantile bins and tails of a discriminating projection, and the
  low-order-bit pattern of every coordinate: the floating-point attack of Mironov 2012).
* :func:`empirical_epsilon`: a black-box distinguishing audit (the method of LDP-Auditor, Arcolezi
  and Gambs 2023): for pairs of inputs, events chosen on one half of the privatised samples, and
  on the other half Clopper-Pearson bounds on their probabilities give a lower bound on the
  mechanism's epsilon that holds with probability ``1 - ALARM``.  A mechanism whose bound exceeds
  its claimed epsilon is not epsilon-LDP, whatever its channel says.
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np
from scipy import stats as scipy_stats

from ..stats.intervals import clopper_pearson
from ..util.errors import DataDroppedWarning, DataError
from .checks import ALARM, Z, fail

MAX_INPUTS = 256  # channel inputs compared with the sampler one by one; beyond, a sample with the extremes
MAX_OFF_GRID = 16  # distinct data records off the channel's inputs compared with their claimed mixture


def privatize_quietly(mechanism, records, rng):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataDroppedWarning)
        return mechanism.privatize(records, rng=rng)


def repeated(record, count: int) -> np.ndarray:
    """``count`` copies of one raw record (a label, a number or a row), as privatize takes them."""
    array = np.asarray(record, dtype=object if isinstance(record, str | tuple) else None)
    if array.ndim == 0:
        return np.repeat(array[None], count)
    return np.repeat(array[None], count, axis=0)


def report_rows(values) -> np.ndarray:
    """Reports as rows of float64 (every report coordinate ldpest stores is exact in float64)."""
    values = np.asarray(values)
    return np.ascontiguousarray(values.reshape(values.shape[0], -1), dtype=np.float64)


def output_indices(outputs, values) -> np.ndarray:
    """The index of each report among the channel's outputs, -1 for a report that is none of them
    (vectorised: rows compared as bytes)."""
    known, reports = report_rows(outputs), report_rows(values)
    if known.shape[1] != reports.shape[1]:
        return np.full(reports.shape[0], -1)
    row = np.dtype((np.void, known.shape[1] * 8))
    keys, found = known.view(row).ravel(), reports.view(row).ravel()
    order = np.argsort(keys)
    place = np.searchsorted(keys[order], found).clip(0, len(keys) - 1)
    return np.where(keys[order][place] == found, order[place], -1)


def _inputs_are_data(mechanism, channel) -> bool:
    try:
        mechanism.encode_data(np.asarray(channel.inputs, dtype=object))
    except (DataError, ValueError, TypeError):
        return False
    return True


def _off_grid_records(data, channel) -> list:
    """Distinct data records that are not inputs of the channel, up to MAX_OFF_GRID."""
    inputs = {repr(np.asarray(x).tolist()) for x in channel.inputs}
    seen, out = set(), []
    for record in np.asarray(data, dtype=object if np.asarray(data).dtype.kind in "OUS" else None):
        key = repr(np.asarray(record).tolist())
        if key not in inputs and key not in seen:
            seen.add(key)
            out.append(record)
    picks = np.linspace(0, len(out) - 1, min(MAX_OFF_GRID, len(out))).round().astype(int) if out else []
    return [out[i] for i in dict.fromkeys(picks)]


def chi_square_p(index: np.ndarray, expected, outputs: int) -> tuple[float | None, bool]:
    """``(p, impossible)``: the chi-square p-value of the outputs ``index`` against the probabilities
    ``expected`` (outputs with fewer than 5 expected pooled; None with one cell left), and whether an
    output of probability 0 was seen."""
    counts = np.bincount(index, minlength=outputs)
    target = np.asarray(expected, dtype=np.float64) * len(index)
    keep = target >= 5
    observed = np.append(counts[keep], counts[~keep].sum())
    pooled = np.append(target[keep], target[~keep].sum())
    impossible = False
    if pooled[-1] == 0:
        impossible = bool(observed[-1] > 0)
        observed, pooled = observed[:-1], pooled[:-1]
    if observed.size < 2:
        return None, impossible
    return float(scipy_stats.chisquare(observed, pooled * observed.sum() / pooled.sum()).pvalue), impossible


def sampler_matches_channel(mechanism, channel, data, seed: int, draws: int = 20_000) -> str:
    """Compare ``privatize`` with the declared channel (module docstring); returns what was compared."""
    rng = np.random.default_rng(seed)
    cases = []  # (what, raw record, expected output probabilities)
    if _inputs_are_data(mechanism, channel):
        count = len(channel.inputs)
        if count <= MAX_INPUTS:
            chosen = range(count)
        else:
            middle = rng.choice(np.arange(1, count - 1), MAX_INPUTS - 2, replace=False)
            chosen = [0, count - 1, *sorted(middle.tolist())]
        cases += [(f"input {channel.inputs[i]!r}", channel.inputs[i], channel.row(i)) for i in chosen]
    mixture = getattr(mechanism, "channel_mixture", None)
    off_grid = _off_grid_records(data, channel)
    if off_grid and mixture is None:
        fail(f"data records such as {off_grid[0]!r} are not inputs of the channel, and {mechanism.name!r} "
             "declares no channel_mixture(x): the step from a raw record to the channel is unchecked "
             "(docs/plugin-author-guide.md, 'Continuous inputs')")
    for record in off_grid:
        rows, weights = mixture(record)
        weights = np.asarray(weights, dtype=np.float64)
        if np.any(weights < 0) or not math.isclose(weights.sum(), 1.0, abs_tol=1e-9):
            fail(f"channel_mixture({record!r}) weights are not a probability vector (sum {weights.sum():.6g})")
        expected = sum(w * channel.row(int(i)) for i, w in zip(rows, weights, strict=True))
        cases.append((f"data record {record!r} (the mixture it claims)", record, expected))
    if not cases:
        fail("the channel's inputs are not data and the data has no record to compare: give data records")
    alarm = ALARM / len(cases)
    draws = max(draws, 20 * channel.shape[1])  # about 20 reports per output at least
    for what, record, expected in cases:
        reports = privatize_quietly(mechanism, repeated(record, draws), rng)
        index = output_indices(channel.outputs, reports.values)
        if np.any(index < 0):
            fail(f"privatize produced {int(np.sum(index < 0))} report(s) outside the channel's outputs for {what}, "
                 f"e.g. {np.asarray(reports.values)[np.flatnonzero(index < 0)[0]].tolist()!r}")
        p, impossible = chi_square_p(index, expected, channel.shape[1])
        if impossible:
            fail(f"privatize produced reports that the channel gives probability 0 for {what}")
        if p is not None and p < alarm:
            fail(f"privatize does not sample the declared channel for {what} (chi-square p = {p:.2g} < "
                 f"{alarm:.2g}, {len(cases)} cases): the exact privacy proof does not apply to it")
    return f"{len(cases)} case(s) compared with the channel"


def keyed_matches_channel(mechanism, channel, data, seed: int, draws: int = 4_000, inputs: int = 4) -> None:
    """Permanent responses keyed by ``draws`` users' secrets (:class:`ldpest.ClientState`) have the
    law of the permanent ``channel``: at its first and last inputs and ``inputs - 2`` between when
    its inputs are data, else at data records with the mixture of rows ``channel_mixture`` claims
    (chi-square over outputs with at least 5 expected, the rest pooled; Bonferroni over the cases)."""
    from ..privacy.memo import ClientState

    if _inputs_are_data(mechanism, channel):
        count = len(channel.inputs)
        chosen = sorted({0, count - 1, *np.linspace(0, count - 1, inputs).round().astype(int).tolist()})
        cases = [(channel.inputs[i], channel.row(i)) for i in chosen]
    else:
        records = _off_grid_records(data, channel)[:inputs]
        cases = []
        for record in records:
            rows, weights = mechanism.channel_mixture(record)
            cases.append((record, sum(w * channel.row(int(i)) for i, w in zip(rows, weights, strict=True))))
    if not cases:
        fail("no record to compare keyed permanent responses with the permanent channel")
    alarm = ALARM / len(cases)
    for record, expected in cases:
        encoded = mechanism.encode_data(repeated(record, draws))
        users = [f"s{seed}-{j}" for j in range(draws)]
        values = mechanism.memoised_permanent(encoded, users, ClientState())
        index = output_indices(channel.outputs, values)
        if np.any(index < 0):
            fail(f"keyed permanent responses outside the permanent channel's outputs for {record!r}")
        p, impossible = chi_square_p(index, expected, channel.shape[1])
        if impossible:
            fail(f"keyed permanent responses that the permanent channel gives probability 0 for {record!r}")
        if p is not None and p < alarm:
            fail(f"permanent responses keyed by users' secrets do not have the permanent channel's law at "
                 f"{record!r} (chi-square p = {p:.2g} < {alarm:.2g})")


def distribution_privacy(mechanism, data, seed: int, draws: int = 100_000) -> None:
    """Empirical likelihood ratios of many events for two inputs (module docstring)."""
    rng = np.random.default_rng(seed)
    data = np.asarray(data)
    first = data[0]
    other = next((x for x in data[1:] if not np.array_equal(x, first)), None)
    if other is None:
        fail("data must hold at least two distinct records")
    epsilon = mechanism.epsilon
    a = report_rows(privatize_quietly(mechanism, repeated(first, draws), rng).values)
    b = report_rows(privatize_quietly(mechanism, repeated(other, draws), rng).values)
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
        la, lb = lowest_bit(a[:, j]), lowest_bit(b[:, j])
        low = min(la.min(), lb.min())
        events += [(f"low-order bits of coordinate {j}", la - low, lb - low, int(max(la.max(), lb.max()) - low) + 1)]
    for name, codes_a, codes_b, size in events:
        ca = np.bincount(codes_a, minlength=size).astype(float)
        cb = np.bincount(codes_b, minlength=size).astype(float)
        for big, small, direction_name in ((ca, cb, "first"), (cb, ca, "second")):
            impossible = (small == 0) & (big >= 30 * math.exp(epsilon))
            if impossible.any():
                fail(f"{name}: an event seen {int(big[impossible].max())} times under the {direction_name} input "
                     f"never occurs under the other (infinite likelihood ratio; epsilon = {epsilon:g})")
            both = (big >= 30) & (small >= 30)
            if both.any():
                log_ratio = np.log(big[both] / small[both])
                slack = Z * np.sqrt(1 / big[both] + 1 / small[both])
                excess = log_ratio - epsilon - slack
                if np.any(excess > 0):
                    worst = int(np.argmax(excess))
                    fail(f"{name}: empirical log likelihood ratio {log_ratio[worst]:.3f} exceeds epsilon = "
                         f"{epsilon:g} by more than sampling error ({slack[worst]:.3f})")


def lowest_bit(values: np.ndarray) -> np.ndarray:
    """Exponent of the lowest set bit of each float (the granularity an attacker reads)."""
    mantissa, exponent = np.frexp(values)
    integer = np.abs((mantissa * 2.0 ** 53).astype(np.int64))
    trailing = np.zeros_like(integer)
    nonzero = integer != 0
    lowest = integer & -integer
    trailing[nonzero] = np.log2(lowest[nonzero]).astype(np.int64)
    return np.where(nonzero, exponent - 53 + trailing, 0).astype(np.int64)


# -- the black-box distinguishing audit ------------------------------------------------------------
AUDIT_RECORDS = 3  # distinct data records audited against each other (every ordered pair)
AUDIT_EVENTS = 6  # events carried from the first half to the second, per ordered pair
AUDIT_BINS = 64  # quantile bins of the discriminating projection (continuous reports)
AUDIT_BLOCK = 1 << 16  # privatisations per block: memory stays one block
AUDIT_DRAWS = (1 << 17, 1 << 22)  # privatisations of each record in each half: 200000 / epsilon^2 within these
AUDIT_PILOT = 1 << 12  # privatisations of each record that fix the events' encoding and time privatize
AUDIT_SECONDS = 5.0  # a slow privatize (a per-record loop) gets fewer draws: the audit stays within this


def audit_draws(epsilon: float, seconds_per_report: float = 0.0) -> int:
    """Privatisations per record and half: enough that a mechanism 1.1 times less private than it
    claims is flagged, down to events of probability 0.1 (the bound's spread is about
    ``sqrt(2 / (0.1 n))`` in log ratio, five times over, against a margin of 0.1 epsilon: tested
    for randomized response and one-hot Laplace at epsilon 0.5 to 4), within AUDIT_DRAWS, and
    fewer when privatize is so slow that the ``2 * AUDIT_RECORDS`` halves would take more than
    AUDIT_SECONDS."""
    low, high = AUDIT_DRAWS
    draws = min(high, max(low, 200_000 / epsilon ** 2))
    if seconds_per_report > 0:
        draws = min(draws, max(AUDIT_PILOT, AUDIT_SECONDS / (2 * AUDIT_RECORDS * seconds_per_report)))
    return int(draws)


def _encoding(mechanism, records, rng):
    """How reports become event codes, fixed on a pilot sample: each distinct report when there
    are few; else quantile bins of the report (one coordinate), or a grid of quantile bins over the
    two coordinates whose means differ most between two records (a privacy loss that needs two
    coordinates at once, as one-hot Laplace noise has, shows only in such a joint event); and the
    seconds one privatisation takes."""
    started = time.perf_counter()
    pilot = [report_rows(privatize_quietly(mechanism, repeated(r, AUDIT_PILOT), rng).values) for r in records]
    seconds = (time.perf_counter() - started) / (AUDIT_PILOT * len(records))
    joined = np.concatenate(pilot)
    distinct = np.unique(joined, axis=0) if joined.shape[1] <= 64 else joined[:0]
    if 0 < len(distinct) <= 4096:
        return (lambda rows: output_indices(distinct, rows)), len(distinct) + 1, seconds  # unseen: the last code
    spread = joined.std(axis=0) + 1e-300
    contrast = np.abs(pilot[0].mean(axis=0) - pilot[1].mean(axis=0)) / spread
    columns = np.argsort(-contrast, kind="stable")[: min(2, joined.shape[1])]
    bins = AUDIT_BINS if len(columns) == 1 else int(math.isqrt(AUDIT_BINS))
    edges = [np.unique(np.quantile(joined[:, c], np.linspace(0, 1, bins + 1)[1:-1])) for c in columns]
    sizes = [len(e) + 1 for e in edges]

    def encode(rows):
        code = np.zeros(rows.shape[0], dtype=np.int64)
        for column, edge, size in zip(columns, edges, sizes, strict=True):
            code = code * size + np.searchsorted(edge, rows[:, column])
        return code

    return encode, int(np.prod(sizes)), seconds


def _code_counts(mechanism, record, encode, size: int, draws: int, rng) -> np.ndarray:
    """How often each code occurs in ``draws`` privatisations of ``record``, block by block."""
    counts = np.zeros(size, dtype=np.int64)
    for start in range(0, draws, AUDIT_BLOCK):
        block = min(AUDIT_BLOCK, draws - start)
        codes = encode(report_rows(privatize_quietly(mechanism, repeated(record, block), rng).values))
        counts += np.bincount(np.where(codes < 0, size - 1, codes), minlength=size)
    return counts


def _candidate_events(first, second) -> list[np.ndarray]:
    """Sets of codes whose ratio P_first / P_second looks largest on the first half: the top code,
    and the unions of the top 2, 4, 8, 16 and 32 codes by decreasing ratio."""
    order = np.argsort(-(np.log(first + 0.5) - np.log(second + 0.5)), kind="stable")
    return [order[:m] for m in (1, 2, 4, 8, 16, 32)[:AUDIT_EVENTS]]


def empirical_epsilon(mechanism, data, seed: int, draws: int | None = None) -> tuple[float, str]:
    """A lower bound on the mechanism's epsilon from its sampler alone (module docstring), and what
    attains it.  It holds with probability at least ``1 - ALARM``: every event is chosen on the
    first half of the privatisations and bounded on the second, with Clopper-Pearson intervals at
    a Bonferroni level over every event tested."""
    rng = np.random.default_rng(seed)
    records = _distinct_records(data, AUDIT_RECORDS)
    if len(records) < 2:
        fail("data must hold at least two distinct records")
    encode, size, seconds = _encoding(mechanism, records, rng)
    draws = audit_draws(mechanism.epsilon, seconds) if draws is None else int(draws)
    train = [_code_counts(mechanism, r, encode, size, draws, rng) for r in records]
    test = [_code_counts(mechanism, r, encode, size, draws, rng) for r in records]
    pairs = [(i, j) for i in range(len(records)) for j in range(len(records)) if i != j]
    level = 1 - ALARM / (len(pairs) * AUDIT_EVENTS)  # each end fails with ALARM / (2 pairs events): ALARM in all
    best, where = 0.0, "no event"
    for i, j in pairs:
        for event in _candidate_events(train[i], train[j]):
            hits_a, hits_b = int(test[i][event].sum()), int(test[j][event].sum())
            low_a = clopper_pearson(np.array([hits_a]), draws, level)[0][0]
            high_b = clopper_pearson(np.array([hits_b]), draws, level)[1][0]
            if low_a > 0 and high_b > 0 and math.log(low_a / high_b) > best:
                best = math.log(low_a / high_b)
                where = (f"records {records[i]!r} and {records[j]!r}, an event of probability "
                         f"{hits_a / draws:.4g} against {hits_b / draws:.4g} ({draws} privatisations each)")
    return best, where


def _distinct_records(data, count: int) -> list:
    data = np.asarray(data, dtype=object if np.asarray(data).dtype.kind in "OUS" else None)
    out, seen = [], set()
    for record in data:
        key = repr(np.asarray(record).tolist())
        if key not in seen:
            seen.add(key)
            out.append(record)
        if len(out) == count:
            break
    return out
