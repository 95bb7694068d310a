"""The conformance kit's costs (issue 22): proving a 1024 x 1550 lattice channel, structured beside
dense, and the distinguishing audit's time and bound for mechanisms that claim epsilon and are
1.1 epsilon-private, beside honest ones.

    .venv/bin/python bench/bench_kit.py
"""

from __future__ import annotations

import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))

import ldpest  # noqa: E402
from ldpest.privacy.exact import WORD, window_threshold  # noqa: E402
from ldpest.testing import empirical_epsilon  # noqa: E402


def lattice(points=1024, outputs=1550, width=527, epsilon=1.0):
    threshold = window_threshold(epsilon, width, outputs - width)
    levels = [Fraction(threshold, WORD * width), Fraction(WORD - threshold, WORD * (outputs - width))]
    shift = np.arange(points)[:, None] * (outputs - width) // (points - 1)
    grid = np.arange(outputs)[None, :]
    pattern = np.where((grid >= shift) & (grid < shift + width), 0, 1)
    return ldpest.Channel.from_levels(list(range(points)), np.arange(outputs), levels, pattern)


def seconds(function, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def main():
    structured = lattice()
    dense = ldpest.Channel(structured.inputs, structured.outputs, structured.dense())
    s = seconds(lambda: structured.satisfies(1.0))
    d = seconds(lambda: dense.satisfies(1.0), repeat=1)
    print(f"1024 x 1550 lattice, proof of ratio <= e^1 and exact row sums: structured {s:.3f} s, dense {d:.1f} s "
          f"({d / s:.0f}x)")
    import broken_plugin

    ldpest.register_plugin(broken_plugin.Plugin(), name="broken")
    print("\naudit (3 records, every ordered pair; bound holds with probability 1 - 1e-6)")
    print(f"{'mechanism':<34}{'claimed':>8}{'really':>8}{'bound':>8}{'seconds':>9}")
    for name, really in (("broken-overclaimed", 1.1), ("randomized-response", 1.0),
                         ("broken-overclaimed-laplace", 1.1), ("laplace", 1.0)):
        for epsilon in (0.5, 1.0, 2.0, 4.0):
            mech = ldpest.mechanism(name, epsilon=epsilon, categories=["a", "b"])
            start = time.perf_counter()
            bound, _ = empirical_epsilon(mech, ["a", "b"], seed=1)
            print(f"{name:<34}{epsilon:>8g}{really * epsilon:>8.3g}{bound:>8.3f}{time.perf_counter() - start:>9.2f}")


if __name__ == "__main__":
    main()
