"""Privatisation speed of the Laplace mechanisms next to plain numpy float Laplace.

Issue 11 asked that exact privacy cost no speed: this times ``privatize`` of
``laplace`` (d = 100) and ``laplace-histogram`` (5 x 5 cells) for n = 10^6
records, best of --repeat, next to numpy's ``rng.laplace`` on the same shape
(the float mechanism that leaks through its low-order bits).  To compare with
an older ldpest, run the same script with that checkout first on PYTHONPATH:

    .venv/bin/python bench/bench_privatize.py
    git worktree add /tmp/old REF && PYTHONPATH=/tmp/old:/tmp/old/plugins .venv/bin/python bench/bench_privatize.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

import ldpest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_frequency import best_time  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    n, rng = args.n, np.random.default_rng(1)
    rows = [
        ("laplace d=100", ldpest.mechanism("laplace", epsilon=1.0, categories=list(range(100))),
         rng.integers(0, 100, n), (n, 100)),
        ("laplace-histogram 5x5", ldpest.mechanism("laplace-histogram", epsilon=1.0, low=[0, 0], high=[1, 1], bins=5),
         rng.uniform(0, 1, (n, 2)), (n, 25)),
    ]
    print(f"ldpest {ldpest.__version__} from {ldpest.__file__}; n = {n}, best of {args.repeat}")
    print(f"{'mechanism':24} {'ldpest s':>9} {'numpy float s':>14} {'ratio':>6}")
    for label, mech, data, shape in rows:
        ours = best_time(lambda: mech.privatize(data, rng=rng), args.repeat)
        plain = best_time(lambda: rng.laplace(scale=2.0, size=shape), args.repeat)
        print(f"{label:24} {ours:9.3f} {plain:14.3f} {ours / plain:6.2f}")


if __name__ == "__main__":
    main()
