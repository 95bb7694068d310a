"""Which frequency oracle wins where (docs/frequency-oracles.md).

Writes two figures:

* docs/figures/frequency-oracles-mse.png: ``n E||theta_hat - theta||^2`` at the uniform
  distribution (where every oracle's worst case sits, except Hadamard response whose
  worst case is a little higher) against epsilon, for d = 10, 100, 1000 and 10^4.
  Lines: the declared worst-case variance ``worst_case_variance()``; points: Monte Carlo
  (privatising every record, n = 1000 reports, 200 repetitions, d <= 1000).
* docs/figures/frequency-oracles-winner.png: the oracle ``ldpest.mechanism("auto", ...)``
  picks on a grid of d and epsilon.

    .venv/bin/python docs/studies/frequency_oracles.py
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import ldpest
from ldpest.engine.planning import choose_mechanism, frequency_oracle_names

DOCS = Path(__file__).resolve().parents[1]
COLOURS = {"randomized-response": "C0", "unary-randomized-response": "C1", "laplace": "C2",
           "local-hashing": "C3", "subset-selection": "C4", "hadamard-response": "C5",
           "optimized-unary-encoding": "C6"}


def theoretical(name: str, d: int, epsilons) -> np.ndarray:
    return np.array([ldpest.mechanism(name, epsilon=e, categories=list(range(d))).worst_case_variance()
                     for e in epsilons])


def measured(name: str, d: int, epsilon: float, n: int, reps: int, rng) -> tuple[float, float]:
    """Monte Carlo ``n E||theta_hat - theta||^2`` at the uniform distribution, and its standard error."""
    mech = ldpest.mechanism(name, epsilon=epsilon, categories=list(range(d)))
    data = rng.integers(0, d, n * reps)  # i.i.d. from the uniform distribution
    values = mech.privatize(data, rng=rng).values
    errors = []
    for r in range(reps):
        theta, _ = mech.frequency_estimate(mech.frequency_statistics(values[r * n:(r + 1) * n]), n)
        errors.append(n * np.sum((theta - 1 / d) ** 2))
    errors = np.asarray(errors)
    return errors.mean(), errors.std(ddof=1) / np.sqrt(reps)


def mse_figure(path: Path, dims, epsilons, measured_epsilons, n, reps, rng):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(frequency_oracle_names())
    fig, axes = plt.subplots(1, len(dims), figsize=(4.2 * len(dims), 4), sharey=False)
    for ax, d in zip(np.atleast_1d(axes), dims, strict=True):
        for name in names:
            ax.plot(epsilons, theoretical(name, d, epsilons), color=COLOURS.get(name), label=name)
            if d <= 1000:
                points = [measured(name, d, e, n, reps, rng) for e in measured_epsilons]
                ax.errorbar(measured_epsilons, [p[0] for p in points], yerr=[2 * p[1] for p in points],
                            fmt="o", color=COLOURS.get(name), markersize=3)
        ax.set(xscale="log", yscale="log", title=f"d = {d}", xlabel="epsilon")
    np.atleast_1d(axes)[0].set_ylabel("n x mean squared l2 error")
    np.atleast_1d(axes)[0].legend(fontsize=7)
    fig.suptitle("Worst-case variance (lines) and Monte Carlo at uniform theta (points, +-2 SE)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def winner_figure(path: Path, dims, epsilons):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = sorted(COLOURS)
    grid = np.array([[names.index(choose_mechanism(epsilon=e, categories=list(range(d))).name) for d in dims]
                     for e in epsilons])
    fig, ax = plt.subplots(figsize=(6.5, 4))
    colours = matplotlib.colors.ListedColormap([COLOURS[name] for name in names])
    ax.pcolormesh(dims, epsilons, grid, cmap=colours, vmin=-0.5, vmax=len(names) - 0.5, shading="nearest")
    ax.set(xscale="log", yscale="log", xlabel="d (categories)", ylabel="epsilon",
           title='ldpest.mechanism("auto"): smallest worst-case variance')
    used = sorted(set(grid.ravel()))
    ax.legend(handles=[matplotlib.patches.Patch(color=COLOURS[names[i]], label=names[i]) for i in used],
              fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="A small run (tests).")
    parser.add_argument("--out", type=Path, default=DOCS / "figures")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(2026)
    if args.quick:
        dims, epsilons, measured_epsilons, n, reps = [10], np.geomspace(0.5, 4, 5), [1.0], 200, 20
        winner_dims, winner_epsilons = [2, 10, 100], [0.5, 2.0]
    else:
        dims, epsilons, measured_epsilons, n, reps = [10, 100, 1000, 10_000], np.geomspace(0.1, 8, 40), \
            [0.25, 1.0, 4.0], 1000, 200
        winner_dims = np.unique(np.geomspace(2, 10 ** 4, 30).astype(int))
        winner_epsilons = np.geomspace(0.1, 10, 30)
    args.out.mkdir(parents=True, exist_ok=True)
    mse_figure(args.out / "frequency-oracles-mse.png", dims, epsilons, measured_epsilons, n, reps, rng)
    winner_figure(args.out / "frequency-oracles-winner.png", winner_dims, winner_epsilons)


if __name__ == "__main__":
    main()
