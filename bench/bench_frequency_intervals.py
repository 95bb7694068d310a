"""Coverage of ldpest's 95% intervals for category frequencies at small and large n.

Each cell draws the exact aggregate statistics of n reports (``Estimator.simulate``: the law of the
sufficient statistics, not an approximation) ``--reps`` times, runs ``ldpest.confidence_interval`` on
every result, and prints the share of intervals that hold the truth, for an interior frequency
(0.3), and for frequencies 0 and 1 (boundary).  The binomial standard error of a cell is about
``sqrt(0.95 * 0.05 / reps)`` (0.0049 at 2000).

    .venv/bin/python bench/bench_frequency_intervals.py --reps 2000
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import ldpest

SIZES = (1, 10, 30, 1000, 100_000)
CASES = (  # (mechanism, epsilon, d): Hadamard response has one block at epsilon 1, single-category
    ("laplace", 1.0, 3),  # blocks at epsilon 4 with d = 10, blocks of 4 at epsilon 4 with d = 100
    ("laplace", 8.0, 3),
    ("hadamard-response", 1.0, 10),
    ("hadamard-response", 4.0, 10),
    ("hadamard-response", 4.0, 100),
    ("hadamard-response", 8.0, 100),
    ("randomized-response", 1.0, 3),
)


def coverage(name: str, epsilon: float, d: int, n: int, reps: int, seed: int) -> tuple[np.ndarray, str]:
    """Shares of ``reps`` intervals that hold theta_0 = 0.3, theta_1 = 0.7 (or 1 - 0.3) and theta_2 = 0."""
    mechanism = ldpest.mechanism(name, epsilon=epsilon, categories=list(range(d)))
    estimator = ldpest.estimator("frequency")
    theta = np.zeros(d)
    theta[:2] = 0.3, 0.7
    rng = np.random.default_rng(seed)
    hits = np.zeros(d)
    for _ in range(reps):
        stats = estimator.simulate(mechanism, theta, n, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ldpest.EstimateWarning)
            result = ldpest.confidence_interval(estimator.finalize(stats))
        hits += (result["lower"].values <= theta) & (theta <= result["upper"].values)
    return hits[:3] / reps, result.attrs["interval_method"]


def one_category_coverage(name: str, epsilon: float, n: int, reps: int, seed: int) -> float:
    """The share for theta = (1, 0, ...): every report from category 0 (a boundary truth)."""
    mechanism = ldpest.mechanism(name, epsilon=epsilon, categories=list(range(3)))
    estimator = ldpest.estimator("frequency")
    theta = np.array([1.0, 0.0, 0.0])
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(reps):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ldpest.EstimateWarning)
            result = ldpest.confidence_interval(estimator.finalize(estimator.simulate(mechanism, theta, n, rng)))
        hits += result["lower"].values[0] <= 1.0 <= result["upper"].values[0]
    return hits / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"95% intervals, {args.reps} exact draws per cell; theta = 0.3 | 0.7 | 0 | 1 (d = 3)")
    print(f"{'mechanism':22} {'eps':>4} {'d':>4} {'n':>7}   0.3    0.7    0      1      method")
    for name, epsilon, d in CASES:
        for n in SIZES:
            shares, method = coverage(name, epsilon, d, n, args.reps, args.seed)
            whole = one_category_coverage(name, epsilon, n, args.reps, args.seed)
            cells = " ".join(f"{share:6.3f}" for share in (*shares, whole))
            print(f"{name:22} {epsilon:4g} {d:4d} {n:7d} {cells}  {method}", flush=True)


if __name__ == "__main__":
    main()
