"""The Walsh-Hadamard transform two ways: numpy butterflies (log2 size passes, a Python loop) and
``ldpest.stats.transforms.fwht`` (products with +-1 matrices of at most 128 rows, one per 7 bits of the
index), over the shapes the estimators use: one row, the bootstrap's 60, and 10^4.

    .venv/bin/python bench/bench_fwht.py

Then Hadamard response's default estimate (``projection="auto"``, whose covariance products and simulations
take 20-30 transforms) with each, timed alternately (this machine's speed drifts between runs).
"""

from __future__ import annotations

import time
import timeit

import numpy as np

import ldpest
from ldpest.stats.transforms import _butterflies, fwht  # noqa: PLC2701  the two ways compared


def per_call(function, number: int) -> float:
    return min(timeit.repeat(function, number=number, repeat=5)) / number * 1e6


def main() -> None:
    print(f"numpy {np.__version__}; microseconds a call, best of 5")
    print(f"{'size':>7}{'rows':>7}{'butterflies':>13}{'fwht':>9}{'ratio':>7}")
    for size in [8, 32, 128, 512, 1024, 2 ** 14, 2 ** 17]:
        for rows in [1, 60, 10_000]:
            if rows * size > 8_000_000:
                continue
            values = np.random.default_rng(0).random((rows, size))
            number = max(1, 200_000 // (rows * size))
            slow = per_call(lambda: _butterflies(values), number)
            fast = per_call(lambda: fwht(values), number)
            print(f"{size:>7}{rows:>7}{slow:>13.1f}{fast:>9.1f}{slow / fast:>7.2f}", flush=True)
    hadamard_estimates()


def hadamard_estimates(repeat: int = 15) -> None:
    import ldpest_multinomial.hadamard as hadamard

    print("\nhadamard-response default estimate at epsilon 1, ms, best of 15, the two transforms alternately")
    print(f"{'d':>6}{'n':>8}{'butterflies':>13}{'fwht':>9}{'ratio':>7}")
    try:
        for d, n in [(20, 10 ** 5), (100, 10 ** 4), (1000, 10 ** 4), (10 ** 5, 10 ** 4)]:
            mech = ldpest.mechanism("hadamard-response", epsilon=1.0, categories=list(range(d)))
            reports = mech.privatize(np.random.default_rng(0).integers(0, d, n), rng=np.random.default_rng(1))
            best = {"butterflies": np.inf, "fwht": np.inf}
            for _ in range(repeat if d < 10 ** 5 else 3):
                for name, transform in (("butterflies", _butterflies), ("fwht", fwht)):
                    hadamard.fwht = transform
                    start = time.perf_counter()
                    ldpest.estimate(reports)
                    best[name] = min(best[name], time.perf_counter() - start)
            print(f"{d:>6}{n:>8}{best['butterflies'] * 1e3:>13.2f}{best['fwht'] * 1e3:>9.2f}"
                  f"{best['butterflies'] / best['fwht']:>7.2f}", flush=True)
    finally:
        hadamard.fwht = fwht


if __name__ == "__main__":
    main()
