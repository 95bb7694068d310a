"""Local hashing, subset selection and Hadamard response: ldpest beside plain numpy and the peers.

For each (mechanism, d) it times privatise and estimate separately, best of
--repeat, and prints seconds per 10^6 reports and the ratios.  Targets
(issue 14): ldpest within 2x of plain numpy, at least 10x faster than each
peer's implementation of the same protocol.

    .venv/bin/python bench/bench_oracles.py              # n = 10^6, d in {100, 10^4}
    .venv/bin/python bench/bench_oracles.py --no-peers

Work is linear in n for every implementation, so rows whose work would be
huge run at a smaller n (printed) and every time is scaled to 10^6 reports:
subset selection at d = 10^4 (10^4 bits per report: 10 GB at 10^6; run at 2 x 10^4), the numpy
baseline of local hashing at d = 10^4 (one hash per report and category), and
the peers (one Python call per record, and per category for local hashing).
The peers are installed from PyPI into bench/.peers on first use.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

import ldpest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peers  # noqa: E402
from bench_frequency import best_time  # noqa: E402

MILLION = 10 ** 6
ROWS = [("local-hashing", 100), ("local-hashing", 10_000), ("subset-selection", 100),
        ("subset-selection", 10_000), ("hadamard-response", 100), ("hadamard-response", 10_000)]
PEERS = {"local-hashing": ("pure-ldp", "multi-freq-ldpy"), "subset-selection": ("multi-freq-ldpy",),
         "hadamard-response": ("pure-ldp",)}
PRIME = (1 << 31) - 1


# --- the simplest correct plain-numpy implementation of each protocol ----------------------------
def numpy_local_hashing(data, d, epsilon, rng):
    g = int(round(math.exp(epsilon) + 1))
    n = data.size
    p = math.exp(epsilon) / (math.exp(epsilon) + g - 1)
    a = rng.integers(1, PRIME, n).astype(np.uint64)
    c = rng.integers(0, PRIME, n).astype(np.uint64)
    hashed = ((a * data.astype(np.uint64) + c) % np.uint64(PRIME)) * np.uint64(g) // np.uint64(PRIME)
    other = rng.integers(0, g - 1, n).astype(np.uint64)
    other += other >= hashed
    y = np.where(rng.random(n) < p, hashed, other)
    return a, c, y, g, p


def numpy_local_hashing_estimate(reports, d, epsilon):
    a, c, y, g, p = reports
    support = np.zeros(d, dtype=np.int64)
    categories = np.arange(d, dtype=np.uint64)
    rows = max(1, (1 << 22) // d)
    for start in range(0, a.size, rows):
        block = slice(start, start + rows)
        hashed = ((a[block, None] * categories + c[block, None]) % np.uint64(PRIME)) * np.uint64(g) // np.uint64(PRIME)
        support += (hashed == y[block, None]).sum(axis=0)
    return (support / a.size - 1 / g) / (p - 1 / g)


def numpy_subset_selection(data, d, epsilon, rng):
    omega = max(1, round(d / (math.exp(epsilon) + 1)))
    n = data.size
    p = omega * math.exp(epsilon) / (omega * math.exp(epsilon) + d - omega)
    bits = np.zeros((n, d), dtype=np.uint8)
    step = max(1, (1 << 22) // d)  # blocks of rows: the float keys of all rows would not fit
    for start in range(0, n, step):
        x = data[start:start + step]
        rows = np.arange(x.size)
        holds = rng.random(x.size) < p
        keys = rng.random((x.size, d))
        keys[rows, x] = 2.0  # never among the smallest
        order = np.argpartition(keys, omega - 1, axis=1)
        block = bits[start:start + step]
        block[rows[:, None], order[:, :omega]] = 1
        block[rows[holds], order[holds, omega - 1]] = 0  # keep omega - 1 others, then add x
        block[rows[holds], x[holds]] = 1
    return bits, omega, p


def numpy_subset_selection_estimate(reports, d, epsilon):
    bits, omega, p = reports
    q = (p * (omega - 1) + (1 - p) * omega) / (d - 1)
    return (bits.sum(axis=0) / bits.shape[0] - q) / (p - q)


def _fwht(values):
    values = values.copy()
    h = 1
    while h < values.shape[-1]:
        view = values.reshape(*values.shape[:-1], -1, 2, h)
        first = view[..., 0, :].copy()
        view[..., 0, :] += view[..., 1, :]
        view[..., 1, :] = first - view[..., 1, :]
        h *= 2
    return values


def numpy_hadamard_response(data, d, epsilon, rng, blocks):
    load = -(-d // blocks)
    width = 1 << load.bit_length()
    half, symbols = width // 2, blocks * width
    e = math.exp(epsilon)
    p_in = half * e / (half * e + symbols - half)
    n = data.size
    block, row = data // load, data % load + 1

    def column(free, parity):  # free-th column of the block whose entry in `row` has `parity`
        low = row & -row
        col = ((free - (free & (low - 1))) << 1) | (free & (low - 1))
        return col | (low * ((np.bitwise_count(row & col) & 1) != parity))

    other = rng.integers(0, symbols - half, n)
    own = other >= symbols - width
    other_block = other // width
    other_block += other_block >= block
    outside = np.where(own, block * width + column(other - (symbols - width), 1), other_block * width + other % width)
    inside = block * width + column(rng.integers(0, half, n), 0)
    return np.where(rng.random(n) < p_in, inside, outside), (blocks, width, half, symbols, p_in, load)


def numpy_hadamard_response_estimate(reports, d, epsilon):
    symbols_out, (blocks, width, half, symbols, p_in, load) = reports
    spectra = _fwht(np.bincount(symbols_out, minlength=symbols).reshape(blocks, width))
    alpha, beta = p_in / half, (1 - p_in) / (symbols - half)
    codes = np.arange(d)
    return spectra[codes // load, codes % load + 1] / (symbols_out.size * half * (alpha - beta))


# --- timing ---------------------------------------------------------------------------------
def work_size(name, d, n, who):
    """Reports timed for this row (times are scaled to 10^6)."""
    if name == "subset-selection" and d >= 10_000:
        return min(n, 2 * 10 ** 4)
    if who == "numpy" and name == "local-hashing" and d >= 10_000:
        return min(n, 10 ** 5)
    return n


def peer_size(name, d):
    per_report = d if name == "local-hashing" else (d / 4 if name == "subset-selection" else 1)
    return int(max(200, min(20_000, 2 * 10 ** 6 / per_report)))


def run_row(name, d, n, epsilon, repeat, with_peers):
    rng = np.random.default_rng(1)
    row = {"mechanism": name, "d": d}
    size = work_size(name, d, n, "ldpest")
    data = rng.integers(0, d, size)
    mech = ldpest.mechanism(name, epsilon=epsilon, categories=list(range(d)))
    reports = mech.privatize(data, rng=np.random.default_rng(2))
    estimator = ldpest.estimator("frequency")
    row["n"] = size
    privatize_time = best_time(lambda: mech.privatize(data, rng=np.random.default_rng(2)), repeat)
    row["ldpest_privatize"] = privatize_time * MILLION / size
    row["ldpest_estimate"] = best_time(lambda: estimator.estimate(reports), repeat) * MILLION / size
    reports = None  # free the memory before the numpy baseline

    size = work_size(name, d, n, "numpy")
    data = data[:size]
    make, estimate = {
        "local-hashing": (numpy_local_hashing, numpy_local_hashing_estimate),
        "subset-selection": (numpy_subset_selection, numpy_subset_selection_estimate),
        "hadamard-response": (lambda x, d_, e, r: numpy_hadamard_response(x, d_, e, r, mech.params["blocks"]),
                              numpy_hadamard_response_estimate),
    }[name]
    base = make(data, d, epsilon, np.random.default_rng(2))
    row["numpy_n"] = size
    row["numpy_privatize"] = best_time(lambda: make(data, d, epsilon, np.random.default_rng(2)),
                                       repeat) * MILLION / size
    row["numpy_estimate"] = best_time(lambda: estimate(base, d, epsilon), repeat) * MILLION / size
    base = None
    for peer in ("pure-ldp", "multi-freq-ldpy"):
        row[peer] = None
        if with_peers and peer in PEERS[name]:
            count = peer_size(name, d)
            times = peers.time_peer({"peer": peer, "mechanism": name, "n": count, "d": d, "epsilon": epsilon,
                                     "seed": 1, "split": True})
            row[peer] = {key: value * MILLION / count for key, value in times.items()} | {"n": count}
    return row


def print_row(row):
    def ratio(a, b):
        return f"{a / b:8.2f}" if a and b else "     n/a"

    for step in ("privatize", "estimate"):
        ours, base = row[f"ldpest_{step}"], row[f"numpy_{step}"]
        peer_cells = ""
        for peer in ("pure-ldp", "multi-freq-ldpy"):
            value = row[peer][step] if row[peer] else None
            peer_cells += (f"{value:>12.3g}{ratio(value, ours)}" if value else f"{'n/a':>12}{'':>8}")
        print(f"{row['mechanism']:<19}{row['d']:>7} {step:<10}{ours:>10.3g}{base:>10.3g}{ratio(ours, base)}{peer_cells}"
              f"   (n: ldpest {row['n']:.0e}, numpy {row['numpy_n']:.0e}"
              + "".join(f", {p} {row[p]['n']}" for p in ("pure-ldp", "multi-freq-ldpy") if row[p]) + ")")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=MILLION)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--d", type=int, nargs="*", default=[100, 10_000])
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if not args.no_peers:
        peers.ensure_peer_env()
    print(f"seconds per 10^6 reports, epsilon = {args.epsilon}, best of {args.repeat}")
    print(f"{'mechanism':<19}{'d':>7} {'step':<10}{'ldpest':>10}{'numpy':>10}{'ld/np':>8}"
          f"{'pure-ldp':>12}{'/ldpest':>8}{'mfl':>12}{'/ldpest':>8}")
    rows = []
    for name, d in ROWS:
        if d in args.d:
            rows.append(run_row(name, d, args.n, args.epsilon, args.repeat, not args.no_peers))
            print_row(rows[-1])
    print("targets: ld/np <= 2, peer/ldpest >= 10")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return rows


if __name__ == "__main__":
    main()
