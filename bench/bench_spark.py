"""ldpest on Spark beside plain Spark doing the same aggregation (issue 28).

One Parquet report file of --n randomized-response reports (d categories, written by ldpest's
ReportWriter in row groups of 10^7), read by one Spark session (``local[2]`` by default):

* plain Spark: ``spark.read.parquet(path).groupBy("report").count().collect()``, the counts
  every frequency estimate needs, and the frequencies from them in numpy on the driver;
* ldpest: ``ldpest.estimate(read_parquet(spark, path))``: Spark counts the distinct labels,
  each partition's Arrow batches of (label, count) are validated and turned into statistics in
  ``mapInArrow``, tree-reduced, and the labelled result with standard errors made on the driver;
* the same with ``count_labels=False``: every report sent through Arrow to Python.

Interleaved, best of --repeat, after one warm-up of each:

    .venv/bin/python bench/bench_spark.py --n 100000000     # output: bench/results/spark.txt
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
from ldpest.engine.spark import estimate_spark, read_parquet, session
from ldpest.io.writers import ReportWriter

BLOCK = 10_000_000


def write_file(path: Path, n: int, d: int, epsilon: float) -> ldpest.Mechanism:
    mechanism = ldpest.mechanism("randomized-response", epsilon=epsilon, categories=list(range(d)))
    rng = np.random.default_rng(1)
    with ReportWriter(path, mechanism, rng="bench 1") as writer:
        for start in range(0, n, BLOCK):
            size = min(BLOCK, n - start)
            truth = np.minimum(rng.geometric(0.3, size) - 1, d - 1)
            writer.write(mechanism.privatize(truth, rng=rng).values)
    return mechanism


def plain_spark(spark, path: Path, mechanism) -> np.ndarray:
    rows = spark.read.parquet(str(path)).groupBy("report").count().collect()
    counts = np.zeros(len(mechanism.categories))
    for row in rows:
        counts[row["report"]] = row["count"]
    n = counts.sum()
    e = math.exp(mechanism.epsilon)
    d = len(counts)
    p, q = e / (e + d - 1), 1 / (e + d - 1)
    return (counts / n - q) / (p - q)


def timed(call) -> tuple[float, object]:
    start = time.perf_counter()
    value = call()
    return time.perf_counter() - start, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000_000)
    parser.add_argument("--d", type=int, default=16)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--split-mib", type=int, default=4, help="spark.sql.files.maxPartitionBytes in MiB")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "reports.parquet"
        started = time.perf_counter()
        mechanism = write_file(path, args.n, args.d, args.epsilon)
        print(f"ldpest {ldpest.__version__}; {args.n:,} randomized-response reports, d = {args.d}, "
              f"{path.stat().st_size / 2**20:.0f} MiB Parquet (written in {time.perf_counter() - started:.0f} s); "
              f"Spark {args.master}, best of {args.repeat} after a warm-up, interleaved")
        warnings.simplefilter("ignore", FutureWarning)  # pyspark on pandas 3 (pyproject.toml says more)
        spark = session(args.master)
        spark.sparkContext.setLogLevel("ERROR")
        # one task per row group of 10^7 reports (4-10 MiB), so that both runs use every core
        spark.conf.set("spark.sql.files.maxPartitionBytes", str(args.split_mib << 20))
        try:
            frame = read_parquet(spark, path)
            runs = {"plain Spark groupBy().count()": lambda: plain_spark(spark, path, mechanism),
                    "ldpest.estimate (mapInArrow + treeReduce)": lambda: ldpest.estimate(frame),
                    "every report through Arrow (count_labels=False)": lambda: estimate_spark(
                        frame, ldpest.estimator("frequency"), mechanism=mechanism, count_labels=False)}
            best = dict.fromkeys(runs, math.inf)
            values = {}
            for run in runs.values():  # warm-up: the JVM, the Python workers
                run()
            for _ in range(args.repeat):
                for name, run in runs.items():
                    seconds, values[name] = timed(run)
                    best[name] = min(best[name], seconds)
        finally:
            spark.stop()
    names = list(best)
    plain, ours, uncounted = best.values()
    for name, seconds in best.items():
        print(f"{name:44} {seconds:8.2f} s")
    print(f"ratio ldpest / plain Spark: {ours / plain:.2f} (every report through Arrow: {uncounted / plain:.2f})")
    ours_values, plain_values = values[names[1]]["unprojected"].values, values[names[0]]
    print(f"same frequencies: max |difference| {np.abs(ours_values - plain_values).max():.1e}")


if __name__ == "__main__":
    main()
