"""ldpest side by side with plain numpy, pure-ldp and multi-freq-ldpy.

Times privatise + estimate of n records for each row (mechanism, d), best of
--repeat runs, and prints the ratios; then the throughput (reports per second)
of linf-sampling and laplace-histogram.  Targets (issues 2 and 7): ldpest within
2x of plain numpy and at least 10x faster than each peer.

    .venv/bin/python bench/bench_frequency.py            # all rows, n = 10^6
    .venv/bin/python bench/bench_frequency.py --rows rr  # randomized response only

The peers are installed from PyPI into bench/.peers on first use.  They take
indices 0..d-1 as ldpest and numpy do; each is used as documented, one client
call per record.  Laplace is the peers' summation histogram encoding (one-hot + Laplace(2/epsilon)).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

import ldpest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peers  # noqa: E402

ROWS = {
    "rr": [("randomized-response", 100), ("randomized-response", 10_000)],
    "sue": [("unary-encoding", 100)],
    "laplace": [("laplace", 100)],
}
LDPEST_NAME = {"randomized-response": "randomized-response", "unary-encoding": "unary-randomized-response",
               "laplace": "laplace"}


def numpy_baseline(mechanism: str, data: np.ndarray, d: int, epsilon: float, rng) -> np.ndarray:
    """The same computation written directly in numpy (no validation, no labels)."""
    n = data.size
    if mechanism == "randomized-response":
        p = math.exp(epsilon) / (math.exp(epsilon) + d - 1)
        q = (1 - p) / (d - 1)
        keep = rng.random(n) < p
        other = rng.integers(0, d - 1, n)
        other += other >= data
        counts = np.bincount(np.where(keep, data, other), minlength=d)
        return (counts / n - q) / (p - q)
    if mechanism == "unary-encoding":
        p = math.exp(epsilon / 2) / (1 + math.exp(epsilon / 2))
        reports = rng.random((n, d)) >= p
        reports[np.arange(n), data] ^= True
        return (reports.sum(axis=0) / n - (1 - p)) / (2 * p - 1)
    reports = rng.laplace(scale=2 / epsilon, size=(n, d))
    reports[np.arange(n), data] += 1
    return reports.mean(axis=0)


def ldpest_run(mechanism: str, data: np.ndarray, d: int, epsilon: float, rng) -> np.ndarray:
    mech = ldpest.mechanism(LDPEST_NAME[mechanism], epsilon=epsilon, categories=list(range(d)))
    return ldpest.estimate(mech.privatize(data, rng=rng))["probability"].values


def best_time(function, repeat: int, budget: float = 0.25, most: int = 200) -> float:
    """Best of at least ``repeat`` runs; short calls run again until they fill ``budget``
    seconds (at most ``most`` runs, as timeit's autorange does), so that a sub-millisecond
    figure is not one scheduling hiccup on this noisy 2-core machine."""
    times = []
    while len(times) < repeat or (sum(times) < budget and len(times) < most):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10 ** 6)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rows", nargs="*", default=list(ROWS), choices=list(ROWS))
    parser.add_argument("--no-peers", action="store_true", help="Skip pure-ldp and multi-freq-ldpy.")
    parser.add_argument("--no-throughput", action="store_true", help="Skip the density mechanisms' throughput.")
    parser.add_argument("--json", type=Path, help="Also write the figures to this file.")
    args = parser.parse_args(argv)
    if not args.no_peers:
        peers.ensure_peer_env()
    rows = []
    print(f"n = {args.n}, epsilon = {args.epsilon}, best of {args.repeat}; times are privatise + estimate")
    header = f"{'mechanism':<22}{'d':>7}{'ldpest s':>10}{'numpy s':>10}{'ldpest/numpy':>14}" \
             f"{'pure-ldp s':>12}{'ratio':>8}{'mfl s':>10}{'ratio':>8}"
    print(header)
    for group in args.rows:
        for mechanism, d in ROWS[group]:
            data = np.random.default_rng(1).integers(0, d, args.n)
            ours = best_time(lambda: ldpest_run(mechanism, data, d, args.epsilon, np.random.default_rng(2)),
                             args.repeat)
            base = best_time(lambda: numpy_baseline(mechanism, data, d, args.epsilon, np.random.default_rng(2)),
                             args.repeat)
            row = {"mechanism": mechanism, "d": d, "n": args.n, "ldpest": ours, "numpy": base,
                   "ldpest_over_numpy": ours / base}
            for peer in ("pure-ldp", "multi-freq-ldpy"):
                seconds = None
                if not args.no_peers:
                    seconds = peers.time_peer({"peer": peer, "mechanism": mechanism, "n": args.n, "d": d,
                                               "epsilon": args.epsilon, "seed": 1})["seconds"]
                row[peer] = seconds
                row[f"{peer}_over_ldpest"] = None if seconds is None else seconds / ours
            rows.append(row)

            def fmt(value, spec):
                return format(value, spec) if value is not None else "n/a".rjust(int(spec.split(".")[0][1:] or 0))

            print(f"{mechanism:<22}{d:>7}{ours:>10.3f}{base:>10.3f}{row['ldpest_over_numpy']:>14.2f}"
                  f"{fmt(row['pure-ldp'], '>12.3f')}{fmt(row['pure-ldp_over_ldpest'], '>8.1f')}"
                  f"{fmt(row['multi-freq-ldpy'], '>10.3f')}{fmt(row['multi-freq-ldpy_over_ldpest'], '>8.1f')}")
    print("ratio = peer time / ldpest time (target >= 10); ldpest/numpy target <= 2")
    throughput = [] if args.no_throughput else throughput_rows(args.n, args.epsilon, args.repeat)
    if args.json:
        args.json.write_text(json.dumps({"ratios": rows, "throughput": throughput}, indent=1))
    return {"rows": rows, "throughput": throughput}


def throughput_rows(n: int, epsilon: float, repeat: int) -> list[dict]:
    """Reports per second of the density mechanisms (privatise, then estimate)."""
    rng = np.random.default_rng(5)
    cases = [
        ("linf-sampling", {"basis": "trigonometric", "k": 16}, rng.uniform(size=n), "series"),
        ("linf-sampling", {"basis": "walsh", "k": 64}, rng.uniform(size=n), "series"),
        ("laplace-histogram", {"low": [0, 0], "high": [1, 1], "bins": 5}, rng.uniform(size=(n, 2)), "histogram-cdf"),
        ("laplace-histogram", {"low": [0], "high": [1], "bins": 32}, rng.uniform(size=n), "histogram-mean"),
    ]
    print(f"\nthroughput, n = {n}: reports per second")
    print(f"{'mechanism':<20}{'parameters':<42}{'privatise /s':>14}{'estimate /s':>14}")
    out = []
    for name, params, data, estimator in cases:
        mech = ldpest.mechanism(name, epsilon=epsilon, **params)
        reports = mech.privatize(data, rng=rng)
        private = best_time(lambda: mech.privatize(data, rng=rng), repeat)
        estimate = best_time(lambda: ldpest.estimator(estimator).estimate(reports), repeat)
        row = {"mechanism": name, "params": params, "privatize_per_s": n / private, "estimate_per_s": n / estimate}
        out.append(row)
        print(f"{name:<20}{json.dumps(params):<42}{row['privatize_per_s']:>14.3g}{row['estimate_per_s']:>14.3g}")
    return out


if __name__ == "__main__":
    main()
