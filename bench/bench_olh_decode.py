"""Local-hashing decode time (the O(n d) support counts) and its block size (issue 28).

For d = 20, 100 and 10^4 at n = 10^6: ``ldpest.estimate`` of local-hashing reports, best of 2; then
the cost per (report, category) pair at n = 2^17, 2^19 and 2^21 (d = 20, 1000 and 10^4) with decoding
blocks of 2^15 and 2^18 rows (``_DECODE_ROWS``), to see whether the per-pair cost grows with n or with the
block:

    .venv/bin/python bench/bench_olh_decode.py     # output: bench/results/olh-decode.txt
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import ldpest
import ldpest_multinomial.hashing as hashing

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_frequency import best_time  # noqa: E402


def best_seconds(reports) -> float:
    return best_time(lambda: ldpest.estimate(reports), repeat=2, budget=0.0)


def reports_of(d: int, n: int):
    mechanism = ldpest.mechanism("local-hashing", epsilon=2.0, categories=list(range(d)))
    return mechanism.privatize(np.random.default_rng(0).integers(0, d, n), rng=1)


def main() -> None:
    print(f"ldpest {ldpest.__version__}; local-hashing at epsilon 2, estimate of 10^6 reports, best of 2")
    for d in (20, 100, 10_000):
        print(f"d = {d:6d}: {best_seconds(reports_of(d, 1_000_000)):.3f} s")
    print("ns per (report, category) pair, by decoding block (rows)")
    kept = hashing._DECODE_ROWS  # noqa: SLF001  the block size is what this script measures
    try:
        for d in (20, 1_000, 10_000):
            for n in (1 << 17, 1 << 19, 1 << 21):
                reports, cells = reports_of(d, n), []
                for rows in (1 << 15, 1 << 18):
                    hashing._DECODE_ROWS = rows  # noqa: SLF001
                    cells.append(f"2^{rows.bit_length() - 1}: {best_seconds(reports) / (n * d) * 1e9:.2f}")
                print(f"d = {d:6d}, n = 2^{n.bit_length() - 1}: " + "  ".join(cells), flush=True)
    finally:
        hashing._DECODE_ROWS = kept  # noqa: SLF001


if __name__ == "__main__":
    main()
