"""How an estimate's time grows with the number of reports n and the number of categories d (issue 28:
a power of at most 1.05 over 10^4..10^7 reports and d up to 10^5), beside numpy's own floor for the
same reports: a ``bincount`` of index reports, a column sum of matrix reports.

    .venv/bin/python bench/bench_growth.py --repeat 3

Each row prints the best time at every size and the local exponent ``log(t2 / t1) / log(x2 / x1)``
between neighbours.  Growth in n: d = 20, n = 10^4..10^7.  Growth in d: n = 10^4 reports, d = 10..10^5
for index reports (randomized response, local hashing, Hadamard response) and d = 10..10^4 for the
(n, d) matrices (unary, subset selection, laplace), whose reports alone are n * d values.  The estimate
is the default one (``projection="auto"`` for the frequency oracles).  A fixed cost flattens the first
exponents, so the last ones say most.
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from pathlib import Path

import numpy as np

import ldpest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_frequency import best_time  # noqa: E402

INDEX = ["randomized-response", "local-hashing", "hadamard-response"]
MATRIX = ["unary-randomized-response", "subset-selection", "laplace"]


def numpy_floor(values) -> None:
    """The least an exact estimate must do: count index reports, or sum matrix reports' columns."""
    values = np.asarray(values)
    if values.ndim == 1:
        np.bincount(values)
    elif values.dtype == np.uint8:
        values.sum(axis=0, dtype=np.int64)
    else:
        values.sum(axis=0)


def row(name: str, what: str, sizes: list[int], make, repeat: int) -> None:
    ours, floor = [], []
    for size in sizes:
        mech, reports = make(size)
        ldpest.estimate(reports)  # warm
        ours.append(best_time(lambda: ldpest.estimate(reports), repeat))
        values = reports.values if name != "local-hashing" else reports.values[:, 2]
        floor.append(best_time(lambda: numpy_floor(values), repeat))

    def exponents(times):
        return " ".join(f"{math.log(b / a) / math.log(y / x):5.2f}" for a, b, x, y in
                        zip(times, times[1:], sizes, sizes[1:], strict=False))

    print(f"{name:<28}{what:>3} {' '.join(f'{t:9.4f}' for t in ours)}")
    print(f"{'':<28}{'':>3} exponents {exponents(ours)}   numpy floor's {exponents(floor)}", flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default=None, help="comma-separated mechanism names")
    parser.add_argument("--largest-n", type=float, default=1e7)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    chosen = [name for name in INDEX + MATRIX if not args.only or name in args.only.split(",")]
    ns = [n for n in (10 ** 4, 10 ** 5, 10 ** 6, 10 ** 7) if n <= args.largest_n]
    print(f"ldpest {ldpest.__version__}, numpy {np.__version__}; seconds, best of {args.repeat}; epsilon 1")
    for name in chosen:
        def by_n(n, name=name):
            mech = ldpest.mechanism(name, epsilon=1.0, categories=list(range(20)))
            return mech, mech.privatize(np.random.default_rng(0).integers(0, 20, n), rng=np.random.default_rng(1))
        print(f"{'':<28}  n {' '.join(f'{n:9.0e}' for n in ns)}")
        row(name, "n", ns, by_n, args.repeat)
    for name in chosen:
        ds = [10, 100, 1000, 10 ** 4] + ([10 ** 5] if name in INDEX else [])

        def by_d(d, name=name):
            mech = ldpest.mechanism(name, epsilon=1.0, categories=list(range(d)))
            codes = np.minimum(np.random.default_rng(0).geometric(5 / d, 10 ** 4) - 1, d - 1)  # skewed
            return mech, mech.privatize(codes, rng=np.random.default_rng(1))
        print(f"{'':<28}  d {' '.join(f'{d:9.0e}' for d in ds)}")
        row(name, "d", ds, by_d, args.repeat)


if __name__ == "__main__":
    main()
