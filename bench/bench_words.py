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
    from ldpest.privacy.exact import _top_bits_redrawn, uniform_below  # noqa: PLC2701  its own path, alone

    print(f"bounded integers, {block} at a time: ns a value")
    for span in [3, 125, 2 ** 16, 2 ** 31 - 2]:
        theirs = per_word(lambda: rng.integers(0, span, size=block), block, 50)
        redrawn = per_word(lambda: _top_bits_redrawn(rng, span, block), block, 50)
        chosen = per_word(lambda: uniform_below(rng, span, block), block, 50)
        print(f"span {span:>10}  numpy integers {theirs:5.2f}  top bits + redraws {redrawn:5.2f}  "
              f"uniform_below {chosen:5.2f}")


if __name__ == "__main__":
    main()
