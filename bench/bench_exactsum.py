"""Exact lattice sums (``ExactSum.of(values, step)``, what the Laplace estimates spend their time on) beside
numpy's float64 column sums of the same values, per shape, and the lattice block size (issue 28).

Values are integer multiples of 2^-20 below 2^25 steps, the shape of lattice Laplace reports; best of --repeat:

    .venv/bin/python bench/bench_exactsum.py     # output: bench/results/exactsum.txt
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import ldpest.stats.exactsum as exactsum

SHAPES = [(10_000_000, 1), (1_000_000, 20), (100_000, 1000), (1_000_000, 16)]
STEP = 2.0 ** -20


def best_ms(call, repeat: int) -> float:
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--blocks", default="", help="comma-separated log2 block sizes to compare (default: as set)")
    args = parser.parse_args()
    default = exactsum._LATTICE_BLOCK  # noqa: SLF001  the block size is what this script measures
    blocks = [int(b) for b in args.blocks.split(",") if b] or [default.bit_length() - 1]
    print(f"ExactSum.of on a lattice of 2^-20 against numpy's sum(axis=0), ms, best of {args.repeat}")
    print(f"{'shape':>18} {'numpy':>8} " + " ".join(f"{'block 2^' + str(b):>11} {'ratio':>6}" for b in blocks))
    rng = np.random.default_rng(0)
    for n, k in SHAPES:
        values = rng.integers(-2 ** 25, 2 ** 25, (n, k)) * STEP
        plain = best_ms(lambda v=values: v.sum(axis=0), args.repeat)
        row = []
        for bits in blocks:
            exactsum._LATTICE_BLOCK = 1 << bits  # noqa: SLF001
            assert exactsum.ExactSum._of_lattice(values, STEP) is not None  # noqa: SLF001  the lattice path
            ms = best_ms(lambda v=values: exactsum.ExactSum.of(v, STEP), args.repeat)
            row.append(f"{ms:11.1f} {ms / plain:6.2f}")
        exactsum._LATTICE_BLOCK = default  # noqa: SLF001
        print(f"{str((n, k)):>18} {plain:8.1f} " + " ".join(row), flush=True)


if __name__ == "__main__":
    main()
