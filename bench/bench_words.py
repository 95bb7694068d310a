"""Cost of one uniform 64-bit word from numpy, the two ways ldpest has built them (issue 28's finding).

    .venv/bin/python bench/bench_words.py
"""

from __future__ import annotations

import time

import numpy as np


def per_word(function, count: int, repeat: int = 9) -> float:
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best / count * 1e9


def main() -> None:
    rng, count = np.random.default_rng(1), 1_000_000
    halves = per_word(lambda: rng.integers(0, 0xFFFFFFFF, size=2 * count, dtype=np.uint32, endpoint=True)
                      .view(np.uint64), count)
    whole = per_word(lambda: rng.integers(0, 0xFFFFFFFFFFFFFFFF, size=count, dtype=np.uint64, endpoint=True), count)
    print(f"numpy {np.__version__}, {count} words, best of 9")
    print(f"two 32-bit halves  {halves:5.2f} ns a word")
    print(f"full uint64 range  {whole:5.2f} ns a word   (ratio halves / whole {halves / whole:.2f})")


if __name__ == "__main__":
    main()
