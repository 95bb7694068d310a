"""Re-run of the Gyorfi-Kroll simulation study (their Section 5; MATH.md section 2).

X ~ N(0, Sigma) truncated to [-1, 1]^2, n = 10^5, epsilon in {inf, 0.5, 0.25,
0.1}, k x k grids with k = 3, 4, 5.  For each setting it reports the mean L1
error of f_hat, f_hat_mod, f_tilde and f_tilde_mod:

* "direct": every one of the n records privatised by ``laplace-histogram``,
  the four estimators computed from the *same* reports (paired), ``--reps``
  repetitions (default 20);
* "fast": the exact aggregate simulation (``Estimator.simulate``), ``--fast-reps``
  repetitions (default 500), same law of each estimator.

epsilon = inf is the classical histogram (all four coincide).  The paper does
not give Sigma; we report two: Sigma_A = 0.25 [[1, .8], [.8, 1]] (concentrated)
and Sigma_B = [[1, .5], [.5, 1]] (flatter).  L1 errors are integrals over a
1200 x 1200 midpoint grid (cells align with it for k = 3, 4, 5).

    .venv/bin/python docs/studies/gyorfi_kroll.py    # writes docs/gyorfi-kroll-study.md and figures
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
from scipy import stats

import ldpest
import ldpest.partition

HERE = Path(__file__).resolve().parent
DOCS = HERE.parent
SIGMAS = {"A": 0.25 * np.array([[1.0, 0.8], [0.8, 1.0]]), "B": np.array([[1.0, 0.5], [0.5, 1.0]])}
EPSILONS = [np.inf, 0.5, 0.25, 0.1]
GRIDS = [3, 4, 5]
VARIANTS = [("f_hat", "histogram-mean", "none"), ("f_hat_mod", "histogram-mean", "positive"),
            ("f_tilde", "histogram-cdf", "none"), ("f_tilde_mod", "histogram-cdf", "positive")]
RESOLUTION = 1200


class TruncatedGaussian:
    """N(0, Sigma) restricted to [-1, 1]^2, with its density on a midpoint grid."""

    def __init__(self, sigma: np.ndarray, resolution: int = RESOLUTION):
        self.sigma = sigma
        self.normal = stats.multivariate_normal(np.zeros(2), sigma)
        centres = -1 + (np.arange(resolution) + 0.5) * 2 / resolution
        self.grid_x, self.grid_y = np.meshgrid(centres, centres, indexing="ij")
        self.cell_area = (2 / resolution) ** 2
        raw = self.normal.pdf(np.stack([self.grid_x, self.grid_y], axis=-1))
        self.density = raw / (raw.sum() * self.cell_area)  # integrates to 1 on the grid
        self.resolution = resolution

    def sample(self, n: int, rng) -> np.ndarray:
        out = np.empty((0, 2))
        while len(out) < n:
            draw = rng.multivariate_normal(np.zeros(2), self.sigma, size=int(1.2 * (n - len(out))) + 100)
            out = np.vstack([out, draw[np.all(np.abs(draw) <= 1, axis=1)]])
        return out[:n]

    def cell_masses(self, k: int) -> np.ndarray:
        per = self.resolution // k
        blocks = self.density.reshape(k, per, k, per).sum(axis=(1, 3)) * self.cell_area
        return blocks.ravel()  # row-major over (x1, x2), like the partition

    def l1_error(self, estimate: np.ndarray) -> float:
        """int |g - f| for a k x k piecewise-constant density ``estimate`` (exact on the grid).

        Per cell, with the grid densities sorted (f_1 <= ... <= f_m) and their
        cumulative sums S: sum |c - f_i| = c j - S_j + (S_m - S_j) - c (m - j),
        j = #{f_i < c}; so one error costs O(k^2 log m), not O(resolution^2).
        """
        k = estimate.shape[0]
        ordered, cumulative = self._sorted_cells(k)
        c = estimate.reshape(-1)
        m = ordered.shape[1]
        j = np.array([np.searchsorted(row, value) for row, value in zip(ordered, c, strict=True)])
        below = np.where(j > 0, cumulative[np.arange(c.size), np.maximum(j - 1, 0)], 0.0)
        total = cumulative[:, -1]
        return float(np.sum(c * j - below + (total - below) - c * (m - j)) * self.cell_area)

    def _sorted_cells(self, k: int):
        cache = self.__dict__.setdefault("_cells", {})
        if k not in cache:
            per = self.resolution // k
            blocks = self.density.reshape(k, per, k, per).transpose(0, 2, 1, 3).reshape(k * k, per * per)
            ordered = np.sort(blocks, axis=1)
            cache[k] = (ordered, np.cumsum(ordered, axis=1))
        return cache[k]


def mechanism(epsilon: float, k: int):
    return ldpest.mechanism("laplace-histogram", epsilon=epsilon, low=[-1, -1], high=[1, 1], bins=k)


def classical_histogram(counts: np.ndarray, n: int, k: int) -> np.ndarray:
    return (counts / n / (2 / k) ** 2).reshape(k, k)


def direct_errors(truth: TruncatedGaussian, epsilon: float, k: int, n: int, reps: int, rng) -> np.ndarray:
    """(reps, 4) L1 errors, the four estimators paired on the same reports."""
    errors = np.empty((reps, len(VARIANTS)))
    for rep in range(reps):
        points = truth.sample(n, rng)
        if np.isinf(epsilon):
            cells = ldpest.partition.CubicPartition.box([-1, -1], [1, 1], [k, k]).locate(points)
            errors[rep] = truth.l1_error(classical_histogram(np.bincount(cells, minlength=k * k), n, k))
            continue
        reports = mechanism(epsilon, k).privatize(points, rng=rng)
        for j, (_, name, projection) in enumerate(VARIANTS):
            result = ldpest.estimate(reports, ldpest.estimator(name, projection=projection))
            errors[rep, j] = truth.l1_error(result["density"].values)
    return errors


def fast_errors(truth: TruncatedGaussian, epsilon: float, k: int, n: int, reps: int, rng) -> np.ndarray:
    """(reps, 4) L1 errors from the exact aggregate simulation.

    Each statistic (sums for f_hat, counts for f_tilde) is drawn once per
    repetition and finalized with and without the projection, so f and f_mod
    are paired as in the direct study.
    """
    masses = truth.cell_masses(k)
    errors = np.empty((reps, len(VARIANTS)))
    for rep in range(reps):
        if np.isinf(epsilon):
            errors[rep] = truth.l1_error(classical_histogram(rng.multinomial(n, masses), n, k))
            continue
        mech = mechanism(epsilon, k)
        stats_by_name = {}
        for j, (_, name, projection) in enumerate(VARIANTS):
            est = ldpest.estimator(name, projection=projection)
            if name not in stats_by_name:
                stats_by_name[name] = est.simulate(mech, masses, n, rng)
            errors[rep, j] = truth.l1_error(est.finalize(stats_by_name[name])["density"].values)
    return errors


def order_holds(means) -> bool:
    """The paper's order: f_hat > f_hat_mod > f_tilde > f_tilde_mod."""
    return bool(means[0] > means[1] > means[2] > means[3])


def figure2(truth: TruncatedGaussian, n: int, rng, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(GRIDS), len(EPSILONS), figsize=(12, 9), constrained_layout=True)
    points = truth.sample(n, rng)
    for row, k in enumerate(GRIDS):
        for col, epsilon in enumerate(EPSILONS):
            if np.isinf(epsilon):
                cells = ldpest.partition.CubicPartition.box([-1, -1], [1, 1], [k, k]).locate(points)
                density = classical_histogram(np.bincount(cells, minlength=k * k), n, k)
            else:
                reports = mechanism(epsilon, k).privatize(points, rng=rng)
                positive = ldpest.estimator("histogram-cdf", projection="positive")
                density = ldpest.estimate(reports, positive)["density"].values
            edges = np.linspace(-1, 1, k + 1)
            mesh = axes[row, col].pcolormesh(edges, edges, density.T, cmap="viridis", vmin=0)
            fig.colorbar(mesh, ax=axes[row, col], shrink=0.8)
            label = "no privacy" if np.isinf(epsilon) else f"alpha = {epsilon}"
            axes[row, col].set_title(f"{k}x{k}, {label}", fontsize=9)
            axes[row, col].set_aspect("equal")
    fig.suptitle(title)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def run(reps: int, fast_reps: int, n: int, seed: int, out: Path) -> str:
    rng = np.random.default_rng(seed)
    lines = ["# Gyorfi-Kroll simulation study, re-run with ldpest", "",
             f"n = {n}; mean L1 error over {reps} direct (paired, per-record) repetitions, and over "
             f"{fast_reps} exact fast-simulation repetitions in parentheses. Generated by "
             "`docs/studies/gyorfi_kroll.py` (seed {seed}).".replace("{seed}", str(seed)), ""]
    figures = []
    for label, sigma in SIGMAS.items():
        truth = TruncatedGaussian(sigma)
        lines += [f"## Sigma_{label} = {sigma.tolist()}", "",
                  "| alpha | k | f_hat | f_hat_mod | f_tilde | f_tilde_mod | paper's order (direct / fast) |",
                  "|---|---|---|---|---|---|---|"]
        for epsilon in EPSILONS:
            for k in GRIDS:
                direct = direct_errors(truth, epsilon, k, n, reps, rng).mean(axis=0)
                fast = fast_errors(truth, epsilon, k, n, fast_reps, rng).mean(axis=0)
                cells = " | ".join(f"{d:.3f} ({f:.3f})" for d, f in zip(direct, fast, strict=True))
                order = "all equal" if np.isinf(epsilon) else \
                    f"{'yes' if order_holds(direct) else 'no'} / {'yes' if order_holds(fast) else 'no'}"
                lines.append(f"| {'inf' if np.isinf(epsilon) else epsilon} | {k} | {cells} | {order} |")
        figure = out / "figures" / f"gk-figure2-sigma{label}.png"
        figure.parent.mkdir(parents=True, exist_ok=True)
        figure2(truth, n, rng, figure, f"f_tilde_mod on k x k grids, Sigma_{label}, n = {n}")
        figures.append(figure)
        lines.append("")
        lines.append(f"![Figure 2 analogue, Sigma_{label}](figures/{figure.name})")
        lines.append("")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--fast-reps", type=int, default=500)
    parser.add_argument("--n", type=int, default=10 ** 5)
    parser.add_argument("--seed", type=int, default=2013)
    parser.add_argument("--out", type=Path, default=DOCS)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", ldpest.DataDroppedWarning)
    text = run(args.reps, args.fast_reps, args.n, args.seed, args.out)
    (args.out / "gyorfi-kroll-study.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
