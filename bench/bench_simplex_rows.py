"""Time the simplex projection and the count MLE (the water-filling) on batches of long rows, the shapes
``auto``'s simulations give them (issue 28, growth in d).

    .venv/bin/python bench/bench_simplex_rows.py                  # bench/results/simplex-rows.txt

Run it again with an older ldpest first on the path (a git worktree: ``PYTHONPATH=<worktree>:<worktree>/plugins``)
to compare; the rows are the same (seeded).  Milliseconds for 60 rows, best of ``--repeat``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import ldpest
from ldpest.stats.projection import affine_count_mle, project_simplex


def _rows(d: int, rng) -> dict[str, np.ndarray]:
    truth = np.exp(-12.5 * np.arange(d) / d)
    truth /= truth.sum()
    return {"noisy (sd 0.03)": truth + rng.normal(0, 0.03, (60, d)),
            "mild (sd 1e-4)": truth + rng.normal(0, 1e-4, (60, d)),
            "Poisson(0.1) / 1000": rng.poisson(0.1, (60, d)) / 1000.0,
            "flat": 1.0 / d + rng.normal(0, 1e-7, (60, d))}


def _best(function, values, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function(values)
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"ldpest {ldpest.__version__} from {ldpest.__file__}; ms for 60 rows, best of {args.repeat}")
    print(f"{'d':>7}  {'rows':22}  {'project_simplex':>15}  {'affine_count_mle':>16}")
    for d in (10**4, 10**5):
        for name, values in _rows(d, np.random.default_rng(d)).items():
            counts = np.abs(values) * 1000
            counts[:, 0] += 1
            simplex = _best(project_simplex, values, args.repeat)
            water = _best(lambda c: affine_count_mle(c, 0.5), counts, args.repeat)
            print(f"{d:>7}  {name:22}  {simplex:15.1f}  {water:16.1f}")


if __name__ == "__main__":
    main()
