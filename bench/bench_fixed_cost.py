"""The fixed cost of an estimate: ``ldpest.estimate`` on 10 reports, per mechanism (issue 28).

Each row times the whole call (aggregate, finalize, the labelled result) and, in the same run,
the same call with the result built by ``xr.Dataset(...)`` instead of ldpest's assembly
(ldpest/contract/assembly.py), and an empty ``xr.Dataset`` of the same variables for scale.
Best of --repeat rounds of --number calls each:

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


def best_us(call, number: int, repeat: int) -> float:
    return min(timeit.repeat(call, number=number, repeat=repeat)) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    warnings.simplefilter("ignore", ldpest.EstimateWarning)  # 10 reports are uninformative, as expected
    print(f"ldpest {ldpest.__version__}; estimate on 10 reports at epsilon 1, us per call, best of {args.repeat}")
    print(f"{'mechanism':28} {'ldpest':>8} {'with xr.Dataset()':>18} {'ratio':>6} {'xr.Dataset() alone':>19}")
    for name, params, draw in CASES:
        reports = ldpest.mechanism(name, epsilon=1.0, **params).privatize(draw(np.random.default_rng(1)), rng=1)
        result = ldpest.estimate(reports)
        data_vars = {key: (variable.dims, variable.values) for key, variable in result.data_vars.items()}
        coords = {key: result[key].values for key in result.coords}
        timings = [best_us(lambda: ldpest.estimate(reports), args.number, args.repeat)]
        with assembly.constructor_only():
            timings.append(best_us(lambda: ldpest.estimate(reports), args.number, args.repeat))
        alone = best_us(lambda: xr.Dataset(data_vars, coords=coords), args.number, args.repeat)
        print(f"{name:28} {timings[0]:8.1f} {timings[1]:18.1f} {timings[1] / timings[0]:6.2f} {alone:19.1f}")


if __name__ == "__main__":
    main()
