"""The fixed cost of an estimate: ``ldpest.estimate`` on 10 reports, per mechanism (issue 28).

Each row times the whole call (aggregate, finalize, the labelled result) with the default estimator
(for frequency oracles ``projection="auto"``, which simulates to choose), with ``projection="simplex"``
(frequency oracles), the latter with the result built by ``xr.Dataset(...)`` instead of ldpest's assembly
(ldpest/contract/assembly.py), and an ``xr.Dataset`` of the same variables alone for scale, in one run.
Then what ``auto``'s choice costs at 10^4 reports and d = 10, 100, 1000, beside ``simplex``.
Best of --repeat rounds of --number calls each (--number / 200 for the second table):

    .venv/bin/python bench/bench_fixed_cost.py     # output: bench/results/fixed-cost.txt
"""

from __future__ import annotations

import argparse
import timeit
import warnings

import numpy as np

import ldpest
import ldpest.contract.assembly as assembly
from ldpest.util.xarray import xr

CASES = [
    ("randomized-response", {"categories": [0, 1, 2]}, lambda rng: rng.integers(0, 3, 10)),
    ("unary-randomized-response", {"categories": [0, 1, 2]}, lambda rng: rng.integers(0, 3, 10)),
    ("hadamard-response", {"categories": [0, 1, 2]}, lambda rng: rng.integers(0, 3, 10)),
    ("laplace", {"categories": [0, 1, 2]}, lambda rng: rng.integers(0, 3, 10)),
    ("laplace-histogram", {"low": [0], "high": [1], "bins": 10}, lambda rng: rng.uniform(size=(10, 1))),
    ("duchi", {"low": 0, "high": 1}, lambda rng: rng.uniform(size=10)),
    ("hybrid", {"low": 0, "high": 1}, lambda rng: rng.uniform(size=10)),
]


CHOICE_N = 10_000
CHOICE_ORACLES = ("randomized-response", "unary-randomized-response", "subset-selection", "local-hashing",
                  "hadamard-response", "laplace")


def best_us(call, number: int, repeat: int) -> float:
    return min(timeit.repeat(call, number=number, repeat=repeat)) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    warnings.simplefilter("ignore", ldpest.EstimateWarning)  # 10 reports are uninformative, as expected
    print(f"ldpest {ldpest.__version__}; estimate on 10 reports at epsilon 1, us per call, best of {args.repeat}")
    print(f"{'mechanism':28} {'default':>8} {'simplex':>8} {'simplex with xr.Dataset()':>26} {'ratio':>6} "
          f"{'xr.Dataset() alone':>19}")
    for name, params, draw in CASES:
        mechanism = ldpest.mechanism(name, epsilon=1.0, **params)
        reports = mechanism.privatize(draw(np.random.default_rng(1)), rng=1)
        fixed = ldpest.estimator("frequency", projection="simplex") if isinstance(
            mechanism, ldpest.FrequencyOracle) else None
        result = ldpest.estimate(reports, fixed)
        data_vars = {key: (variable.dims, variable.values) for key, variable in result.data_vars.items()}
        coords = {key: result[key].values for key in result.coords}
        timings = [best_us(lambda: ldpest.estimate(reports), args.number, args.repeat),
                   best_us(lambda: ldpest.estimate(reports, fixed), args.number, args.repeat)]
        with assembly.constructor_only():
            timings.append(best_us(lambda: ldpest.estimate(reports, fixed), args.number, args.repeat))
        alone = best_us(lambda: xr.Dataset(data_vars, coords=coords), args.number, args.repeat)
        print(f"{name:28} {timings[0]:8.1f} {timings[1]:8.1f} {timings[2]:26.1f} {timings[2] / timings[1]:6.2f} "
              f"{alone:19.1f}", flush=True)

    print(f"\nthe cost of the choice: estimate of {CHOICE_N} reports of a skewed truth (theta_j ~ exp(-12.5 j / d)) "
          f"at epsilon 1, ms per call, best of {args.repeat}")
    print(f"{'mechanism':28} {'d':>5} {'simplex':>9} {'auto':>9} {'ratio':>6}  auto's choice")
    for name in CHOICE_ORACLES:
        for d in (10, 100, 1000):
            mechanism = ldpest.mechanism(name, epsilon=1.0, categories=list(range(d)))
            truth = np.exp(-12.5 * np.arange(d) / d)
            reports = mechanism.privatize(np.random.default_rng(0).choice(d, CHOICE_N, p=truth / truth.sum()), rng=1)
            simplex, auto = ldpest.estimator("frequency", projection="simplex"), ldpest.estimator("frequency")
            number = max(1, args.number // 200)
            timings = [best_us(lambda e=e: ldpest.estimate(reports, e), number, args.repeat) / 1e3
                       for e in (simplex, auto)]
            chosen = ldpest.estimate(reports, auto).attrs["projection"]
            print(f"{name:28} {d:5d} {timings[0]:9.2f} {timings[1]:9.2f} {timings[1] / timings[0]:6.1f}  {chosen}",
                  flush=True)


if __name__ == "__main__":
    main()
