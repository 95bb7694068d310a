"""Privatise and estimate of the numeric mechanisms next to plain numpy (issue 24).

The baselines are the simplest correct float implementations of the published mechanisms, the
way research code writes them: Duchi's ``+-C`` from one ``rng.random`` coin; the continuous
piecewise mechanism from two coins and one uniform; the hybrid from one more coin; the mean is
``values.mean()``.  ldpest's are exact lattices (docs/numeric.md): more random bits per report, and
an estimate from integer code counts.  Interleaved, best of --repeat, one run:

    .venv/bin/python bench/bench_numeric.py --n 1000000,10000000
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

import ldpest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_frequency import best_time  # noqa: E402


def numpy_duchi(t, epsilon, rng):
    c = (math.exp(epsilon) + 1) / (math.exp(epsilon) - 1)
    up = rng.random(t.shape) < 0.5 + t * (math.exp(epsilon) - 1) / (2 * (math.exp(epsilon) + 1))
    return np.where(up, c, -c)


def numpy_piecewise(t, epsilon, rng):
    half = math.exp(epsilon / 2)
    c = (half + 1) / (half - 1)
    left = (c + 1) / 2 * t - (c - 1) / 2
    u = rng.random(t.shape)
    inside = rng.random(t.shape) < half / (half + 1)
    width_out = c + left  # length of [-C, l); the outside has total length C + 1
    position = u * (c + 1)
    outside = np.where(position < width_out, -c + position, position - width_out + left + (c - 1))
    return np.where(inside, left + u * (c - 1), outside)


def numpy_hybrid(t, epsilon, rng):
    alpha = 1 - math.exp(-epsilon / 2) if epsilon > 0.61 else 0.0
    choose = rng.random(t.shape) < alpha
    return np.where(choose, numpy_piecewise(t, epsilon, rng), numpy_duchi(t, epsilon, rng))


BASELINES = {"duchi": numpy_duchi, "piecewise": numpy_piecewise, "hybrid": numpy_hybrid}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", default="1000000,10000000")
    parser.add_argument("--epsilon", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    print(f"ldpest {ldpest.__version__}; epsilon = {args.epsilon}, best of {args.repeat}, interleaved")
    print(f"{'mechanism':10} {'n':>9} {'privatise s':>12} {'numpy s':>8} {'ratio':>6}   "
          f"{'estimate s':>10} {'numpy s':>8} {'ratio':>6}")
    for n in (int(float(v)) for v in args.n.split(",")):
        x = rng.uniform(0, 500, n)
        for name, baseline in BASELINES.items():
            mech = ldpest.mechanism(name, epsilon=args.epsilon, low=0, high=500)
            t = x / 250 - 1
            ours = best_time(lambda: mech.privatize(x, rng=rng), args.repeat)
            plain = best_time(lambda: 250 * (baseline(t, args.epsilon, rng) + 1), args.repeat)
            reports, values = mech.privatize(x, rng=rng), 250 * (baseline(t, args.epsilon, rng) + 1)
            ours_e = best_time(lambda: float(ldpest.estimate(reports)["mean"]), args.repeat)
            plain_e = best_time(lambda: (values.mean(), values.std(ddof=1) / math.sqrt(n)), args.repeat)
            print(f"{name:10} {n:9d} {ours:12.4f} {plain:8.4f} {ours / plain:6.2f}   "
                  f"{ours_e:10.4f} {plain_e:8.4f} {ours_e / plain_e:6.2f}")


if __name__ == "__main__":
    main()
