"""Cost of one uniform 64-bit word from numpy, the two ways ldpest has built them (issue 28's finding), and of
exactly uniform bounded integers: numpy's ``integers`` against ``ldpest.privacy.exact.uniform_below``.

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
    block = 1 << 14
    ranged = per_word(lambda: rng.integers(0, 0xFFFFFFFFFFFFFFFF, size=block, dtype=np.uint64, endpoint=True),
                      block, 50)
    raw = per_word(lambda: rng.bit_generator.random_raw(block), block, 50)
    print(f"{block} words at a time: full-range integers {ranged:5.2f} ns, random_raw {raw:5.2f} ns (the same words)")
    from ldpest.privacy.exact import uniform_below

    print(f"bounded integers, {block} at a time: ns a value")
    for span in [3, 125, 2 ** 16, 2 ** 31 - 2]:
        theirs = per_word(lambda: rng.integers(0, span, size=block), block, 50)
        redrawn = per_word(lambda: own_redraws(rng, span, block), block, 50)
        chosen = per_word(lambda: uniform_below(rng, span, block), block, 50)
        print(f"span {span:>10}  numpy integers {theirs:5.2f}  top bits + redraws {redrawn:5.2f}  "
              f"uniform_below {chosen:5.2f}")


def own_redraws(rng, span: int, size: int):
    """uniform_below's own path at any span (it takes numpy's below 63/64 of a power of two)."""
    from ldpest.privacy.exact import random_words

    shift = np.uint32(32 - max(1, (span - 1).bit_length()))
    values = (random_words(rng, -(-size // 2)).view(np.uint32)[:size] >> shift).astype(np.int64)
    again = np.flatnonzero(values >= span)
    while again.size:
        values[again] = random_words(rng, -(-again.size // 2)).view(np.uint32)[:again.size] >> shift
        again = again[values[again] >= span]
    return values


if __name__ == "__main__":
    main()
