"""Accuracy figures of docs/numeric.md: interval coverage of the mean, and the ems distribution's
Wasserstein-1 error beside the best laplace-histogram (issue 24).

Coverage: exact multinomial draws of the code counts of n reports (``code_law``) through the real
estimator and ``confidence_interval``; the Wasserstein error: n = 10^5 Beta(5, 2) numbers per data
set, privatised and estimated as a user would.

    .venv/bin/python bench/bench_numeric_accuracy.py            # both, about 3 minutes here
    .venv/bin/python bench/bench_numeric_accuracy.py --reps 2000 --epsilons 1,4,8 --sets 0
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import stats

import ldpest
from ldpest_numeric.mechanisms import code_law

LAWS = {"high": ([10.0], [1.0]), "interior": ([3.3303], [1.0]), "two-point": ([0.0, 10.0], [0.5, 0.5]),
        "skewed": ([0.0, 2.0, 9.71], [0.1, 0.3, 0.6])}


def coverage(name: str, epsilon: float, n: int, law: str, reps: int, seed: int) -> float:
    mech, estimator = ldpest.mechanism(name, epsilon=epsilon, low=0, high=10), ldpest.estimator("mean")
    points, weights = LAWS[law]
    truth = float(np.dot(points, weights))
    hits = 0
    for count in np.random.default_rng(seed).multinomial(n, code_law(mech, points, weights), size=reps):
        result = ldpest.confidence_interval(estimator.finalize(ldpest.SufficientStats(
            estimator.statistics_spec_json, mech.spec_json, n, {"counts": count.astype(np.int64)})))
        hits += float(result["lower"]) <= truth <= float(result["upper"])
    return hits / reps


def w1_to_beta52(upper_edges, cdf) -> float:
    grid = np.linspace(0, 1, 20_001)
    estimate = np.interp(grid, np.concatenate([[0.0], upper_edges]), np.concatenate([[0.0], cdf]))
    return float(np.trapezoid(np.abs(estimate - stats.beta(5, 2).cdf(grid)), grid))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--sets", type=int, default=3, help="data sets for the Wasserstein errors (0: none)")
    parser.add_argument("--epsilons", default="1", help="epsilons of the coverage table, e.g. 1,4,8")
    args = parser.parse_args()
    for epsilon in (float(e) for e in args.epsilons.split(",")):
        print(f"95% interval coverage of the mean at epsilon {epsilon:g} ({args.reps} exact draws each)")
        print(f"{'mechanism':10} {'n':>8} " + " ".join(f"{law:>10}" for law in LAWS))
        for name in ("duchi", "piecewise", "hybrid"):
            for n in (10, 30, 100, 10_000, 1_000_000):
                row = [coverage(name, epsilon, n, law, args.reps, seed=n + len(law)) for law in LAWS]
                print(f"{name:10} {n:8d} " + " ".join(f"{c:10.3f}" for c in row), flush=True)
    if not args.sets:
        return
    print(f"\nWasserstein-1 to Beta(5, 2), n = 10^5, mean of {args.sets} data sets")
    print(f"{'epsilon':>7} {'ems':>8} {'best laplace-histogram (8/16/32 bins)':>38}")
    for epsilon in (0.5, 1.0, 2.0, 4.0):
        ems, histogram = [], []
        for seed in range(args.sets):
            rng = np.random.default_rng(seed)
            x = rng.beta(5, 2, 100_000)
            wave = ldpest.mechanism("square-wave", epsilon=epsilon, low=0, high=1)
            result = ldpest.estimate(wave.privatize(x, rng=rng), ldpest.estimator("ems", bootstrap=0))
            ems.append(w1_to_beta52(result["x_bounds"].values[:, 1], result["cdf"].values))
            best = np.inf
            for bins in (8, 16, 32):
                mech = ldpest.mechanism("laplace-histogram", epsilon=epsilon, low=0, high=1, bins=bins)
                masses = ldpest.estimate(mech.privatize(x, rng=rng), "histogram-cdf")["density"].values / bins
                best = min(best, w1_to_beta52(np.linspace(0, 1, bins + 1)[1:], np.cumsum(masses)))
            histogram.append(best)
        print(f"{epsilon:7g} {np.mean(ems):8.4f} {np.mean(histogram):38.4f}")


if __name__ == "__main__":
    main()
