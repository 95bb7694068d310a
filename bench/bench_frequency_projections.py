"""Squared l2 error of the frequency estimate after each projection, on the same exact draws.

A geometric truth ``theta_j ~ exp(-j / 8)``; each draw is the exact law of the oracle's statistics
for n reports (``Estimator.simulate``), finalised with ``projection`` simplex, positive and mle.

    .venv/bin/python bench/bench_frequency_projections.py randomized-response 0.5 100 10000 50
    .venv/bin/python bench/bench_frequency_projections.py hadamard-response 4 100 10000 50
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import ldpest

PROJECTIONS = ("simplex", "positive", "mle")


def errors(name: str, epsilon: float, d: int, n: int, reps: int, seed: int = 0) -> tuple[dict[str, float], dict]:
    """Mean squared l2 error per projection over ``reps`` exact draws, and the mle's mean steps
    (``mle_iterations``: Newton or EM steps, 0 for a closed form), its method and mean seconds per finalize."""
    mechanism = ldpest.mechanism(name, epsilon=epsilon, categories=list(range(d)))
    truth = np.exp(-np.arange(d) / 8.0)
    truth /= truth.sum()
    estimators = {projection: ldpest.estimator("frequency", projection=projection) for projection in PROJECTIONS}
    rng = np.random.default_rng(seed)
    totals = dict.fromkeys(PROJECTIONS, 0.0)
    steps = seconds = 0.0
    method = ""
    for _ in range(reps):
        stats = estimators["simplex"].simulate(mechanism, truth, n, rng)
        for projection, estimator in estimators.items():
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ldpest.EstimateWarning)
                result = estimator.finalize(stats.__class__(estimator.statistics_spec_json, stats.mechanism_spec,
                                                            stats.n, stats.arrays))
            if projection == "mle":
                seconds += time.perf_counter() - start
                steps += result.attrs.get("mle_iterations", 0)
                method = result.attrs.get("mle_method", "")
            totals[projection] += float(np.sum((result["probability"].values - truth) ** 2))
    return ({projection: total / reps for projection, total in totals.items()},
            {"steps": steps / reps, "method": method, "seconds": seconds / reps})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mechanism")
    parser.add_argument("epsilon", type=float)
    parser.add_argument("d", type=int)
    parser.add_argument("n", type=int)
    parser.add_argument("reps", type=int)
    args = parser.parse_args()
    found, mle = errors(args.mechanism, args.epsilon, args.d, args.n, args.reps)
    cells = "  ".join(f"{projection} {value * 1e3:.2f}" for projection, value in found.items())
    print(f"{args.mechanism} epsilon={args.epsilon:g} d={args.d} n={args.n} reps={args.reps}: "
          f"squared l2 error x 1e-3: {cells}; mle {mle['steps']:.1f} steps ({mle['method']}), {mle['seconds']:.4f} s")


if __name__ == "__main__":
    main()
