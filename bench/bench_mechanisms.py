"""Every mechanism and its estimator beside the simplest correct plain-numpy implementation of the
same computation, privatise and estimate timed separately, in one run (issue 15).

    .venv/bin/python bench/bench_mechanisms.py                  # n = 10^5, 10^6
    .venv/bin/python bench/bench_mechanisms.py --n 1e5,1e6,1e7 --repeat 3
    .venv/bin/python bench/bench_mechanisms.py --n 1e6 --memory         # peak traced memory instead

The baselines draw floats where ldpest draws 64-bit words against proven thresholds, keep
reports in whatever dtype is handy, sum in float64 (ldpest: exact sums) and build no labelled
result, so they are a lower bound for a private implementation.  Target (issue 15): every row
within 1.5x.  d = 20 categories or cells; series k = 16; epsilon = 1; data are category
codes, or Beta(2, 5) points for the densities.  The OUE example plugin (plugins/ldpest-oue) is the
third-party row, registered from the source tree when it is not installed.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

import ldpest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_frequency import best_time as best  # noqa: E402
from bench_frequency_likelihood import register_example_plugin  # noqa: E402
from bench_oracles import (  # noqa: E402
    numpy_hadamard_response,
    numpy_hadamard_response_estimate,
    numpy_local_hashing,
    numpy_local_hashing_estimate,
    numpy_subset_selection,
    numpy_subset_selection_estimate,
)

D, K, EPSILON = 20, 16, 1.0


def rr(data, rng):
    e = math.exp(EPSILON)
    p, q = e / (e + D - 1), 1 / (e + D - 1)
    other = rng.integers(0, D - 1, data.size)
    other += other >= data
    return np.where(rng.random(data.size) < p, data, other), (p, q)


def rr_estimate(reports):
    values, (p, q) = reports
    return (np.bincount(values, minlength=D) / values.size - q) / (p - q)


def unary(data, rng):
    p = math.exp(EPSILON / 2) / (1 + math.exp(EPSILON / 2))
    bits = rng.random((data.size, D)) >= p
    bits[np.arange(data.size), data] ^= True
    return bits, p


def unary_estimate(reports):
    bits, p = reports
    return (bits.sum(axis=0) / bits.shape[0] - (1 - p)) / (2 * p - 1)


def optimized_unary(data, rng):
    q = 1 / (math.exp(EPSILON) + 1)
    bits = rng.random((data.size, D)) < q
    bits[np.arange(data.size), data] = rng.random(data.size) < 0.5
    return bits, q


def optimized_unary_estimate(reports):
    bits, q = reports
    return (bits.sum(axis=0) / bits.shape[0] - q) / (0.5 - q)


def laplace_one_hot(cells, rng, width=D):
    reports = rng.laplace(scale=2 / EPSILON, size=(cells.size, width))
    reports[np.arange(cells.size), cells] += 1
    return reports


def mean_estimate(reports):
    return reports.mean(axis=0)


def histogram(x, rng):
    return laplace_one_hot(np.minimum((x * D).astype(np.int64), D - 1), rng)


def trigonometric(x):
    columns = [np.ones_like(x)]
    for j in range(1, K):
        frequency = (j + 1) // 2
        columns.append(math.sqrt(2) * (np.cos if j % 2 else np.sin)(2 * math.pi * frequency * x))
    return np.column_stack(columns)


def laplace_series(x, rng):
    phi = trigonometric(x)
    return phi + rng.laplace(scale=2 * math.sqrt(2) * K / EPSILON, size=phi.shape)


def moments_estimate(reports):
    return reports.mean(axis=0), reports.T @ reports / reports.shape[0]


WALSH_K = 64  # the slow case: Walsh functions, k = 64


def walsh(x, k=WALSH_K):
    """Walsh functions in Paley order from a +-1 table: w_n(x) = (-1)^popcount(n & reversed bits of x)."""
    bits = int(math.log2(k))
    cell = np.minimum((x * k).astype(np.int64), k - 1)
    reversed_cell = np.zeros_like(cell)
    for m in range(bits):
        reversed_cell |= ((cell >> m) & 1) << (bits - 1 - m)
    table = 1 - 2 * (np.bitwise_count(np.arange(k)[:, None] & np.arange(k)[None, :]) & 1).astype(np.int64)
    return table[reversed_cell].astype(np.float64)


def linf(x, rng, basis=trigonometric, b0=math.sqrt(2)):
    """Duchi et al.'s sampler: vertex by coordinatewise coins, uniform signs accepted when they
    agree with the vertex, else with probability 1 / e^epsilon (k even: ties count as far)."""
    tau = basis(x)
    n, k = tau.shape
    vertex = np.where(rng.random((n, k)) < 0.5 + tau / (2 * b0), 1, -1).astype(np.int8)
    out = np.empty((n, k), dtype=np.int8)
    pending = np.arange(n)
    while pending.size:
        u = np.where(rng.random((pending.size, k)) < 0.5, 1, -1).astype(np.int8)
        agree = (u * vertex[pending]).sum(axis=1, dtype=np.int64) > 0
        accept = agree | (rng.random(pending.size) < math.exp(-EPSILON))
        out[pending[accept]] = u[accept]
        pending = pending[~accept]
    return out


def signs_estimate(reports):
    values = reports.astype(np.float64)
    return values.mean(axis=0), values.T @ values / values.shape[0]


def cases():
    """(mechanism, parameters, ldpest estimator, data maker, numpy privatise, numpy estimate)."""
    codes = lambda n, rng: rng.integers(0, D, n)  # noqa: E731
    points = lambda n, rng: rng.beta(2, 5, n)  # noqa: E731
    categories = {"categories": list(range(D))}
    return [
        ("randomized-response", categories, None, codes, rr, rr_estimate),
        ("unary-randomized-response", categories, None, codes, unary, unary_estimate),
        ("optimized-unary-encoding", categories, None, codes, optimized_unary, optimized_unary_estimate),
        ("laplace", categories, None, codes, laplace_one_hot, mean_estimate),
        ("local-hashing", categories, None, codes, lambda c, rng: numpy_local_hashing(c, D, EPSILON, rng),
         lambda r: numpy_local_hashing_estimate(r, D, EPSILON)),
        ("subset-selection", categories, None, codes, lambda c, rng: numpy_subset_selection(c, D, EPSILON, rng),
         lambda r: numpy_subset_selection_estimate(r, D, EPSILON)),
        ("hadamard-response", categories, None, codes,
         lambda c, rng: numpy_hadamard_response(c, D, EPSILON, rng, 1),
         lambda r: numpy_hadamard_response_estimate(r, D, EPSILON)),
        ("laplace-histogram", {"low": [0], "high": [1], "bins": D}, "histogram-mean", points, histogram, mean_estimate),
        ("laplace-series", {"basis": "trigonometric", "k": K}, None, points, laplace_series, moments_estimate),
        ("linf-sampling", {"basis": "trigonometric", "k": K}, None, points, linf, signs_estimate),
        ("linf-sampling", {"basis": "walsh", "k": WALSH_K}, None, points, lambda x, rng: linf(x, rng, walsh, 1.0),
         signs_estimate),
    ]


def selected_cases(only: str | None):
    """``(case, mechanism)`` for every case of :func:`cases` named in the comma-separated ``only`` (all if None)."""
    names = only.split(",") if only else None
    for case in cases():
        if names is None or case[0] in names:
            yield case, ldpest.mechanism(case[0], epsilon=EPSILON, **case[1])


def label(name, params):
    """The printed row name: the mechanism, and the basis when there is one."""
    return f"{name} ({params['basis']}, k={params['k']})" if "basis" in params else name



def traced_peak(call) -> tuple[object, int]:
    """``call()``'s result and the peak of the memory it allocated (numpy's buffers are traced)."""
    import tracemalloc

    tracemalloc.start()
    try:
        return call(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def memory_rows(sizes, only):
    """Peak memory of ldpest's privatise and estimate, in units of the reports' size (issue 15's
    target: privatise at most 1.5x the reports; estimate bounded by one block)."""
    print(f"{'mechanism':<38}{'n':>9}{'report dtype':>14}{'reports MiB':>13}{'privatise peak':>16}"
          f"{'estimate peak':>15}{'estimate MiB':>14}")
    for (name, params, estimator, make, _, _), mech in selected_cases(only):
        for n in sizes:
            data = make(n, np.random.default_rng(0))
            mech.privatize(data[:1000], rng=np.random.default_rng(1))  # warm caches and imports
            reports, privatise_peak = traced_peak(lambda: mech.privatize(data, rng=np.random.default_rng(1)))
            ldpest.estimate(reports, estimator)
            _, estimate_peak = traced_peak(lambda: ldpest.estimate(reports, estimator))
            size = np.asarray(reports.values).nbytes
            dtype = str(np.asarray(reports.values).dtype)
            print(f"{label(name, params):<38}{n:>9.0e}{dtype:>14}{size / 2 ** 20:>13.1f}"
                  f"{privatise_peak / size:>15.2f}x{estimate_peak / size:>14.2f}x{estimate_peak / 2 ** 20:>14.1f}",
                  flush=True)


def main(argv=None):
    import warnings

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", default="1e5,1e6")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default=None, help="comma-separated mechanism names")
    parser.add_argument("--memory", action="store_true", help="print peak memory instead of times")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    register_example_plugin()  # the OUE example plugin, the third-party row
    sizes = [int(float(v)) for v in args.n.split(",")]
    if args.memory:
        return memory_rows(sizes, args.only)
    print(f"{'mechanism':<38}{'n':>9}{'privatise s':>13}{'numpy s':>9}{'ratio':>7}{'estimate s':>12}"
          f"{'numpy s':>9}{'ratio':>7}")
    for (name, params, estimator, make, numpy_privatise, numpy_estimate), mech in selected_cases(args.only):
        for n in sizes:
            data = make(n, np.random.default_rng(0))
            ours = best(lambda: mech.privatize(data, rng=np.random.default_rng(1)), args.repeat)
            theirs = best(lambda: numpy_privatise(data, np.random.default_rng(1)), args.repeat)
            reports, plain = mech.privatize(data, rng=np.random.default_rng(1)), numpy_privatise(data,
                                                                                              np.random.default_rng(1))
            ours_e = best(lambda: ldpest.estimate(reports, estimator), args.repeat)
            theirs_e = best(lambda: numpy_estimate(plain), args.repeat)
            print(f"{label(name, params):<38}{n:>9.0e}{ours:>13.4f}{theirs:>9.4f}{ours / theirs:>7.2f}{ours_e:>12.4f}"
                  f"{theirs_e:>9.4f}{ours_e / theirs_e:>7.2f}", flush=True)


if __name__ == "__main__":
    main()
