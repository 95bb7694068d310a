"""Privatise and estimate of the numeric mechanisms next to plain numpy (issue 24).

The baselines are the simplest correct float implementations of the published mechanisms, the
way research code writes them: Duchi's ``+-C`` from one ``rng.random`` coin; the continuous
piecewise mechanism from two coins and one uniform; the hybrid from one more coin; the mean is
``values.mean()`` with its standard error (per attribute for multidimensional: three bincounts,
as ldpest gives each attribute's stderr).  ldpest's are exact lattices (docs/numeric.md): more
random bits per report, and an estimate from integer code counts.  Interleaved, best of --repeat, one run:

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


def numpy_square_wave(v, epsilon, rng):
    """The continuous square wave on ``v`` in [0, 1]: density p on ``[v - b, v + b]``, q on the rest of
    ``[-b, 1 + b]``."""
    e = math.exp(epsilon)
    b = (epsilon * e - e + 1) / (2 * e * (e - 1 - epsilon))
    inside = rng.random(v.shape) < 2 * b * e / (2 * b * e + 1)
    u = rng.random(v.shape)
    return np.where(inside, v - b + 2 * b * u, np.where(u < v, u - b, u + b))


def numpy_ems(reports, epsilon, bins=128, report_bins=1024, tolerance=1e-7, most=20_000):
    """Li et al.'s EMS as research code writes it: a histogram of the reports, the channel of each
    input bucket's centre, EM with the (1, 2, 1) / 4 smoothing until the l1 move is below tolerance."""
    e = math.exp(epsilon)
    b = (epsilon * e - e + 1) / (2 * e * (e - 1 - epsilon))
    edges = np.linspace(-b, 1 + b, report_bins + 1)
    counts = np.histogram(reports, bins=edges)[0] / reports.size
    centres = (np.arange(bins) + 0.5) / bins
    overlap = np.clip(np.minimum(edges[None, 1:], centres[:, None] + b)
                      - np.maximum(edges[None, :-1], centres[:, None] - b), 0, None)
    q = 1 / (2 * b * e + 1)
    channel = q * (edges[1] - edges[0]) + (e - 1) * q * overlap  # (bins, report_bins)
    theta = np.full(bins, 1 / bins)
    for _ in range(most):
        step = theta * (channel @ (counts / np.maximum(theta @ channel, 1e-300)))
        padded = np.concatenate([step[:1], step, step[-1:]])
        smoothed = (padded[:-2] + 2 * padded[1:-1] + padded[2:]) / 4
        smoothed /= smoothed.sum()
        moved = np.abs(smoothed - theta).sum()
        theta = smoothed
        if moved < tolerance:
            break
    return theta


def numpy_multidimensional(t, epsilon, rng):
    """One of d attributes per user (k = 1 at epsilon < 5), by the hybrid at epsilon: (attribute, value)."""
    pick = rng.integers(0, t.shape[1], size=t.shape[0])
    return pick, numpy_hybrid(t[np.arange(t.shape[0]), pick], epsilon, rng)


def numpy_multidimensional_mean(pick, values, d):
    """Each attribute's mean and its standard error, as the one-dimensional rows compute both."""
    counts = np.bincount(pick, minlength=d)
    mean = np.bincount(pick, weights=values, minlength=d) / counts
    second = np.bincount(pick, weights=values * values, minlength=d) / counts
    return mean, np.sqrt((second - mean ** 2) / (counts - 1))


BASELINES = {"duchi": numpy_duchi, "piecewise": numpy_piecewise, "hybrid": numpy_hybrid}
DIMENSIONS = 5


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
            row(name, n, ours, plain, ours_e, plain_e)
        square_wave(x / 500, n, args, rng)
        multidimensional(rng.random((n, DIMENSIONS)), n, args, rng)


def row(name, n, ours, plain, ours_e, plain_e, note=""):
    print(f"{name:10} {n:9d} {ours:12.4f} {plain:8.4f} {ours / plain:6.2f}   "
          f"{ours_e:10.4f} {plain_e:8.4f} {ours_e / plain_e:6.2f}{note}")


def square_wave(v, n, args, rng):
    """Privatise beside the continuous square wave; EMS on 128 buckets beside numpy's EMS, ldpest
    both without its bootstrap standard error (the like-for-like figure) and with the default 20 draws."""
    mech = ldpest.mechanism("square-wave", epsilon=args.epsilon, low=0, high=1)
    ours = best_time(lambda: mech.privatize(v, rng=rng), args.repeat)
    plain = best_time(lambda: numpy_square_wave(v, args.epsilon, rng), args.repeat)
    reports, values = mech.privatize(v, rng=rng), numpy_square_wave(v, args.epsilon, rng)
    bare, full = ldpest.estimator("ems", bootstrap=0), ldpest.estimator("ems")
    ours_e = best_time(lambda: bare.estimate(reports), args.repeat)
    plain_e = best_time(lambda: numpy_ems(values, args.epsilon), args.repeat)
    row("square-wave", n, ours, plain, ours_e, plain_e, "  (ems, no stderr)")
    with_stderr = best_time(lambda: full.estimate(reports), 1)
    row("square-wave", n, ours, plain, with_stderr, plain_e, "  (ems with its 20-draw bootstrap stderr)")


def multidimensional(t, n, args, rng):
    d = t.shape[1]
    mech = ldpest.mechanism("multidimensional", epsilon=args.epsilon, low=[0] * d, high=[1] * d)
    ours = best_time(lambda: mech.privatize(t, rng=rng), args.repeat)
    plain = best_time(lambda: numpy_multidimensional(2 * t - 1, args.epsilon, rng), args.repeat)
    reports, (pick, values) = mech.privatize(t, rng=rng), numpy_multidimensional(2 * t - 1, args.epsilon, rng)
    ours_e = best_time(lambda: ldpest.estimate(reports), args.repeat)
    plain_e = best_time(lambda: numpy_multidimensional_mean(pick, values, d), args.repeat)
    row(f"multi d={d}", n, ours, plain, ours_e, plain_e)


if __name__ == "__main__":
    main()
