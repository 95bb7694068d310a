"""projection='auto' against every fixed choice, on the same draws: mean squared l2 error and the ratio
auto / best fixed choice, over a grid of oracles, epsilons, d and truths (issue 23, part 2).

Each draw is the oracle's exact statistics where it can simulate them (randomized response, unary,
Hadamard, one-hot Laplace), otherwise privatised reports of fixed data drawn from the truth (subset
selection, local hashing).  The truths: ``skewed`` (``theta_j ~ exp(-12.5 j / d)``) and ``flat``.

    .venv/bin/python bench/bench_frequency_auto.py --reps 100 > bench/results/frequency-auto.txt
    .venv/bin/python bench/bench_frequency_auto.py --oracles randomized-response --d 100 --reps 20
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings

import numpy as np

import ldpest
from ldpest import SufficientStats
from ldpest_multinomial.estimator import ibu_offset

MLE_ORACLES = ("randomized-response", "hadamard-response")  # projection="mle" is a fixed choice there
ORACLES = ("randomized-response", "unary-randomized-response", "subset-selection", "local-hashing",
           "hadamard-response", "laplace")


def truth_of(shape: str, d: int) -> np.ndarray:
    values = np.exp(-12.5 * np.arange(d) / d) if shape == "skewed" else np.ones(d)
    return values / values.sum()


def cell(name: str, epsilon: float, d: int, n: int, shape: str, reps: int, seed: int = 0) -> dict:
    """Mean squared error per choice, the paired standard error of auto - best, auto's picks, seconds."""
    mechanism = ldpest.mechanism(name, epsilon=epsilon, categories=list(range(d)))
    truth = truth_of(shape, d)
    fixed = ["simplex", "positive", "shrink"] + (["mle"] if name in MLE_ORACLES else [])
    if name not in MLE_ORACLES[:1] and ibu_offset(mechanism, mechanism.frequency_statistics(
            mechanism.privatize(np.arange(d), rng=0).values)) is not None:
        fixed.append("ibu")  # support counts (Hadamard response: where it has one block)
    estimators = {p: ldpest.estimator("frequency", projection=p) for p in (*fixed, "auto")}
    rng = np.random.default_rng(seed)
    exact = hasattr(mechanism, "simulate_frequency_statistics")
    data = None if exact else rng.choice(d, size=n, p=truth)
    errors = {p: np.empty(reps) for p in estimators}
    top_errors = {p: np.empty(reps) for p in estimators}
    top = np.argsort(-truth, kind="stable")[:10]  # the ten most frequent categories (the first ten if flat)
    picks: dict[str, int] = {}
    seconds = 0.0
    for rep in range(reps):
        if exact:
            stats = estimators["auto"].simulate(mechanism, truth, n, rng)
        else:
            stats = estimators["auto"].aggregate(mechanism.privatize(data, rng=rng))
        for projection, estimator in estimators.items():
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ldpest.EstimateWarning)
                result = estimator.finalize(SufficientStats(estimator.statistics_spec_json, stats.mechanism_spec,
                                                            stats.n, stats.arrays))
            if projection == "auto":
                seconds += time.perf_counter() - start
                picks[result.attrs["projection"]] = picks.get(result.attrs["projection"], 0) + 1
            errors[projection][rep] = np.sum((result["probability"].values - truth) ** 2)
            top_errors[projection][rep] = np.sum((result["probability"].values[top] - truth[top]) ** 2)
    best = min(fixed, key=lambda p: errors[p].mean())
    difference = errors["auto"] - errors[best]
    scale = errors[best].mean() or 1.0  # shrink can be exactly uniform, and so exact, on every flat draw
    return {"means": {p: float(v.mean()) for p, v in errors.items()}, "best": best,
            "ratio": float(errors["auto"].mean() / errors[best].mean()) if errors[best].mean() else
            (1.0 if errors["auto"].mean() == 0 else float("inf")),
            "ratio_se": float(difference.std(ddof=1) / np.sqrt(reps) / scale),
            "top10_ratio": float(top_errors["auto"].mean() / top_errors["simplex"].mean()),
            "picks": picks, "seconds": seconds / reps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--oracles", default=",".join(ORACLES))
    parser.add_argument("--epsilons", default="0.5,1,2,4")
    parser.add_argument("--d", default="10,100")
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=100)
    args = parser.parse_args()
    print(f"n = {args.n}, {args.reps} draws per cell; squared l2 error x 1e-3; ratio = auto / best fixed choice "
          "(paired standard error); top-10 = auto / simplex on the ten most frequent categories; auto's picks; "
          "auto's time per estimate")
    worst = worst_top = 0.0
    for name, epsilon, d, shape in itertools.product(args.oracles.split(","), map(float, args.epsilons.split(",")),
                                                     map(int, args.d.split(",")), ("skewed", "flat")):
        found = cell(name, epsilon, d, args.n, shape, args.reps)
        worst, worst_top = max(worst, found["ratio"]), max(worst_top, found["top10_ratio"])
        means = "  ".join(f"{p} {v * 1e3:8.3f}" for p, v in found["means"].items())
        print(f"{name:26s} eps {epsilon:<4g} d {d:<5d} {shape:6s}  {means}  ratio {found['ratio']:.3f} "
              f"({found['ratio_se']:.3f})  top-10 {found['top10_ratio']:.3f}  picks {found['picks']}  "
              f"{found['seconds'] * 1e3:.1f} ms", flush=True)
    print(f"worst ratio: {worst:.3f}; worst top-10 ratio to simplex: {worst_top:.3f}")


if __name__ == "__main__":
    main()
