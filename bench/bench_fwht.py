"""The Walsh-Hadamard transform two ways: numpy butterflies (log2 size passes, a Python loop) and one
product with the +-1 matrix, over the shapes the estimators use (``ldpest.stats.transforms.fwht`` takes
the product up to ``_MATRIX_SIZE``).

    .venv/bin/python bench/bench_fwht.py
"""

from __future__ import annotations

import timeit

import numpy as np

from ldpest.stats.transforms import _butterflies, hadamard_matrix  # noqa: PLC2701  the two ways compared


def per_call(function, number: int) -> float:
    return min(timeit.repeat(function, number=number, repeat=5)) / number * 1e6


def main() -> None:
    print(f"numpy {np.__version__}; microseconds a call, best of 5")
    print(f"{'size':>6}{'rows':>7}{'butterflies':>13}{'matrix':>9}{'ratio':>7}")
    for size in [8, 32, 64, 128, 256, 512, 1024]:
        matrix = hadamard_matrix(size)
        for rows in [1, 100, 10_000]:
            if rows * size > 4_000_000:
                continue
            values = np.random.default_rng(0).random((rows, size))
            number = max(1, 200_000 // (rows * size))
            slow = per_call(lambda: _butterflies(values), number)
            fast = per_call(lambda: values @ matrix, number)
            print(f"{size:>6}{rows:>7}{slow:>13.1f}{fast:>9.1f}{slow / fast:>7.2f}", flush=True)


if __name__ == "__main__":
    main()
