"""ldpest on Spark beside plain Spark doing the same aggregation (issue 28).

One Parquet report file of --n reports of --mechanism (d categories, written by ldpest's ReportWriter in
row groups of 10^7), read by one Spark session (``local[2]`` by default):

* plain Spark: for randomized response ``spark.read.parquet(path).groupBy("report").count().collect()``,
  for unary bits and one-hot Laplace reports the sum of every column, ``agg(sum(report_0), ...)``: the counts
  (or sums) every frequency estimate needs, and the frequencies from them in numpy on the driver; for Laplace
  histogram cells ``agg(sum(cast(cell_0 <= 0.5 as int)), ...)`` and the densities from them; for local hashing
  each category's supports by long arithmetic (``y P <= g ((a j + c) mod P) < (y + 1) P``) in one aggregation,
  and the frequencies from them; for local hashing's xxh32 family (``local-hashing-xxh32``) XXH32 of each
  category's decimal string as one nested long expression per category, ANSI mode off; for numbers (duchi,
  piecewise: codes on an evenly spaced lattice) ``agg(count(1), sum(report), sum(report * report))``,
  the mean and its standard error in numpy; for the series (``laplace-series``, ``linf-sampling``; --d is k)
  every column's sum and every product's sum ``sum(z_i * z_j)``, ``i <= j``, in one aggregation (--sql-repeat),
  and MLlib's ``Summarizer`` with ``Correlation.corr`` (the same Gram matrix in the JVM);
* ldpest: ``ldpest.estimate(read_parquet(spark, path))``: Spark counts the distinct labels (each
  partition's Arrow batches of (label, count) are validated and turned into statistics in
  ``mapInArrow``, and tree-reduced; numbers' codes likewise) or sums the bit columns with their
  checks (one aggregation), or sums Laplace's double columns in long units of their lattice with a check that
  every value is on it (one aggregation), or for laplace-histogram (its default, histogram-cdf) counts each
  cell's values at most 1/2 with a check that every value is a finite number (one aggregation), and the
  labelled result with standard errors is made on the driver (local hashing: the same supports in one
  aggregation with the reports' checks, up to ``HASHED_IN_PLACE`` categories, for either hash family; beyond,
  through Arrow; the series: through Arrow, where each partition sums its reports and their Gram matrix);
* the same with ``count_reports=False``: every report sent through Arrow to Python;
* for counted reports, the same without the session settings that ldpest sets while Spark counts
  (``ldpest.engine.spark._counting_settings``): with the vectorised aggregation map alone, and with neither.
  Reports of two adjacent integer values (duchi's codes) are counted by one aggregation instead, with no
  settings, so these rows are left out for them.

Interleaved, best of --repeat, after one warm-up of each:

    .venv/bin/python bench/bench_spark.py --n 100000000     # output: bench/results/spark.txt
    .venv/bin/python bench/bench_spark.py --n 100000000 --mechanism unary-randomized-response
    .venv/bin/python bench/bench_spark.py --n 100000000 --mechanism piecewise   # or duchi
    .venv/bin/python bench/bench_spark.py --n 100000000 --mechanism laplace --d 4
    .venv/bin/python bench/bench_spark.py --n 100000000 --mechanism laplace-histogram --d 4   # d bins on [0, 1]
    .venv/bin/python bench/bench_spark.py --n 100000000 --mechanism local-hashing --d 16
    .venv/bin/python bench/bench_spark.py --n 100000000 --mechanism local-hashing-xxh32 --d 16
    .venv/bin/python bench/bench_spark.py --n 10000000 --mechanism laplace-series --d 16
    .venv/bin/python bench/bench_spark.py --n 10000000 --mechanism linf-sampling --d 64 --sql-repeat 0
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

import ldpest
import ldpest.engine.spark as spark_engine
from ldpest.engine.spark import estimate_spark, read_parquet, session
from ldpest.io.writers import ReportWriter

BLOCK = 10_000_000


NUMBERS = ("duchi", "piecewise")
XXH32 = "local-hashing-xxh32"  # local hashing with the peers' hash family
SERIES = {"laplace-series": "trigonometric", "linf-sampling": "walsh"}  # --d is k, the number of basis functions


def write_file(path: Path, name: str, n: int, d: int, epsilon: float) -> ldpest.Mechanism:
    if name in NUMBERS:
        mechanism = ldpest.mechanism(name, epsilon=epsilon, low=0.0, high=1.0)
    elif name == "laplace-histogram":
        mechanism = ldpest.mechanism(name, epsilon=epsilon, low=[0.0], high=[1.0], bins=d)
    elif name in SERIES:
        mechanism = ldpest.mechanism(name, epsilon=epsilon, basis=SERIES[name], k=d)
    elif name == XXH32:
        mechanism = ldpest.mechanism("local-hashing", epsilon=epsilon, categories=list(range(d)), hash_family="xxh32")
    else:
        mechanism = ldpest.mechanism(name, epsilon=epsilon, categories=list(range(d)))
    rng = np.random.default_rng(1)
    with ReportWriter(path, mechanism, rng="bench 1") as writer:
        for start in range(0, n, BLOCK):
            size = min(BLOCK, n - start)
            numbers = name in NUMBERS or name in SERIES or name == "laplace-histogram"
            truth = rng.beta(2, 5, size) if numbers else np.minimum(rng.geometric(0.3, size) - 1, d - 1)
            writer.write(mechanism.privatize(truth, rng=rng).values)
    return mechanism


def plain_spark(spark, path: Path, mechanism):
    frame = spark.read.parquet(str(path))
    if mechanism.name in NUMBERS:
        return plain_spark_mean(frame, mechanism)
    if mechanism.name in SERIES:
        return plain_spark_series(frame, mechanism)
    if mechanism.name == "laplace-histogram":  # histogram-cdf: the count of values at most 1/2 in each cell
        from pyspark.sql import functions as F

        from ldpest_histogram.estimators import HistogramCdf

        columns = mechanism.report_columns()
        # the sums of 0/1 casts: count_if took 3.66 s against 2.85 s at 10^8 reports, d = 4 (a scratch comparison)
        below = [F.sum((F.col(column) <= 0.5).cast("int")) for column in columns]
        row = frame.agg(F.count(F.lit(1)), *below).collect()[0]
        q0, q1 = HistogramCdf.thresholds(mechanism)
        masses = (q0 - np.array(row[1:], dtype=np.float64) / row[0]) / (q0 - q1)
        return masses * len(columns)  # densities: the cells of [0, 1] have width 1 / bins
    d, e = len(mechanism.categories), math.exp(mechanism.epsilon)
    if mechanism.name == "local-hashing" and mechanism.hash_family == "xxh32":
        return without_ansi(frame.sparkSession, lambda: plain_spark_xxh32(frame, mechanism))
    if mechanism.name == "local-hashing":  # each category's supports, y P <= g ((a j + c) mod P) < (y + 1) P
        return plain_spark_local_hashing(frame, mechanism)
    if mechanism.name == "laplace":  # one-hot plus noise: the column means are the frequencies
        from pyspark.sql import functions as F

        row = frame.agg(F.count(F.lit(1)), *[F.sum(column) for column in mechanism.report_columns()]).collect()[0]
        return np.array(row[1:], dtype=np.float64) / row[0]
    if mechanism.name == "unary-randomized-response":
        from pyspark.sql import functions as F

        row = frame.agg(F.count(F.lit(1)), *[F.sum(column) for column in mechanism.report_columns()]).collect()[0]
        p = math.sqrt(e) / (1 + math.sqrt(e))  # each bit kept with e^(epsilon/2) / (1 + e^(epsilon/2))
        return (np.array(row[1:], dtype=np.float64) / row[0] - (1 - p)) / (2 * p - 1)
    counts = np.zeros(d)
    for row in frame.groupBy("report").count().collect():
        counts[row["report"]] = row["count"]
    p, q = e / (e + d - 1), 1 / (e + d - 1)
    return (counts / counts.sum() - q) / (p - q)


def plain_spark_local_hashing(frame, mechanism) -> np.ndarray:
    """The supports of every category, counted by one aggregation of long arithmetic, and the unbiased frequencies
    from them (``(support / n - q*) / (p - q*)``, with ldpest's exact ``p`` and ``q*``)."""
    from pyspark.sql import functions as F

    prime, g = mechanism.params["prime"], mechanism.params["hash_range"]
    a, c, y = F.col("hash_a"), F.col("hash_c"), F.col("value").cast("long")
    low = y * F.lit(prime)
    supports = []
    for j in range(len(mechanism.categories)):
        scaled = ((a * F.lit(j) + c) % F.lit(prime)) * F.lit(g)
        supports.append(F.sum(((scaled >= low) & (scaled < low + F.lit(prime))).cast("int")))
    row = frame.agg(F.count(F.lit(1)), *supports).collect()[0]
    p, q = (float(v) for v in mechanism._support)  # noqa: SLF001  the exact probabilities ldpest decodes with
    return (np.array(row[1:], dtype=np.float64) / row[0] - q) / (p - q)


def plain_spark_xxh32(frame, mechanism) -> np.ndarray:
    """The supports of every category under the xxh32 family, ``XXH32(str(j), seed mod 2^32) mod g = value``, as
    one nested expression of long arithmetic per category (ANSI mode off: a product of two 32-bit values wraps
    modulo 2^64 and keeps its low 32 bits), in one aggregation; the frequencies from them.  Inputs below 10^4
    (fewer than 4 bytes: byte rounds only)."""
    from pyspark.sql import functions as F

    from ldpest.util.xxh32 import MASK, P1, P2, P3, P5

    if len(mechanism.categories) > 10_000:
        raise SystemExit("--mechanism local-hashing-xxh32: this baseline has byte rounds only, so --d at most 10000")
    mask, g = F.lit(MASK), mechanism.params["hash_range"]

    def rotl(h, bits):
        return F.shiftleft(h, bits).bitwiseOR(F.shiftright(h, 32 - bits)).bitwiseAND(mask)

    def times(h, factor):
        return (h * F.lit(factor)).bitwiseAND(mask)

    seed, value = F.col("seed").bitwiseAND(mask), F.col("value")
    supports = []
    for j in range(len(mechanism.categories)):
        data = str(j).encode("ascii")
        h = (seed + F.lit(P5 + len(data))).bitwiseAND(mask)
        for byte in data:
            h = times(rotl((h + F.lit(byte * P5)).bitwiseAND(mask), 11), P1)
        h = times(h.bitwiseXOR(F.shiftright(h, 15)), P2)
        h = times(h.bitwiseXOR(F.shiftright(h, 13)), P3)
        h = h.bitwiseXOR(F.shiftright(h, 16))
        supports.append(F.sum(((h % F.lit(g)) == value).cast("int")))
    row = frame.agg(F.count(F.lit(1)), *supports).collect()[0]
    p, q = (float(v) for v in mechanism.support_probabilities)
    return (np.array(row[1:], dtype=np.float64) / row[0] - q) / (p - q)


def plain_spark_series(frame, mechanism) -> np.ndarray:
    """The series estimate's statistics, every column's sum and every product's sum ``sum(z_i * z_j)`` for
    ``i <= j`` (the Gram matrix its standard errors need), in one aggregation; the coefficients from the sums
    (``B`` times the mean signs for linf-sampling, the mean reports for laplace-series)."""
    from pyspark.sql import functions as F

    columns = mechanism.report_columns()
    products = [F.sum(F.col(first) * F.col(second)) for at, first in enumerate(columns) for second in columns[at:]]
    row = frame.agg(F.count(F.lit(1)), *[F.sum(column) for column in columns], *products).collect()[0]
    scale = mechanism.scale if mechanism.name == "linf-sampling" else 1.0
    return scale * np.array(row[1:1 + len(columns)], dtype=np.float64) / row[0]


def mllib_series(spark, path: Path, mechanism) -> np.ndarray:
    """The same statistics by Spark's MLlib: the columns as one vector (``VectorAssembler``), their means by
    ``Summarizer`` and their Pearson correlations by ``Correlation.corr`` (a Gram matrix in the JVM), from which
    ``sum(z_i * z_j) = (n - 1) s_i s_j r_ij + n m_i m_j`` follows; the coefficients from the means."""
    from pyspark.ml.feature import VectorAssembler
    from pyspark.ml.stat import Correlation, Summarizer

    columns = mechanism.report_columns()
    frame = spark.read.parquet(str(path)).select(*[as_double(column) for column in columns])
    vectors = VectorAssembler(inputCols=columns, outputCol="z").transform(frame).select("z")
    correlation = Correlation.corr(vectors, "z").head()[0].toArray()
    summary = vectors.select(Summarizer.metrics("mean", "variance", "count").summary(vectors.z)).head()[0]
    mean, variance, n = summary["mean"].toArray(), summary["variance"].toArray(), summary["count"]
    spread = np.sqrt(variance)
    gram = (n - 1) * np.outer(spread, spread) * correlation + n * np.outer(mean, mean)
    scale = mechanism.scale if mechanism.name == "linf-sampling" else 1.0
    return scale * mean if np.isfinite(gram).all() else None


def as_double(column: str):
    from pyspark.sql import functions as F

    return F.col(column).cast("double").alias(column)


def plain_spark_mean(frame, mechanism) -> tuple[np.ndarray, float]:
    """The mean in data units from the count, sum and sum of squares of the codes (each code's value is
    ``values[0] + step * code``), with its standard error."""
    from pyspark.sql import functions as F

    n, total, squares = frame.agg(F.count(F.lit(1)), F.sum("report"),
                                  F.sum(F.col("report").cast("long") * F.col("report"))).collect()[0]
    values = np.asarray(mechanism.code_values)
    step = (values[-1] - values[0]) / (len(values) - 1)
    mean_code = total / n
    variance_code = (squares - n * mean_code ** 2) / (n - 1)
    mean = mechanism.to_data_units(values[0] + step * mean_code)
    stderr = step * math.sqrt(variance_code / n) * mechanism.half_width
    return np.array(mean), stderr


SETTINGS = [("ldpest.estimate, vectorised map only (200 partitions)",
             ("spark.sql.codegen.aggregate.map.vectorized.enable",)),
            ("ldpest.estimate, Spark's own settings", ())]


def without_settings(frame, keep):
    """``ldpest.estimate(frame)`` with only the ``keep`` settings of ``_counting_settings`` (Spark's own
    for the others)."""
    chosen = spark_engine._counting_settings  # noqa: SLF001  the settings are what this row measures
    def kept(frame):
        return {key: value for key, value in chosen(frame).items() if key in keep}
    spark_engine._counting_settings = kept  # noqa: SLF001
    try:
        return ldpest.estimate(frame)
    finally:
        spark_engine._counting_settings = chosen  # noqa: SLF001


def without_ansi(spark, call):
    """``call()`` with the session's ANSI mode off (no overflow checks in its arithmetic), then as it was."""
    before = spark.conf.get("spark.sql.ansi.enabled", None)
    spark.conf.set("spark.sql.ansi.enabled", "false")
    try:
        return call()
    finally:
        if before is None:
            spark.conf.unset("spark.sql.ansi.enabled")
        else:
            spark.conf.set("spark.sql.ansi.enabled", before)


def timed(call) -> tuple[float, object]:
    start = time.perf_counter()
    value = call()
    return time.perf_counter() - start, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000_000)
    parser.add_argument("--mechanism", default="randomized-response",
                        choices=["randomized-response", "unary-randomized-response", "laplace", "laplace-histogram",
                                 "local-hashing", XXH32, *NUMBERS, *SERIES])
    parser.add_argument("--d", type=int, default=16)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--split-mib", type=int, default=4, help="spark.sql.files.maxPartitionBytes in MiB")
    parser.add_argument("--sql-repeat", type=int, default=None,
                        help="runs of plain Spark's SQL aggregation (default --repeat; 0 leaves it out, and then "
                             "MLlib is plain Spark for the series: 2080 sums at k = 64 took 203 s for 10^6 reports)")
    parser.add_argument("--arrow-repeat", type=int, default=None,
                        help="runs of every report through Arrow (default --repeat; 0 leaves it out)")
    args = parser.parse_args()
    arrow_repeat = args.repeat if args.arrow_repeat is None else args.arrow_repeat
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "reports.parquet"
        started = time.perf_counter()
        mechanism = write_file(path, args.mechanism, args.n, args.d, args.epsilon)
        shape = ("numbers in [0, 1]" if args.mechanism in NUMBERS
                 else f"{SERIES[args.mechanism]} basis, k = {args.d}" if args.mechanism in SERIES
                 else f"{args.d} bins on [0, 1]" if args.mechanism == "laplace-histogram" else f"d = {args.d}")
        print(f"ldpest {ldpest.__version__}; {args.n:,} {args.mechanism} reports, {shape}, "
              f"{path.stat().st_size / 2**20:.0f} MiB Parquet (written in {time.perf_counter() - started:.0f} s); "
              f"Spark {args.master}, best of {args.repeat} after a warm-up, interleaved")
        warnings.simplefilter("ignore", FutureWarning)  # pyspark on pandas 3 (pyproject.toml says more)
        spark = session(args.master)
        spark.sparkContext.setLogLevel("ERROR")
        # one task per row group of 10^7 reports (4-10 MiB), so that both runs use every core
        spark.conf.set("spark.sql.files.maxPartitionBytes", str(args.split_mib << 20))
        try:
            frame = read_parquet(spark, path)
            numbers = args.mechanism in NUMBERS
            plain_name = "plain Spark " + {"randomized-response": "groupBy().count()",
                                           "local-hashing": "agg(sum(supports j), ...)",
                                           XXH32: "agg(sum(supports j by XXH32), ...)",
                                           "laplace-histogram": "agg(sum(cast(cell <= 0.5 as int)), ...)",
                                           **dict.fromkeys(SERIES, "agg(sum(z_i), sum(z_i * z_j), ...)")}.get(
                args.mechanism, "agg(count, sum, sum of squares)" if numbers else "agg(sum(column), ...)")
            two_values = spark_engine._two_reports_at_most  # noqa: SLF001  which path ldpest takes
            hashed = args.mechanism in ("local-hashing", XXH32) and args.d <= spark_engine.HASHED_IN_PLACE
            one_aggregation = (args.mechanism in ("unary-randomized-response", "laplace", "laplace-histogram") or hashed
                               or two_values(frame, mechanism.report_columns(), mechanism))
            counted = spark_engine.counts_equal_reports(mechanism, mechanism.report_columns())
            ours_name = "ldpest.estimate " + ("(one aggregation)" if one_aggregation
                                              else "(counted, mapInArrow + treeReduce)" if counted
                                              else "(mapInArrow + treeReduce)")
            default = ldpest.estimator(mechanism.default_estimator)
            arrow_name = "every report through Arrow (count_reports=False)"
            counts_name = "plain Spark groupBy().count() (ldpest's counts)"
            runs = {plain_name: lambda: plain_spark(spark, path, mechanism),
                    ours_name: lambda: ldpest.estimate(frame),
                    arrow_name: lambda: estimate_spark(frame, default, mechanism=mechanism, count_reports=False)}
            sql_repeat = args.repeat if args.sql_repeat is None or args.mechanism not in SERIES else args.sql_repeat
            repeats = {plain_name: sql_repeat, ours_name: args.repeat, arrow_name: arrow_repeat}
            # ANSI mode is off in ldpest's sums (the xxh32 baseline has it off anyway: its products wrap)
            if args.mechanism in ("local-hashing", "laplace", "unary-randomized-response"):
                ansi_name = plain_name + ", ANSI mode off"
                runs[ansi_name] = lambda: without_ansi(spark, lambda: plain_spark(spark, path, mechanism))
                repeats[ansi_name] = args.repeat
            if args.mechanism in SERIES:  # the Gram matrix by MLlib (the SQL aggregation has k (k + 3) / 2 sums)
                mllib_name = "plain Spark MLlib: Summarizer, Correlation.corr"
                runs[mllib_name] = lambda: mllib_series(spark, path, mechanism)
                repeats[mllib_name] = args.repeat
            if numbers:  # the statistic ldpest keeps (each code's count) by Spark alone
                runs[counts_name] = lambda: spark.read.parquet(str(path)).groupBy("report").count().collect()
                repeats[counts_name] = args.repeat
            if counted and not one_aggregation:  # what ldpest's session settings for counting give
                for settings_name, keep in SETTINGS:
                    runs[settings_name] = lambda keep=keep: without_settings(frame, keep)
                    repeats[settings_name] = args.repeat
            best = {name: math.inf for name in runs if repeats[name]}
            values = {}
            for name in best:  # warm-up: the JVM, the Python workers
                runs[name]()
            for round_number in range(args.repeat):
                for name in best:
                    if round_number < repeats[name]:
                        seconds, values[name] = timed(runs[name])
                        best[name] = min(best[name], seconds)
        finally:
            spark.stop()
    for name, seconds in best.items():
        print(f"{name:48} {seconds:8.2f} s (best of {repeats[name]})")
    if plain_name not in best:  # the series' SQL aggregation left out: MLlib is the baseline
        plain_name = mllib_name
    plain, ours = best[plain_name], best[ours_name]
    through_arrow = f" (every report through Arrow: {best[arrow_name] / plain:.2f})" if arrow_name in best else ""
    print(f"ratio ldpest / plain Spark: {ours / plain:.2f}{through_arrow}")
    if args.mechanism in SERIES and plain_name != mllib_name:
        print(f"ratio ldpest / plain Spark's MLlib: {ours / best[mllib_name]:.2f}")
    if counts_name in best:
        print(f"ratio ldpest / plain Spark's counts: {ours / best[counts_name]:.2f}")
    for name in best:
        if name.endswith("ANSI mode off"):
            print(f"ratio ldpest / {name}: {ours / best[name]:.2f}")
    for settings_name, _ in SETTINGS:
        if settings_name in best:
            print(f"ratio {settings_name} / plain Spark: {best[settings_name] / plain:.2f}")
    ours, plain = values[ours_name], values[plain_name]
    if args.mechanism in NUMBERS:
        plain, plain_stderr = plain
        print(f"same standard error: relative difference {abs(float(ours['stderr']) / plain_stderr - 1):.1e}")
    estimate = ours["coefficient"] if args.mechanism in SERIES else ours["unprojected"]
    if args.mechanism in SERIES and mechanism.basis.constant_first:
        plain = np.concatenate([[1.0], plain[1:]])  # the series estimate knows theta_1 = 1
    print(f"same estimate: max |difference| {np.abs(estimate.values - plain).max():.1e}")


if __name__ == "__main__":
    main()
