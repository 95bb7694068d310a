"""oracle-histogram (cells sent by a frequency oracle) against laplace-histogram's histogram-cdf: the
variance of the cell estimates, from the closed forms and measured on real reports (issue 23, part 3).

For each number of cells and epsilon: the oracle that ``oracle="auto"`` takes, and the ratio of
histogram-cdf's summed variance ``sum_j Var(mu_tilde_j)`` to the oracle's ``sum_j Var(theta_hat_j)`` at the
uniform truth, from the closed forms; then the same ratio of mean summed squared errors measured over
``--reps`` estimates of n reports each (the oracle's from privatised points drawn from the truth,
histogram-cdf's from its exact statistics), with its standard error by the delta method; last, the
closed-form ratio of the variance each mechanism adds to the sampling variance of the cells.

    .venv/bin/python bench/bench_oracle_histogram.py --reps 100 > bench/results/oracle-histogram.txt
"""

from __future__ import annotations

import argparse
import math

import numpy as np

import ldpest
from ldpest_histogram.estimators import HistogramCdf


def closed_form_ratios(bins: int, epsilon: float) -> tuple[str, float, float]:
    """``(oracle, ratio, noise ratio)``: the summed variances' ratio, and that of what the mechanisms add to
    the sampling variance ``sum_j mu_j (1 - mu_j)`` that every unbiased estimate has."""
    masses = np.full(bins, 1.0 / bins)
    laplace = ldpest.mechanism("laplace-histogram", epsilon=epsilon, low=[0], high=[1], bins=bins)
    q0, q1 = HistogramCdf.thresholds(laplace)
    pi = q0 - masses * (q0 - q1)
    cdf = (pi * (1 - pi)).sum() / (q0 - q1) ** 2
    oracle = ldpest.mechanism("oracle-histogram", epsilon=epsilon, low=[0], high=[1], bins=bins).oracle
    variance = oracle.frequency_variance(np.append(masses, 0.0))[:bins].sum()
    sampling = (masses * (1 - masses)).sum()
    return oracle.name, cdf / variance, (cdf - sampling) / (variance - sampling)


def measured_ratio(bins: int, epsilon: float, n: int, reps: int, rng) -> tuple[float, float]:
    masses = np.full(bins, 1.0 / bins)
    mech = ldpest.mechanism("oracle-histogram", epsilon=epsilon, low=[0], high=[1], bins=bins)
    laplace = ldpest.mechanism("laplace-histogram", epsilon=epsilon, low=[0], high=[1], bins=bins)
    mean = ldpest.estimator("histogram-mean", projection="none")
    cdf = ldpest.estimator("histogram-cdf", projection="none")
    volume = 1.0 / bins
    oracle, noisy = [], []
    for _ in range(reps):
        points = rng.uniform(size=n)
        found = ldpest.estimate(mech.privatize(points, rng=rng), mean)["unprojected"].values * volume
        oracle.append(((found - masses) ** 2).sum())
        base = cdf.finalize(cdf.simulate(laplace, masses, n, rng))["unprojected"].values * volume
        noisy.append(((base - masses) ** 2).sum())
    oracle, noisy = np.array(oracle), np.array(noisy)
    ratio = noisy.mean() / oracle.mean()
    relative = math.hypot(noisy.std() / noisy.mean(), oracle.std() / oracle.mean())
    spread = ratio * relative / math.sqrt(reps)
    return ratio, spread


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bins", default="10,100")
    parser.add_argument("--epsilons", default="0.5,1,2,4,8")
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=100)
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    print(f"n = {args.n}, {args.reps} repetitions; ratio = histogram-cdf / oracle (above 1: the oracle is better)")
    print(f"{'cells':>6} {'epsilon':>8} {'auto oracle':>26} {'closed form':>12} {'measured':>9} {'+-':>6} "
          f"{'noise only':>11}")
    for bins in (int(b) for b in args.bins.split(",")):
        for epsilon in (float(e) for e in args.epsilons.split(",")):
            name, closed, noise = closed_form_ratios(bins, epsilon)
            ratio, spread = measured_ratio(bins, epsilon, args.n, args.reps, rng)
            print(f"{bins:>6} {epsilon:>8g} {name:>26} {closed:>12.3f} {ratio:>9.3f} {spread:>6.3f} {noise:>11.3f}",
                  flush=True)


if __name__ == "__main__":
    main()
