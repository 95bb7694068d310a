"""Every mechanism's privatise beside its random-word floor (issue 28): the words it draws times the cost of
one raw word of numpy's default bit generator, in one run.

    .venv/bin/python bench/bench_floor.py --n 1e6 --repeat 5

The words are counted exactly by privatising once with a Philox generator, whose state is a counter
(four 64-bit words per step) and a position in its buffer of four: every bounded integer, float, normal or
32-bit half that numpy draws comes out of that buffer.  Privatise is then timed with ``default_rng``
(PCG64), and the floor is ``words * t_raw`` with ``t_raw`` the best time of ``random_raw`` per word.  The
ratio says how far a mechanism is from doing nothing but draw its random bits; target 2.5x.
"""

from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path

import numpy as np

import ldpest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_frequency import best_time as best  # noqa: E402
from bench_frequency_likelihood import register_example_plugin  # noqa: E402
from bench_mechanisms import EPSILON, cases, label  # noqa: E402


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


def raw_word_seconds(count: int = 1 << 14, number: int = 200, repeat: int = 9) -> float:
    """The best time of one raw word, drawn 2^14 at a time (in cache: the lowest, so the strictest floor)."""
    bits = np.random.default_rng(1).bit_generator
    return min(timeit.repeat(lambda: bits.random_raw(count), number=number, repeat=repeat)) / (number * count)


def main(argv=None) -> None:
    import warnings

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", default="1e6")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default=None, help="comma-separated mechanism names")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    register_example_plugin()
    raw = raw_word_seconds()
    print(f"ldpest {ldpest.__version__}, numpy {np.__version__}; random_raw {raw * 1e9:.2f} ns a word "
          f"(PCG64); privatise best of {args.repeat}; epsilon {EPSILON}")
    print(f"{'mechanism':<38}{'n':>9}{'words/report':>14}{'floor s':>10}{'privatise s':>13}{'ratio':>7}")
    for name, params, _, make, _, _ in cases():
        if args.only and name not in args.only.split(","):
            continue
        mech = ldpest.mechanism(name, epsilon=EPSILON, **params)
        for n in [int(float(v)) for v in args.n.split(",")]:
            data = make(n, np.random.default_rng(0))
            words = words_drawn(lambda rng: mech.privatize(data, rng=rng))
            seconds = best(lambda: mech.privatize(data, rng=np.random.default_rng(1)), args.repeat)
            floor = words * raw
            print(f"{label(name, params):<38}{n:>9.0e}{words / n:>14.2f}{floor:>10.4f}{seconds:>13.4f}"
                  f"{seconds / floor:>7.2f}", flush=True)


if __name__ == "__main__":
    main()
