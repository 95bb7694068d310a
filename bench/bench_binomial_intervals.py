"""Exact coverage of deterministic 95% intervals for a binomial count (docs/numeric.md, the
coverage of Duchi's mean): Clopper-Pearson, mid-p, Wilson and Jeffreys at n = 10, 30, 100, over
2001 truths between the keep probabilities ``1 - p`` and ``p`` of Duchi's mechanism at epsilon 1,
each coverage summed exactly over the binomial law.

    .venv/bin/python bench/bench_binomial_intervals.py
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, stats

ALPHA = 0.05


def clopper_pearson(k, n):
    low = np.where(k > 0, stats.beta.ppf(ALPHA / 2, k, n - k + 1), 0.0)
    high = np.where(k < n, stats.beta.ppf(1 - ALPHA / 2, k + 1, n - k), 1.0)
    return low, high


def jeffreys(k, n):
    low = np.where(k > 0, stats.beta.ppf(ALPHA / 2, k + 0.5, n - k + 0.5), 0.0)
    high = np.where(k < n, stats.beta.ppf(1 - ALPHA / 2, k + 0.5, n - k + 0.5), 1.0)
    return low, high


def wilson(k, n):
    z = stats.norm.ppf(1 - ALPHA / 2)
    share = k / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def mid_p(k, n):
    low, high = np.zeros(len(k)), np.ones(len(k))
    for i, count in enumerate(k):
        if count > 0:
            low[i] = optimize.brentq(lambda p, c=count: stats.binom.sf(c, n, p) + stats.binom.pmf(c, n, p) / 2
                                     - ALPHA / 2, 1e-12, 1 - 1e-12)
        if count < n:
            high[i] = optimize.brentq(lambda p, c=count: stats.binom.cdf(c - 1, n, p) + stats.binom.pmf(c, n, p) / 2
                                      - ALPHA / 2, 1e-12, 1 - 1e-12)
    return low, high


def main() -> None:
    keep = math.e / (1 + math.e)
    truths = np.linspace(1 - keep, keep, 2001)
    print("exact coverage of 95% intervals for Binomial(n, p), p in [1 - keep, keep] at epsilon 1")
    print(f"{'n':>4} {'interval':17} {'least':>6} {'mean':>6} {'most':>6} {'share within 94-96%':>20}")
    for n in (10, 30, 100):
        k = np.arange(n + 1)
        laws = stats.binom.pmf(k[None, :], n, truths[:, None])
        for name, interval in (("Clopper-Pearson", clopper_pearson), ("mid-p", mid_p), ("Wilson", wilson),
                               ("Jeffreys", jeffreys)):
            low, high = interval(k, n)
            coverage = (laws * ((low[None, :] <= truths[:, None]) & (truths[:, None] <= high[None, :]))).sum(axis=1)
            within = np.mean((coverage >= 0.94) & (coverage <= 0.96))
            print(f"{n:4d} {name:17} {coverage.min():6.3f} {coverage.mean():6.3f} {coverage.max():6.3f} {within:20.2f}")


if __name__ == "__main__":
    main()
