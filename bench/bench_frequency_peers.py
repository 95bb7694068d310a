"""ldpest's default frequency estimate beside every post-processing that the peers offer, on the same
reports (issue 23): full-domain and top-10 squared error, and the ratio default / best.

For each oracle, epsilon, d, n and truth (``skewed``: ``theta_j ~ exp(-12.5 j / d)``; ``flat``), ``reps``
draws of the reports' statistics (exact draws where the oracle can simulate them, otherwise privatised
reports of data drawn from the truth). From each draw:
- ldpest: ``frequency`` with its default ``projection="auto"``, and ``projection="simplex"`` (the
  default before issue 23);
- multi-freq-ldpy 0.2.5: clip and renormalise (``MI``) and the iterative Bayesian update (``IBU``) on the
  reports' support counts, as its aggregators call them;
- pure-ldp 1.2.0: its three normalisations of the unbiased estimate (additive, simplex, threshold cut).

The peers run in their own environment (bench/peer_estimators.py in bench/.peers, made by peers.py).
multi-freq-ldpy has no Hadamard response: there its clip is applied to the unbiased estimate and it
has no IBU. The ratio is ldpest's default over the best of all the others (its paired standard error
in brackets); top-10 is the default over the simplex projection on the ten most frequent categories.

    .venv/bin/python bench/bench_frequency_peers.py --reps 20 > bench/results/frequency-peers.txt
    .venv/bin/python bench/bench_frequency_peers.py --summarise bench/results/frequency-peers.txt
    .venv/bin/python bench/bench_frequency_peers.py --oracles optimized-unary-encoding --d 100 --n 10000
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import warnings

import numpy as np
from bench_frequency_likelihood import register_example_plugin, truth_of
from peers import HERE, ensure_peer_env

import ldpest
from ldpest import SufficientStats

ORACLES = ("randomized-response", "optimized-unary-encoding", "local-hashing", "subset-selection",
           "hadamard-response")


class PeerEstimators:
    """bench/peer_estimators.py kept running in the peers' environment."""

    def __init__(self):
        self.process = subprocess.Popen([str(ensure_peer_env()), str(HERE / "peer_estimators.py")],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def __call__(self, task: dict) -> dict:
        self.process.stdin.write(json.dumps(task) + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())


def draws(mechanism, truth: np.ndarray, n: int, reps: int, rng: np.random.Generator):
    """The statistics of ``reps`` sets of n reports."""
    estimator = ldpest.estimator("frequency")
    exact = hasattr(mechanism, "simulate_frequency_statistics")
    data = None if exact else rng.choice(len(truth), size=n, p=truth)
    for _ in range(reps):
        if exact:
            yield estimator.simulate(mechanism, truth, n, rng)
        else:
            yield estimator.aggregate(mechanism.privatize(data, rng=rng))


def ldpest_estimate(stats, projection: str, picks: dict) -> np.ndarray:
    estimator = ldpest.estimator("frequency", projection="auto" if projection == "default" else projection)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ldpest.EstimateWarning)
        result = estimator.finalize(SufficientStats(estimator.statistics_spec_json, stats.mechanism_spec,
                                                    stats.n, stats.arrays))
    if projection == "default":
        picks[result.attrs["projection"]] = picks.get(result.attrs["projection"], 0) + 1
    return result["probability"].values


def cell(peers: PeerEstimators, name: str, epsilon: float, d: int, n: int, shape: str, reps: int,
         seed: int = 0) -> dict:
    mechanism = ldpest.mechanism(name, epsilon=epsilon, categories=list(range(d)))
    truth = truth_of(shape, d)
    affine = hasattr(mechanism, "binomial_model")
    choices = ("default", "simplex", "positive", "shrink") + (("ibu",) if affine else ())
    estimates: dict[str, list[np.ndarray]] = {f"ldpest {p}": [] for p in choices}
    task = {"n": n, "p": None, "q": None, "counts": [], "unbiased": [], "check_ibu": d <= 100}
    if affine:
        offset, gap = mechanism.binomial_model()
        task["p"], task["q"] = offset + gap, offset
    picks: dict[str, int] = {}
    for stats in draws(mechanism, truth, n, reps, np.random.default_rng(seed)):
        for projection in choices:
            estimates[f"ldpest {projection}"].append(ldpest_estimate(stats, projection, picks))
        task["unbiased"].append(mechanism.frequency_estimate(stats.arrays, n)[0].tolist())
        if affine:
            task["counts"].append(np.asarray(stats.arrays[mechanism.count_statistic]).tolist())
    found = peers(task)
    ibu_check, iterations = found.pop("ibu_check"), found.pop("ibu_iterations")
    estimates.update({key: [np.asarray(v) for v in value] for key, value in found.items() if value})
    top = np.argsort(-truth, kind="stable")[:10]
    errors = {key: np.array([np.sum((e - truth) ** 2) for e in value]) for key, value in estimates.items()}
    top_errors = {key: np.array([np.sum((e[top] - truth[top]) ** 2) for e in value])
                  for key, value in estimates.items()}
    others = [key for key in errors if key != "ldpest default"]
    best = min(others, key=lambda key: errors[key].mean())
    difference = errors["ldpest default"] - errors[best]
    return {"means": {key: float(v.mean()) for key, v in errors.items()}, "best": best,
            "ratio": float(errors["ldpest default"].mean() / errors[best].mean()),
            "ratio_se": float(difference.std(ddof=1) / np.sqrt(reps) / errors[best].mean()),
            "top10": float(top_errors["ldpest default"].mean() / top_errors["ldpest simplex"].mean()),
            "ibu_check": ibu_check, "picks": picks, "ibu_unconverged": sum(i >= 10_000 for i in iterations)}


def summarise(path: str) -> None:
    """Per oracle and n, from a results file of this script (its rounded means): the default's error over
    the best of the simplex projection and the peers' estimates (issue 23's target), median and worst, the
    cells above 1.05 and how many of them the peers' unconverged IBU wins; the same over the best of every
    estimate, ldpest's fixed choices included; and the worst top-10 ratio to the simplex projection."""
    import re
    from collections import defaultdict

    rows = defaultdict(list)
    for line in open(path):
        head = re.match(r"^(\S+)\s+n (\d+) .* (skewed|flat) .* top-10 (\S+);", line)
        if head is None or " | " not in line:
            continue
        means = dict(re.findall(r"((?:ldpest|multi-freq-ldpy|pure-ldp) [^\d]+?) ([\d.e+-]+)(?:  |$)",
                                line.split(" | ", 1)[1].strip()))
        means = {key: float(value) for key, value in means.items()}
        default = means.pop("ldpest default")
        peers = [value for key, value in means.items() if not key.startswith("ldpest") or key == "ldpest simplex"]
        peer_best = min(peers)
        ibu_best = means.get("multi-freq-ldpy IBU", np.inf) == peer_best
        rows[head.group(1), int(head.group(2))].append(
            (default / peer_best, ibu_best, default / min(means.values()), float(head.group(4)), head.group(3)))
    print("| oracle | n | default / best of simplex and peers: median | worst | worst, skewed truths "
          "| cells above 1.05 (IBU best) | default / best of all: worst | worst top-10 |")
    print("|---|---|---|---|---|---|---|---|")
    for (name, n), cells in rows.items():
        ratios = [cell[0] for cell in cells]
        above = [cell for cell in cells if cell[0] > 1.05]
        skewed = max(cell[0] for cell in cells if cell[4] == "skewed")
        print(f"| {name} | 10^{round(np.log10(n))} | {np.median(ratios):.3f} | {max(ratios):.3g} | {skewed:.3f} | "
              f"{len(above)} of "
              f"{len(cells)} ({sum(cell[1] for cell in above)}) | {max(cell[2] for cell in cells):.3g} | "
              f"{max(cell[3] for cell in cells):.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--summarise", metavar="RESULTS", help="print the per-oracle table of a results file")
    parser.add_argument("--oracles", default=",".join(ORACLES))
    parser.add_argument("--epsilons", default="0.5,1,2,4")
    parser.add_argument("--d", default="10,100,1000")
    parser.add_argument("--n", default="10000,100000")
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    if args.summarise:
        summarise(args.summarise)
        return
    register_example_plugin()
    peers = PeerEstimators()
    print(f"{args.reps} draws per cell; mean squared l2 error x 1e-3; ratio = ldpest default / best other "
          "(paired standard error); top-10 = default / simplex on the ten most frequent categories")
    ratios, tops, checks = [], [], []
    for name, n, epsilon, d, shape in itertools.product(
            args.oracles.split(","), map(int, args.n.split(",")), map(float, args.epsilons.split(",")),
            map(int, args.d.split(",")), ("skewed", "flat")):
        found = cell(peers, name, epsilon, d, n, shape, args.reps)
        ratios.append(found["ratio"])
        tops.append(found["top10"])
        if found["ibu_check"] is not None:
            checks.append(found["ibu_check"])
        means = "  ".join(f"{key} {value * 1e3:.4g}" for key, value in found["means"].items())
        print(f"{name:25s} n {n:<6d} eps {epsilon:<3g} d {d:<4d} {shape:6s} ratio {found['ratio']:.3f} "
              f"({found['ratio_se']:.3f}) best other: {found['best']}; top-10 {found['top10']:.3f}; IBU stopped at "
              f"10^4 iterations: {found['ibu_unconverged']}/{args.reps}; default's picks {found['picks']} | {means}",
              flush=True)
    print(f"cells: {len(ratios)}; default / best other: median {np.median(ratios):.3f}, worst {max(ratios):.3f}; "
          f"cells above 1.05: {sum(r > 1.05 for r in ratios)}; top-10 / simplex worst {max(tops):.3f}")
    if checks:
        print(f"structured IBU against multi-freq-ldpy's dense IBU: largest difference {max(checks):.2e}")


if __name__ == "__main__":
    main()
