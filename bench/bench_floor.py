"""Every mechanism's privatise beside its random-word floor (issue 28): the words it draws times the cost of
one raw word of numpy's default bit generator, in one run.

    .venv/bin/python bench/bench_floor.py --n 1e6 --repeat 5

The words are counted exactly by privatising once with a Philox generator, whose state is a counter
(four 64-bit words per step) and a position in its buffer of four: every bounded integer, float, normal or
32-bit half that numpy draws comes out of that buffer.  Privatise is then timed with ``default_rng``
(PCG64), alternately with drawing as many raw words (``random_raw``, 2^14 at a time), best of each.  The
ratio says how far a mechanism is from doing nothing but draw its random bits; target 2.5x.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import ldpest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_frequency_likelihood import register_example_plugin  # noqa: E402
from bench_mechanisms import EPSILON, label, selected_cases  # noqa: E402


def philox_position(generator: np.random.Generator) -> int:
    """The number of 64-bit words a Philox generator has handed out since it was seeded."""
    state = generator.bit_generator.state
    return 4 * int(state["state"]["counter"][0]) + int(state["buffer_pos"])


def words_drawn(call) -> int:
    """The 64-bit words ``call(rng)`` draws from ``rng`` (a fresh seeded Philox generator)."""
    generator = np.random.Generator(np.random.Philox(7))
    start = philox_position(generator)
    call(generator)
    return philox_position(generator) - start


def draw_raw(bits, words: int, chunk: int = 1 << 14) -> None:
    """Draw ``words`` raw words 2^14 at a time (in cache: the cheapest way, so the strictest floor)."""
    for _ in range(words // chunk):
        bits.random_raw(chunk)
    bits.random_raw(words % chunk)


def interleaved_best(first, second, repeat: int) -> tuple[float, float]:
    """The best times of two calls timed alternately (this machine's speed drifts by 1.5x between runs)."""
    best_first = best_second = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        first()
        middle = time.perf_counter()
        second()
        best_first, best_second = min(best_first, middle - start), min(best_second, time.perf_counter() - middle)
    return best_first, best_second


def main(argv=None) -> None:
    import warnings

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", default="1e6")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default=None, help="comma-separated mechanism names")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    register_example_plugin()
    bits = np.random.default_rng(1).bit_generator
    print(f"ldpest {ldpest.__version__}, numpy {np.__version__}; floor: random_raw of PCG64 for the same words, "
          f"timed alternately with privatise, best of {args.repeat} each; epsilon {EPSILON}")
    print(f"{'mechanism':<38}{'n':>9}{'words/report':>14}{'ns/word':>9}{'floor s':>10}{'privatise s':>13}"
          f"{'ratio':>7}")
    for (name, params, _, make, _, _), mech in selected_cases(args.only):
        for n in [int(float(v)) for v in args.n.split(",")]:
            data = make(n, np.random.default_rng(0))
            words = words_drawn(lambda rng: mech.privatize(data, rng=rng))
            mech.privatize(data[:1000], rng=np.random.default_rng(1))  # warm caches and imports
            seconds, floor = interleaved_best(lambda: mech.privatize(data, rng=np.random.default_rng(1)),
                                              lambda: draw_raw(bits, words), args.repeat)
            print(f"{label(name, params):<38}{n:>9.0e}{words / n:>14.2f}{floor / words * 1e9:>9.2f}{floor:>10.4f}"
                  f"{seconds:>13.4f}{seconds / floor:>7.2f}", flush=True)


if __name__ == "__main__":
    main()
