"""Time of each shuffle bound at the issue's settings (issue 25: at most 5 s on one core for
n <= 10^6), one process, CPU time of one call:

    .venv/bin/python bench/bench_shuffle.py
"""

from __future__ import annotations

import math
import time

import ldpest
from ldpest.privacy.shuffle import VariationRatio, clone_epsilon, variation_ratio_epsilon

SETTINGS = [(10 ** 6, 4.0, 1e-6), (10 ** 4, 8.0, 1e-6), (10 ** 6, 1.0, 1e-8)]


def timed(call):
    start = time.process_time()
    value = call()
    return value, time.process_time() - start


def main() -> None:
    print(f"ldpest {ldpest.__version__}; CPU seconds of one call")
    print(f"{'n':>9} {'eps0':>5} {'delta':>7}  {'bound':34} {'epsilon':>10} {'seconds':>8}")
    for n, epsilon0, delta in SETTINGS:
        krr = ldpest.mechanism("randomized-response", epsilon=epsilon0, categories=list(range(100)))
        olh = ldpest.mechanism("local-hashing", epsilon=epsilon0, categories=list(range(100)))
        generic = VariationRatio.generic(epsilon0)
        rows = [
            ("variation-ratio, generic", lambda: variation_ratio_epsilon(generic, n, delta)[1]),
            ("variation-ratio, k-RR d = 100", lambda: variation_ratio_epsilon(krr.variation_ratio(), n, delta)[1]),
            ("variation-ratio, ldpest's OLH", lambda: variation_ratio_epsilon(olh.variation_ratio(), n, delta)[1]),
            ("clones (FMT), numerical", lambda: clone_epsilon(epsilon0, n, delta)[1]),
            ("shuffle_epsilon(k-RR), all bounds", lambda: ldpest.shuffle_epsilon(krr, n, delta).epsilon),
        ]
        for name, call in rows:
            value, seconds = timed(call)
            print(f"{n:9d} {epsilon0:5g} {delta:7.0e}  {name:34} {value:10.6g} {seconds:8.2f}")
    assert math.isfinite(value)


if __name__ == "__main__":
    main()
