"""Estimation on Spark (docs/benchmarks.md "Spark"): a ``pyspark.sql.DataFrame`` of reports is
reduced partition by partition to exact sufficient statistics in ``mapInArrow`` (each partition's
Arrow batches validated with the mechanism's ``encode_reports`` and aggregated, one pickled
:class:`SufficientStats` per partition), the statistics are added with ``treeReduce`` on the
executors, and the estimate is finalised on the driver.  The statistics are integers or exact
sums, so the result equals the in-memory estimate bit for bit.  Reports that are one label
(randomized response, Hadamard response, ...) are first counted by Spark (``groupBy().count()``
in the JVM), and each partition turns the distinct labels and their counts into the statistics of
the reports they stand for (:func:`_counted_statistics`): the same statistics, without sending every
report to Python or rebuilding it there; so are reports of any mechanism that declares a small alphabet
(``Mechanism.report_alphabet_size``: the numeric codes, Haar coefficients, l-infinity signs).  Reports of at
most two adjacent integer values (duchi's codes, two categories) are counted by one aggregation instead
(:func:`_two_adjacent_values`), and their statistics made on the driver.  Reports of 0/1 columns whose
statistic is their sums (unary encodings, subset selection: ``FrequencyOracle.bit_column_statistic``) are
summed by Spark in one aggregation, with the checks of their values, and nothing reaches Python; so are
number columns on a lattice whose statistic is their exact sums (one-hot Laplace, Laplace histogram cells:
``Estimator.lattice_column_statistic``), in long units of the lattice's step, and number columns whose
statistic is the count of values at most a threshold (``Estimator.threshold_count_statistic``:
``histogram-cdf``); local hashing's supports are counted in place for few categories
(``FrequencyOracle.linear_hash_statistic``, ``FrequencyOracle.decimal_xxh32_statistic``).

The mechanism is given, or read from the column metadata that :func:`read_parquet` attaches (the
spec ldpest writes into a Parquet report file).  Executors run the Python that Spark starts
(``PYSPARK_PYTHON``, or ``spark.pyspark.python``): it needs ldpest and the plugins of the
mechanism, like dask workers.
"""

from __future__ import annotations

import contextlib
import math
import operator
import pickle

import numpy as np

from ..contract.base import FrequencyOracle, Mechanism
from ..contract.registry import mechanism_from_spec_json
from ..io.layout import column_kind
from ..io.tables import PARQUET_SPEC_KEY, table_values
from ..util import xxh32
from ..util.errors import DataError, ParameterError

SPEC_METADATA = "ldpest-spec"  # the key of the mechanism spec in a report column's Spark metadata


def is_spark_frame(obj) -> bool:
    return type(obj).__module__.startswith("pyspark.sql") and hasattr(obj, "mapInArrow")


def is_spark_master(scheduler: str | None) -> bool:
    """``local``, ``local[N]``, ``local[*]`` or a ``spark://`` (``yarn``, ``k8s://``) master URL."""
    return scheduler is not None and (scheduler == "local" or scheduler.startswith(("local[", "spark://", "k8s://"))
                                      or scheduler == "yarn")


def session(master: str):
    """A Spark session on ``master`` whose Python workers run this Python (ldpest is installed here)."""
    import os
    import sys

    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # local workers (the config alone is not read there)
    return (SparkSession.builder.master(master).appName("ldpest")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")  # no progress bars among the CLI's output
            .config("spark.pyspark.python", sys.executable)
            .config("spark.pyspark.driver.python", sys.executable)
            .getOrCreate())


def read_parquet(spark, path):
    """A Parquet report file written by ldpest as a Spark DataFrame whose report columns carry the
    mechanism spec (read from the file's metadata on the driver), for :func:`estimate_spark`."""
    import pyarrow.parquet as pq

    metadata = pq.read_schema(str(path)).metadata or {}
    if PARQUET_SPEC_KEY not in metadata:
        raise DataError(f"{path}: no ldpest spec in the Parquet metadata; pass the mechanism")
    spec = metadata[PARQUET_SPEC_KEY].decode()
    frame = spark.read.parquet(str(path))
    mechanism = mechanism_from_spec_json(spec)
    for name in mechanism.report_columns():
        frame = frame.withMetadata(name, {SPEC_METADATA: spec})
    return frame


def mechanism_of(frame, mechanism: Mechanism | None, columns) -> Mechanism:
    """The mechanism given, or the one in the report columns' metadata (they must agree)."""
    specs = {field.metadata.get(SPEC_METADATA) for field in frame.schema.fields if field.metadata.get(SPEC_METADATA)}
    if len(specs) > 1:
        raise DataError("the DataFrame's columns carry different ldpest specs")
    carried = mechanism_from_spec_json(specs.pop()) if specs else None
    if mechanism is not None and carried is not None and mechanism != carried:
        raise ParameterError(f"the reports carry their own spec {carried.spec_json}; do not pass another mechanism")
    if mechanism is None and carried is None:
        raise ParameterError("a Spark DataFrame of reports needs its mechanism (or ldpest.spark.read_parquet of a "
                             "report file ldpest wrote)")
    return mechanism if mechanism is not None else carried


MULTIPLICITY = "__ldpest_reports"  # the column of report counts after Spark's groupBy of equal reports
COUNTED_ALPHABET = 1 << 16  # reports of at most this many distinct values are counted by Spark


def _partition_statistics(batches, mechanism_spec: str, estimator_spec: str, columns: list[str], kind: str,
                          codes: str, counted: bool = False):
    """``mapInArrow``: the statistics of one partition's batches (:func:`_batch_statistics`), one pickled row
    (none if empty)."""
    import pyarrow as pa

    from .mapreduce import _estimator_of

    mechanism, estimator = mechanism_from_spec_json(mechanism_spec), _estimator_of(estimator_spec)
    total = _batch_statistics(batches, mechanism, estimator, columns, kind, codes, counted)
    if total is not None:
        yield pa.RecordBatch.from_pydict({"statistics": [pickle.dumps(total)]},
                                         schema=pa.schema([("statistics", pa.binary())]))


def _batch_statistics(batches, mechanism, estimator, columns: list[str], kind: str, codes: str, counted: bool):
    """The statistics of Arrow ``batches`` of reports (None if they hold none), each batch checked by the
    mechanism's ``encode_reports``.  ``counted``: each row is a distinct report with its count in
    :data:`MULTIPLICITY` (:func:`_counted_statistics`)."""
    from ..io.layout import decoding

    encode = decoding(mechanism.encode_reports, mechanism, codes, "reports")
    total = None
    for batch in batches:
        if batch.num_rows == 0:
            continue
        values = encode(table_values(batch, columns, kind))
        if counted:
            stats = _counted_statistics(estimator, mechanism, values, batch.column(MULTIPLICITY).to_numpy())
        else:
            stats = estimator.aggregate_values(mechanism, values)
        if stats is not None:
            total = stats if total is None else total + stats
    return total


def _counted_statistics(estimator, mechanism, values, counts):
    """The statistics of the reports that each row of ``values`` stands for, ``counts`` times each (None if
    there are none), without rebuilding them.  Statistics add exactly (integers and exact sums), so those of
    ``m`` copies of a set of reports follow Horner's scheme along the binary digits of ``m``: from the highest
    digit down, double the total (add it to itself) and add the statistics of the rows whose count has that
    digit set.  One aggregate call per digit, on distinct reports alone (at most 2^16 rows); rebuilding
    10^8 piecewise reports from 1645 codes with ``np.repeat`` and aggregating them took 0.30 s."""
    counts = np.asarray(counts, dtype=np.int64)
    if counts.size == 0 or int(counts.max()) <= 0:
        return None
    total = None
    for digit in reversed(range(int(counts.max()).bit_length())):
        if total is not None:
            total = total + total
        rows = ((counts >> digit) & 1).astype(bool)
        if rows.any():
            stats = estimator.aggregate_values(mechanism, values[rows])
            total = stats if total is None else total + stats
    return total


def counts_equal_reports(mechanism: Mechanism, columns) -> bool:
    """Whether Spark counts equal reports before they reach Python: one-column label reports (at most d
    values), and reports of a mechanism that declares at most :data:`COUNTED_ALPHABET` distinct ones."""
    if mechanism.report_kind == "label" and len(columns) == 1:
        return True
    size = mechanism.report_alphabet_size()
    return size is not None and size <= COUNTED_ALPHABET


def estimate_spark(frame, estimator, *, mechanism: Mechanism, columns=None, codes: str = "labels",
                   count_reports: bool = True):
    """The estimate of a Spark DataFrame of reports of ``mechanism`` (module docstring; callers take
    it from :func:`mechanism_of`) by the :class:`Estimator` ``estimator``; ``count_reports=False``
    sends every report through Arrow (for comparisons: bench/bench_spark.py)."""
    estimator.check_accepts(mechanism)
    columns = list(columns or mechanism.report_columns())
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DataError(f"no column {', '.join(map(repr, missing))}; columns are: {', '.join(frame.columns)}")
    kind = column_kind(mechanism, False, codes)
    mechanism_spec = mechanism.spec_json
    # A label report takes at most d values, a declared alphabet at most COUNTED_ALPHABET: Spark counts
    # them in the JVM, and only the distinct reports with their counts cross to Python (0.48 s against
    # 14.6 s for every report through Arrow at 10^8 label reports, 0.58 s against 15.1 s for piecewise
    # codes: bench/bench_spark.py, docs/benchmarks.md "Spark").
    counted = count_reports and counts_equal_reports(mechanism, columns)
    if count_reports and _sums_bit_columns(frame, columns, mechanism, estimator):
        return estimator.estimate_passes(lambda chosen: _bit_column_statistics(frame, columns, mechanism, chosen))
    in_place = _in_place_statistics(frame, columns, mechanism, estimator) if count_reports else None
    if in_place is not None:
        from ..stats.sufficient import SufficientStats

        n, statistics = in_place
        return estimator.estimate_passes(lambda chosen: SufficientStats(chosen.statistics_spec_json,
                                                                        mechanism.spec_json, n, statistics))
    if counted and _two_reports_at_most(frame, columns, mechanism):
        found = _two_adjacent_values(frame, columns[0])
        if found is not None:
            return estimator.estimate_passes(lambda chosen: _driver_statistics(
                found, frame.schema[columns[0]].dataType, mechanism, chosen, columns, kind, codes))
    reports = frame.select(*columns)
    if counted:
        reports = reports.groupBy(*columns).count().withColumnRenamed("count", MULTIPLICITY)

    if estimator.multipass:
        reports = reports.cache()  # read once from its source, then from the executors' memory

    def aggregate(chosen):
        estimator_spec = chosen.spec_json

        def partition(batches):
            return _partition_statistics(batches, mechanism_spec, estimator_spec, columns, kind, codes, counted)

        parts = reports.mapInArrow(partition, "statistics binary").rdd.map(lambda row: pickle.loads(row.statistics))
        try:
            return parts.treeReduce(operator.add)
        except ValueError as exc:  # an empty RDD: no partition held a report
            if "empty" not in str(exc).lower():
                raise
            raise _no_rows() from None
        except Exception as exc:  # an executor's error arrives wrapped in Spark's; say the ldpest one
            raise _ldpest_error(exc) from None
    try:
        with _sql_conf(frame, _counting_settings(frame) if counted else {}):
            return estimator.estimate_passes(aggregate)
    finally:
        if estimator.multipass:
            reports.unpersist()


def _counting_settings(frame) -> dict[str, str]:
    """Session settings while Spark counts equal reports: hash aggregation into a vectorised map (off by
    default), and as many shuffle partitions as the session's default parallelism where that is fewer than
    its own setting (200 by default: the counts are at most a few distinct reports per task, and each
    partition is a Python task in ``mapInArrow``).
    ``ldpest.estimate`` of 10^8 piecewise codes: 0.58 s with both, 0.69 s with the map alone and 1.14 s with
    neither, against 0.47 s for plain Spark's three sums of the column (``bench/bench_spark.py --mechanism
    piecewise --repeat 5``, bench/results/spark-numbers.txt)."""
    try:
        parallelism = max(1, int(frame.sparkSession.sparkContext.defaultParallelism))
    except Exception:  # Spark Connect has no SparkContext: leave the partitions as they are
        return dict(_VECTORIZED_MAP)
    partitions = min(parallelism, int(frame.sparkSession.conf.get("spark.sql.shuffle.partitions", "200")))
    return {**_VECTORIZED_MAP, "spark.sql.shuffle.partitions": str(partitions)}


_VECTORIZED_MAP = {"spark.sql.codegen.aggregate.map.vectorized.enable": "true"}
# while ldpest's own aggregations run: arithmetic without overflow checks (ANSI mode, on by default in Spark 4),
# whose results ldpest checks itself, so that a value out of range is refused with its own error
_NO_ANSI = {"spark.sql.ansi.enabled": "false"}


@contextlib.contextmanager
def _sql_conf(frame, settings: dict[str, str]):
    """The frame's session with ``settings`` while the block runs, then as it was (unset where it was)."""
    conf = frame.sparkSession.conf
    before = {key: conf.get(key, None) for key in settings}
    for key, value in settings.items():
        conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                conf.unset(key)
            else:
                conf.set(key, value)


_INTEGER_TYPES = ("ByteType", "ShortType", "IntegerType", "LongType")
_INTEGRAL_TYPES = (*_INTEGER_TYPES, "BooleanType")
_FLOAT_TYPES = ("DoubleType", "FloatType")


def _columns_of_types(frame, columns, types: tuple[str, ...]) -> bool:
    """Whether every one of ``columns`` has one of the Spark ``types`` (their class names)."""
    found = {field.name: type(field.dataType).__name__ for field in frame.schema.fields}
    return all(found.get(column) in types for column in columns)


def _no_rows() -> DataError:
    return DataError("no reports: the DataFrame holds no rows")


def _two_reports_at_most(frame, columns, mechanism) -> bool:
    """One integer (or boolean) report column of a mechanism whose reports take at most two values (a declared
    alphabet of 2, e.g. duchi's codes; or two categories)."""
    if len(columns) != 1 or not _columns_of_types(frame, columns, _INTEGRAL_TYPES):
        return False
    size = mechanism.report_alphabet_size()
    return (size is not None and size <= 2) or (mechanism.report_kind == "label" and len(mechanism.categories) <= 2)


def _two_adjacent_values(frame, column: str) -> tuple[list[int], list[int]] | None:
    """``(values, counts)`` of a report column holding at most two adjacent integers, from one aggregation
    (the number of rows and of values, the least, the greatest and the sum: about what plain Spark's sums
    cost, where its ``groupBy().count()`` costs twice that); None where a value is missing or they are
    further apart (then Spark counts them, and the reports' own check names the bad one)."""
    from pyspark.sql import functions as F

    value = F.col(column).cast("long")
    with _sql_conf(frame, _NO_ANSI):  # a sum beyond a long wraps, and the values then fail the test below
        n, present, low, high, total = frame.agg(F.count(F.lit(1)), F.count(value), F.min(value), F.max(value),
                                                 F.sum(value)).collect()[0]
    if n == 0:
        raise _no_rows()
    if present != n or high - low > 1:
        return None
    if high == low:
        return [low], [n]
    at_high = total - low * n
    return [low, high], [n - at_high, at_high]


def _driver_statistics(found, spark_type, mechanism, estimator, columns, kind, codes):
    """The statistics of counted reports ``found`` (``(values, counts)``) on the driver, checked and
    aggregated as an executor does them (:func:`_batch_statistics`)."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_type

    values, counts = found
    batch = pa.RecordBatch.from_arrays([pa.array(values).cast(to_arrow_type(spark_type)),
                                        pa.array(counts, type=pa.int64())], names=[columns[0], MULTIPLICITY])
    try:
        return _batch_statistics([batch], mechanism, estimator, columns, kind, codes, counted=True)
    except DataError as exc:  # as an executor's: the row of a table of counts is no row of the reports
        raise DataError(f"on Spark: {exc.message}") from None


def _sums_bit_columns(frame, columns, mechanism, estimator) -> bool:
    """Whether Spark can sum the report columns itself: reports of 0/1 columns whose statistic is their sums
    (:meth:`ldpest.FrequencyOracle.bit_column_statistic`), an estimator whose statistics are the oracle's
    (``aggregates_frequency_statistics``), one pass, and integer or boolean columns (others, e.g. doubles,
    are checked value by value in Python)."""
    if not (estimator.aggregates_frequency_statistics and not estimator.multipass
            and getattr(mechanism, "bit_column_statistic", lambda: None)() is not None):
        return False
    return _columns_of_types(frame, columns, _INTEGRAL_TYPES)


_LATTICE_UNITS = float(1 << 62)  # |value| below 2^62 steps: a long holds it exactly (try_sum says if sums do)


def _in_place_statistics(frame, columns, mechanism, estimator):
    """``(n, statistics)`` that Spark computes where the reports are stored, in one aggregation with the checks of
    the reports (:func:`_number_column_statistics`, :func:`_linear_hash_statistics`), or None."""
    if estimator.multipass:
        return None
    for statistics in (_number_column_statistics, _linear_hash_statistics, _xxh32_statistics):
        found = statistics(frame, columns, mechanism, estimator)
        if found is not None:
            return found
    return None


HASHED_IN_PLACE = 24  # categories at most whose supports Spark counts itself: above, Arrow and numpy are faster
# (10^7 reports: 0.99, 1.95 and 8.1 s in the JVM at d = 4, 16 and 64, against 3.4 s through Arrow; docs/benchmarks.md)


def _linear_hash_statistics(frame, columns, mechanism, estimator):
    """Local hashing's supports (:meth:`ldpest.FrequencyOracle.linear_hash_statistic`) counted by Spark for at most
    :data:`HASHED_IN_PLACE` categories, with the frequency estimator's statistics: one aggregation of the number
    of reports, of complete ones, the least and greatest of each column, and for each category ``j`` the number
    of reports with ``y P <= g ((a j + c) mod P) < (y + 1) P`` (exact in longs: every term is below 2^62 once
    the columns are in range; ANSI mode is off, so that values out of range wrap instead of failing, and are
    then refused by the range checks).  None where not declared or a check fails (then Arrow, where the
    reports' own check names the bad value)."""
    from pyspark.sql import functions as F

    declared = mechanism.linear_hash_statistic() if isinstance(mechanism, FrequencyOracle) else None
    if (declared is None or not estimator.aggregates_frequency_statistics or len(columns) != 3
            or len(mechanism.categories) > HASHED_IN_PLACE or not _columns_of_types(frame, columns, _INTEGER_TYPES)):
        return None
    name, prime, g = declared
    a, c, y = (F.col(column).cast("long") for column in columns)
    low, width = y * F.lit(prime), F.lit(prime)
    aggregates = [F.count(F.lit(1)), F.count(a + c + y), F.min(a), F.max(a), F.min(c), F.max(c), F.min(y), F.max(y)]
    for j in range(len(mechanism.categories)):
        scaled = ((a * F.lit(j) + c) % width) * F.lit(g)
        aggregates.append(F.sum(((scaled >= low) & (scaled < low + width)).cast("int")))
    with _sql_conf(frame, _NO_ANSI):
        row = list(frame.agg(*aggregates).collect()[0])
    n, complete, a_low, a_high, c_low, c_high, y_low, y_high = row[:8]
    if n == 0:
        raise _no_rows()
    if complete != n or a_low < 1 or a_high >= prime or c_low < 0 or c_high >= prime or y_low < 0 or y_high >= g:
        return None
    return n, {name: np.array(row[8:], dtype=np.int64)}


def _xxh32_statistics(frame, columns, mechanism, estimator):
    """Local hashing's xxh32 supports (:meth:`ldpest.FrequencyOracle.decimal_xxh32_statistic`) counted by Spark for
    at most :data:`HASHED_IN_PLACE` categories, with the frequency estimator's statistics: one aggregation of the
    number of reports, of complete ones, the least and greatest ``y``, the least seed, and for each category
    ``j`` the number of reports with ``XXH32(str(j), s mod 2^32) mod g = y`` (:func:`_xxh32_columns`).  None where
    not declared or a check fails (then Arrow, where the reports' own check names the bad value)."""
    from pyspark.sql import functions as F

    declared = mechanism.decimal_xxh32_statistic() if isinstance(mechanism, FrequencyOracle) else None
    if (declared is None or not estimator.aggregates_frequency_statistics or len(columns) != 2
            or len(mechanism.categories) > HASHED_IN_PLACE or not _columns_of_types(frame, columns, _INTEGER_TYPES)):
        return None
    name, g = declared
    y, seed = (F.col(column).cast("long") for column in columns)
    hashes = _xxh32_columns(seed, range(len(mechanism.categories)))
    supports = [F.sum(((h % F.lit(g)) == y).cast("int")) for h in hashes]
    with _sql_conf(frame, _NO_ANSI):
        row = list(frame.agg(F.count(F.lit(1)), F.count(y + seed), F.min(y), F.max(y), F.min(seed),
                             *supports).collect()[0])
    n, complete, y_low, y_high, seed_low = row[:5]
    if n == 0:
        raise _no_rows()
    if complete != n or y_low < 0 or y_high >= g or seed_low < 0:
        return None
    return n, {name: np.array(row[5:], dtype=np.int64)}


def _xxh32_columns(seed, inputs) -> list:
    """One long column per number of ``inputs`` (each below 10^15): XXH32 of its decimal string under the seed
    column ``seed`` modulo 2^32 (:mod:`ldpest.util.xxh32`), to be evaluated with ANSI mode off.

    The input's bytes are constants, so a round is one addition, a rotation and a multiplication, in longs masked
    to 32 bits; a product of two 32-bit values wraps modulo 2^64 and keeps its low 32 bits exact.  Each is one
    nested expression, in which a rotation or shift reads its operand twice: Spark's code generation computes a
    repeated subexpression once.  Measured at 10^7 reports, d = 16 (``bench/bench_spark.py --n 10000000 --mechanism
    local-hashing-xxh32 --d 16``): 2.29 s nested, 73 s with one ``select`` per round, which Spark keeps apart
    (bench/results/spark-xxh32.txt)."""
    from pyspark.sql import functions as F

    mask = F.lit(xxh32.MASK)

    def mixed(h, bits: int, factor: int):
        return (h.bitwiseXOR(F.shiftright(h, bits)) * F.lit(factor)).bitwiseAND(mask)

    def round_of(h, term: int, bits: int, factor: int):
        h = (h + F.lit(term)).bitwiseAND(mask)
        return (F.shiftleft(h, bits).bitwiseOR(F.shiftright(h, 32 - bits)).bitwiseAND(mask) * F.lit(factor)) \
            .bitwiseAND(mask)

    hashes = []
    for value in inputs:
        data = str(value).encode("ascii")
        whole = len(data) - len(data) % 4
        h = (seed.bitwiseAND(mask) + F.lit(xxh32.P5 + len(data))).bitwiseAND(mask)
        for at in range(0, whole, 4):
            h = round_of(h, int.from_bytes(data[at:at + 4], "little") * xxh32.P3 & xxh32.MASK, 17, xxh32.P4)
        for byte in data[whole:]:
            h = round_of(h, byte * xxh32.P5 & xxh32.MASK, 11, xxh32.P1)
        h = mixed(mixed(h, 15, xxh32.P2), 13, xxh32.P3)
        hashes.append(h.bitwiseXOR(F.shiftright(h, 16)))
    return hashes


def _number_column_statistics(frame, columns, mechanism, estimator):
    """``(n, statistics)`` computed by Spark in one aggregation where the reports are stored, for an estimator of
    one pass over number columns whose statistics are their exact sums on a lattice
    (:meth:`ldpest.Estimator.lattice_column_statistic`: ``frequency`` of one-hot Laplace, ``histogram-mean`` of
    Laplace cells) or the counts of values at most a threshold (:meth:`ldpest.Estimator.threshold_count_statistic`:
    ``histogram-cdf`` of Laplace cells); None otherwise, or where a check fails (then the reports go through
    Arrow, where they are checked one by one)."""
    if not _columns_of_types(frame, columns, _FLOAT_TYPES + _INTEGRAL_TYPES):
        return None
    lattice = estimator.lattice_column_statistic(mechanism)
    if lattice is not None and math.frexp(lattice[1])[0] == 0.5:
        return _lattice_column_sums(frame, columns, *lattice)
    threshold = estimator.threshold_count_statistic(mechanism)
    return _threshold_column_counts(frame, columns, *threshold) if threshold is not None else None


def _threshold_column_counts(frame, columns, name: str, threshold: float):
    """``(n, {name: int64 counts})``: the number of reports and, for each column, the number of values at most
    ``threshold`` and the number of values that are not finite numbers (missing, NaN, infinite: 0 for the
    counts to stand).  None where any is not (then the reports' own check names it)."""
    from pyspark.sql import functions as F

    aggregates = [F.count(F.lit(1))]
    for column in columns:
        value = F.col(column).cast("double")
        aggregates += [F.sum(F.when(value <= F.lit(threshold), 1).otherwise(0)),
                       F.sum(F.when(F.abs(value) < F.lit(math.inf), 0).otherwise(1))]
    row = list(frame.agg(*aggregates).collect()[0])
    n, counts, not_finite = row[0], row[1::2], row[2::2]
    if n == 0:
        raise _no_rows()
    if any(not_finite):
        return None
    return n, {name: np.array(counts, dtype=np.int64)}


def _lattice_column_sums(frame, columns, name: str, step: float):
    """``(n, {name: ExactSum of the columns})`` from one aggregation: the number of reports and, for each column
    in units ``u`` of ``step`` (a power of two, so ``u`` is exact), the sum of ``u`` cast to a long
    (``try_sum``: null on overflow), the sum of ``|u - rint(u)|`` (0 exactly when every value is on the
    lattice: no term is negative; a missing value counts 1, NaN makes it NaN) and the largest ``|u|`` (below
    2^62, where a long holds every such ``u``).  The long sums are then exact, so the statistics are those of
    :meth:`ExactSum.of` to the bit.  ANSI mode is off while it runs, so that a value no long holds (NaN, an
    infinity) is cast without an error and found by the other two aggregates.  None where any check fails:
    then the reports go through Arrow, where they are checked and summed one by one (and a bad value named).
    At 10^8 reports these separate aggregates took 1.19-1.54x plain Spark's double sums (``bench/bench_spark.py
    --mechanism laplace``); one test of every value in a ``when`` took 1.54-1.95x in scratch runs."""
    from pyspark.sql import functions as F

    from ..stats.exactsum import ExactSum

    aggregates = [F.count(F.lit(1))]
    for column in columns:
        u = F.col(column).cast("double") * F.lit(1.0 / step)  # exact: a power of two
        aggregates += [F.try_sum(u.cast("long")), F.sum(F.coalesce(F.abs(u - F.rint(u)), F.lit(1.0))),
                       F.max(F.abs(u))]
    with _sql_conf(frame, _NO_ANSI):
        row = list(frame.agg(*aggregates).collect()[0])
    n, sums, off_lattice, largest = row[0], row[1::3], row[2::3], row[3::3]
    if n == 0:
        raise _no_rows()
    if any(total is None for total in sums) or not all(off == 0 and most < _LATTICE_UNITS
                                                       for off, most in zip(off_lattice, largest, strict=True)):
        return None
    exponent = math.frexp(step)[1] - 1
    return n, {name: ExactSum(np.array([int(total) for total in sums], dtype=object), exponent, (len(columns),))}


def _bit_column_statistics(frame, columns, mechanism, estimator):
    """The statistics of 0/1 report columns summed by Spark in one aggregation: the number of reports, of
    reports without a missing value, the least and greatest value of any column, each column's sum and,
    where every report must hold a fixed number of ones, the least and greatest number per report: four
    aggregates beside the sums (a count, least and greatest value of every column took 1.89 s where these
    take 1.49 and plain Spark's sums 1.11-1.20, at 10^7 reports, d = 16, bench/bench_spark.py).  Checked on
    the driver as ``encode_reports`` would; a failed check is looked up column by column, to name the
    column."""
    from pyspark.sql import functions as F

    from ..stats.sufficient import SufficientStats

    name, ones = mechanism.bit_column_statistic()
    values = [F.col(column).cast("long") for column in columns]
    per_report = sum(values[1:], values[0])  # missing where any value is
    least, greatest = (F.least(*values), F.greatest(*values)) if len(values) > 1 else (values[0], values[0])
    aggregates = [F.count(F.lit(1)), F.count(per_report), F.min(least), F.max(greatest)]
    aggregates += [F.sum(value) for value in values]
    if ones is not None:
        aggregates += [F.min(per_report), F.max(per_report)]
    with _sql_conf(frame, _NO_ANSI):  # 10% faster (3 x 10^7 reports, d = 16: 2.25 against 2.49 s), and a value no
        row = list(frame.agg(*aggregates).collect()[0])  # sum of a report holds is refused, not a Spark error
    n, complete, low, high = row[:4]
    if n == 0:
        raise _no_rows()
    if complete != n or low < 0 or high > 1:
        _name_the_bad_column(frame, columns, values, mechanism)
    if ones is not None and not row[-2] == row[-1] == ones:
        raise DataError(f"reports of {mechanism.name!r} must hold {ones} ones each; they hold {row[-2]} to {row[-1]}")
    sums = np.array(row[4:4 + len(columns)], dtype=np.int64)
    return SufficientStats(estimator.statistics_spec_json, mechanism.spec_json, n, {name: sums})


def _name_the_bad_column(frame, columns, values, mechanism):
    """Raise the DataError that says which of ``columns`` (read as the Spark expressions ``values``) holds a
    missing value or a value other than 0 and 1."""
    from pyspark.sql import functions as F

    aggregates = [F.count(F.lit(1))]
    for value in values:
        aggregates += [F.count(value), F.min(value), F.max(value)]
    row = list(frame.agg(*aggregates).collect()[0])
    for index, column in enumerate(columns):
        present, least, greatest = row[1 + 3 * index:4 + 3 * index]
        if present != row[0]:
            raise DataError(f"reports of {mechanism.name!r}: column {column!r} has {row[0] - present} missing "
                            "value(s)")
        if least < 0 or greatest > 1:
            raise DataError(f"reports of {mechanism.name!r} must be 0/1; column {column!r} holds values from "
                            f"{least} to {greatest}")
    raise AssertionError("a report column failed its check in one aggregation and passed it in the other")


def _ldpest_error(exc: Exception) -> Exception:
    """The ldpest error (DataError, ParameterError) an executor raised, from the text of Spark's
    exception; other errors as they are."""
    import re

    found = re.findall(r"ldpest\.util\.errors\.(DataError|ParameterError): (.*)", str(exc))
    if not found:
        return exc
    kind, message = found[-1]
    return (DataError if kind == "DataError" else ParameterError)(f"on Spark: {message.strip()}")


def estimate_parquet_on_spark(path, master: str, build_estimator, *, mechanism=None, columns=None,
                              codes: str = "labels"):
    """``ldpest estimate reports.parquet --scheduler local[2]`` (or ``spark://host:7077``);
    ``build_estimator(mechanism)`` makes the estimator the options name."""
    spark = session(master)
    try:
        frame = read_parquet(spark, path) if mechanism is None else spark.read.parquet(str(path))
        chosen = mechanism_of(frame, mechanism, columns)
        return estimate_spark(frame, build_estimator(chosen), mechanism=chosen, columns=columns or None, codes=codes)
    finally:
        spark.stop()

