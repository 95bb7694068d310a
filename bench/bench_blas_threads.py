"""``auto`` on one BLAS thread (ldpest/util/blas.py) against the library's default threads, in one run:
the time of each of --draws estimates of Hadamard response's statistics (d = 100, epsilon 4, n = 10^4),
flat and skewed truths, the two ways alternating draw by draw; percentiles, ms.  "default" replaces
``one_blas_thread`` by a context that changes nothing.

    .venv/bin/python bench/bench_blas_threads.py     # output: bench/results/blas-threads.txt
"""

from __future__ import annotations

import argparse
import contextlib
import time
import warnings

import numpy as np

import ldpest
import ldpest.util.blas as blas


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=60)
    args = parser.parse_args()
    one_thread = blas.one_blas_thread
    d, epsilon, n = 100, 4.0, 10_000
    mechanism = ldpest.mechanism("hadamard-response", epsilon=epsilon, categories=list(range(d)))
    estimator = ldpest.estimator("frequency")
    print(f"ldpest {ldpest.__version__}; auto on hadamard-response, d = {d}, epsilon {epsilon}, n = {n}, "
          f"{args.draws} draws; ms per estimate: p10 p50 p90 max")
    for shape, truth in (("flat", np.full(d, 1.0 / d)), ("skewed", np.exp(-12.5 * np.arange(d) / d))):
        draws = [estimator.simulate(mechanism, truth / truth.sum(), n, np.random.default_rng(seed))
                 for seed in range(args.draws)]
        seconds = {"one BLAS thread": [], "default threads": []}
        for stats in draws:
            for way in seconds:
                blas.one_blas_thread = one_thread if way == "one BLAS thread" else contextlib.nullcontext
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ldpest.EstimateWarning)
                    start = time.perf_counter()
                    estimator.finalize(stats)
                    seconds[way].append(time.perf_counter() - start)
        blas.one_blas_thread = one_thread
        for way, values in seconds.items():
            p10, p50, p90, most = np.percentile(np.array(values[2:]) * 1e3, [10, 50, 90, 100])
            print(f"{shape:7s} {way:16s} {p10:7.1f} {p50:7.1f} {p90:7.1f} {most:7.1f}")


if __name__ == "__main__":
    main()
