"""Privatise and estimate of ``hierarchical-histogram`` and ``haar-histogram`` next to plain numpy (issue 24).

The baseline is the simplest correct float implementation of the same tree, the way research code
writes it: a level per record from ``rng.integers``; k-RR from one ``rng.random`` coin and one
draw of another node; OUE as a boolean matrix of ``rng.random(...) < q`` with the own bit from
one more coin; the estimate is each level's column sums turned into unbiased frequencies.  Haar:
a level and a Hadamard row per record from ``rng.integers``, the sign bit flipped by one coin, and
per level a bincount times ``scipy.linalg.hadamard``.
ldpest's draws exact 64-bit-threshold coins, packs the bits (8x less memory), and its estimate
adds the consistency step and the exact standard errors of the CDF at every leaf edge.
Interleaved, best of --repeat, one run:

    .venv/bin/python bench/bench_tree.py --n 1000000,10000000
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from scipy.linalg import hadamard

import ldpest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_frequency import best_time  # noqa: E402


def numpy_tree(leaves, mech, epsilon, rng):
    """Per level ``(count, column sums of the level's bits)``: the reports as a research script keeps them."""
    e = math.exp(epsilon)
    levels = rng.integers(1, mech.depth + 1, size=leaves.shape[0])
    out = []
    for level, kind in enumerate(mech.params["oracles"], start=1):
        k = mech.branching ** level
        nodes = leaves[levels == level] // mech.branching ** (mech.depth - level)
        m = nodes.shape[0]
        if kind == "randomized-response":
            keep = rng.random(m) < e / (e + k - 1)
            other = rng.integers(0, k - 1, size=m)
            other += other >= nodes
            out.append((m, np.where(keep, nodes, other)))
        else:
            bits = rng.random((m, k)) < 1 / (e + 1)
            bits[np.arange(m), nodes] = rng.random(m) < 0.5
            out.append((m, bits))
    return out


def numpy_estimate(reports, mech, epsilon):
    e, thetas = math.exp(epsilon), []
    for level, (kind, (m, values)) in enumerate(zip(mech.params["oracles"], reports, strict=True), start=1):
        k = mech.branching ** level
        if kind == "randomized-response":
            p, q, counts = e / (e + k - 1), 1 / (e + k - 1), np.bincount(values, minlength=k)
        else:
            p, q, counts = 0.5, 1 / (e + 1), values.sum(axis=0)
        thetas.append((counts / max(m, 1) - q) / (p - q))
    return thetas


def numpy_haar(leaves, depth, epsilon, rng):
    """Per record ``(level, row, bit)``: the Haar coefficient's sign times a Hadamard row's entry, kept
    with probability ``e^eps / (e^eps + 1)``."""
    levels = rng.integers(1, depth + 1, size=leaves.shape[0])
    rows = rng.integers(0, 1 << (levels - 1))
    shift = depth - levels
    node, positive = leaves >> (shift + 1), ((leaves >> shift) & 1) == 0
    parity = np.bitwise_count((rows & node).astype(np.uint64)) & 1
    bit = positive ^ parity.astype(bool) ^ (rng.random(leaves.shape[0]) >= math.exp(epsilon) / (math.exp(epsilon) + 1))
    return levels, rows, bit


def numpy_haar_estimate(reports, depth, epsilon):
    levels, rows, bit = reports
    p = math.exp(epsilon) / (math.exp(epsilon) + 1)
    out = []
    for level in range(1, depth + 1):
        size, chosen = 1 << (level - 1), levels == level
        sums = np.bincount(rows[chosen], weights=2.0 * bit[chosen] - 1, minlength=size)
        out.append(hadamard(size) @ sums / (max(chosen.sum(), 1) * (2 * p - 1)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", default="1000000,10000000")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--bins", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    mech = ldpest.mechanism("hierarchical-histogram", epsilon=args.epsilon, low=0, high=1, bins=args.bins)
    print(f"ldpest {ldpest.__version__}; hierarchical-histogram bins = {args.bins}, branching = 4, "
          f"oracles {mech.params['oracles']}, epsilon = {args.epsilon}, best of {args.repeat}, interleaved")
    print(f"{'':5} {'n':>9} {'privatise s':>12} {'numpy s':>8} {'ratio':>6}   "
          f"{'estimate s':>10} {'numpy s':>8} {'ratio':>6}")
    haar = ldpest.mechanism("haar-histogram", epsilon=args.epsilon, low=0, high=1, bins=args.bins)
    depth = int(math.log2(args.bins))
    for n in (int(float(v)) for v in args.n.split(",")):
        x = rng.random(n)
        compare("tree", n, args, mech, x, rng, lambda leaves: numpy_tree(leaves, mech, args.epsilon, rng),
                lambda reports: numpy_estimate(reports, mech, args.epsilon))
        compare("haar", n, args, haar, x, rng, lambda leaves: numpy_haar(leaves, depth, args.epsilon, rng),
                lambda reports: numpy_haar_estimate(reports, depth, args.epsilon))


def compare(label, n, args, mech, x, rng, plain_privatize, plain_estimate):
    """One row: ldpest's privatise and estimate beside the baseline's, each best of ``--repeat``."""
    ours = best_time(lambda: mech.privatize(x, rng=rng), args.repeat)
    plain = best_time(lambda: plain_privatize(mech.leaves(x)), args.repeat)
    reports, plain_reports = mech.privatize(x, rng=rng), plain_privatize(mech.leaves(x))
    ours_e = best_time(lambda: ldpest.estimate(reports), args.repeat)
    plain_e = best_time(lambda: plain_estimate(plain_reports), args.repeat)
    print(f"{label:5} {n:9d} {ours:12.4f} {plain:8.4f} {ours / plain:6.2f}   {ours_e:10.4f} {plain_e:8.4f} "
          f"{ours_e / plain_e:6.2f}")

if __name__ == "__main__":
    main()
