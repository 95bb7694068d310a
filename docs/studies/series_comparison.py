"""l-infinity sampling against Laplace noise on the coefficients (Duchi et al. section 4.2).

Density: f = (1 + tri) / 2 on [0, 1], tri the triangular density with mode 1/2
(periodic, kinks at 0, 1/2, 1: trigonometric coefficients decay like j^-2, so
f is in the beta = 1 class).  Writes docs/figures/series-comparison.png:

* left: one estimate from each mechanism at n = 10^5, epsilon = 1, k = 9;
* right: MISE against n, Monte Carlo (points) and the exact formula (lines),
  each mechanism with its own rate-optimal k ("auto", beta = 1); the slopes
  approach -1/2 for l-infinity sampling and -2/5 for Laplace (MATH.md 3).

    .venv/bin/python docs/studies/series_comparison.py
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from scipy import integrate

import ldpest

DOCS = Path(__file__).resolve().parents[1]
MECHANISMS = ("linf-sampling", "laplace-series")


def density(x):
    x = np.asarray(x, dtype=float)
    return 0.5 + 0.5 * np.where(x < 0.5, 4 * x, 4 * (1 - x))


def sample(n, rng):
    uniform = rng.uniform(size=n)
    triangular = rng.triangular(0, 0.5, 1, size=n)
    return np.where(rng.uniform(size=n) < 0.5, uniform, triangular)


def coefficients(k):
    basis = ldpest.basis("trigonometric")
    return np.array([integrate.quad(lambda t, j=j: density(t) * basis.evaluate([t], k)[0, j], 0, 1, points=[0.5],
                                    limit=400)[0] for j in range(k)])


INTEGRAL_F2 = integrate.quad(lambda t: density(t) ** 2, 0, 1, points=[0.5])[0]


def exact_mise(name, n, epsilon=1.0, k=None):
    mech = mechanism(name, n, epsilon, k)
    theta = coefficients(mech.k)
    tail = INTEGRAL_F2 - np.sum(theta ** 2)
    if name == "linf-sampling":  # theta_1 = 1 is known (phi_1 = 1): no variance in the first term
        variance = np.sum(mech.scale ** 2 - theta[1:] ** 2) / n
    else:
        basis = mech.basis
        phi2 = np.array([integrate.quad(lambda t, j=j: density(t) * basis.evaluate([t], mech.k)[0, j] ** 2, 0, 1,
                                        points=[0.5], limit=400)[0] for j in range(mech.k)])
        variance = np.sum((phi2 - theta ** 2 + mech.noise.variance)[1:]) / n
    return variance + tail


def mechanism(name, n, epsilon=1.0, k=None):
    if k is None:
        return ldpest.mechanism(name, epsilon=epsilon, basis="trigonometric", k="auto", expected_n=int(n), smoothness=1)
    return ldpest.mechanism(name, epsilon=epsilon, basis="trigonometric", k=k)


def monte_carlo_mise(name, n, reps, rng, epsilon=1.0):
    mech = mechanism(name, n, epsilon)
    theta = coefficients(mech.k)
    tail = INTEGRAL_F2 - np.sum(theta ** 2)
    est = ldpest.estimator("series", grid=4)
    ise = [np.sum((est.estimate(mech.privatize(sample(int(n), rng), rng=rng))["coefficient"].values - theta) ** 2)
           + tail
           for _ in range(reps)]
    return float(np.mean(ise)), float(np.std(ise, ddof=1) / np.sqrt(reps))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--seed", type=int, default=2013)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    grid = np.linspace(0, 1, 400)
    left.plot(grid, density(grid), color="black", lw=2, label="true density")
    x = sample(10 ** 5, rng)
    for name, colour in zip(MECHANISMS, ("#1f77b4", "#d62728"), strict=True):
        result = ldpest.estimator("series", grid=grid.tolist()).estimate(mechanism(name, 0, k=9).privatize(x, rng=rng))
        left.plot(grid, result["density"], color=colour, label=f"{name} (k = 9)")
        left.fill_between(grid, result["density"] - 2 * result["stderr"], result["density"] + 2 * result["stderr"],
                          color=colour, alpha=0.15)
    left.set_title("estimates at n = 10^5, epsilon = 1 (bands: +-2 stderr)", fontsize=9)
    left.set_xlabel("x")
    left.legend(fontsize=8)

    lines = ["| n | linf MISE (MC) | linf exact | Laplace MISE (MC) | Laplace exact | ratio |",
             "|---|---|---|---|---|---|"]
    mc_ns = np.array([10 ** 3, 10 ** 4, 10 ** 5])
    curve_ns = np.logspace(3, 10, 15)
    slopes = {}
    for name, colour in zip(MECHANISMS, ("#1f77b4", "#d62728"), strict=True):
        curve = [exact_mise(name, n) for n in curve_ns]
        slopes[name] = np.polyfit(np.log(curve_ns[-6:]), np.log(curve[-6:]), 1)[0]
        right.loglog(curve_ns, curve, color=colour, label=f"{name}: exact (slope {slopes[name]:.3f} for n > 10^7)")
        mc = [monte_carlo_mise(name, n, args.reps, rng) for n in mc_ns]
        right.errorbar(mc_ns, [m for m, _ in mc], yerr=[2 * s for _, s in mc], fmt="o", color=colour, ms=4,
                       label=f"{name}: Monte Carlo ({args.reps} reps)")
        slopes[name + "-mc"] = mc
    for i, n in enumerate(mc_ns):
        a, b = slopes["linf-sampling-mc"][i], slopes["laplace-series-mc"][i]
        lines.append(f"| {n:.0e} | {a[0]:.4f} +- {a[1]:.4f} | {exact_mise('linf-sampling', n):.4f} | "
                     f"{b[0]:.4f} +- {b[1]:.4f} | {exact_mise('laplace-series', n):.4f} | {b[0] / a[0]:.1f} |")
    right.set_xlabel("n")
    right.set_ylabel("MISE")
    right.set_title("MISE against n, k tuned for beta = 1 (theory: -1/2 and -2/5)", fontsize=9)
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(DOCS / "figures" / "series-comparison.png", dpi=100)

    fixed = ["| k | linf MISE | Laplace MISE | ratio |", "|---|---|---|---|"]
    for k in (3, 9, 17, 33):
        a, b = exact_mise("linf-sampling", 10 ** 5, k=k), exact_mise("laplace-series", 10 ** 5, k=k)
        fixed.append(f"| {k} | {a:.4f} | {b:.4f} | {b / a:.1f} |")
    text = "\n".join(["Monte Carlo and exact MISE, epsilon = 1, k auto (beta = 1):", "", *lines, "",
                      "Exact MISE at n = 10^5, epsilon = 1, fixed k (the Laplace penalty grows with k):", "", *fixed,
                      "",
                      f"Slopes of the exact MISE for n in [10^7, 10^10]: linf-sampling {slopes['linf-sampling']:.3f}, "
                      f"laplace-series {slopes['laplace-series']:.3f}."])
    (DOCS / "series-study-results.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
