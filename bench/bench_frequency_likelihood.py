"""The ``frequency-likelihood`` estimator (issue 23): its error against the simplex projection and the
default (``frequency``, projection ``auto``) on the same reports, the passes it makes over them, and its
time against the projection's.
``passes``: the passes with the simulated curvature's rank-one fit and without it.
``model``: the passes and seconds with each count of simulated reports per category (``--model-reports``).

``accuracy``: for each oracle, epsilon, d and truth (``skewed``: ``theta_j ~ exp(-12.5 j / d)``; ``flat``),
``reps`` sets of n privatised reports of data drawn from the truth; mean squared l2 error of each estimate,
the ratio MLE / simplex with its paired standard error, and the passes (mean and most).
``time``: one set of n reports at d categories, each estimate timed end to end in the same run (best of
``--repeat``); the ratio likelihood / projection.

    B=bench/results/frequency-likelihood.txt
    .venv/bin/python bench/bench_frequency_likelihood.py accuracy --reps 20 > $B
    .venv/bin/python bench/bench_frequency_likelihood.py time --n 1000000 --d 1000 --epsilons 1,4 >> $B
    .venv/bin/python bench/bench_frequency_likelihood.py time --n 10000000 --d 1000 --epsilons 1,4 \
        --oracles unary-randomized-response,optimized-unary-encoding,subset-selection --repeat 1 >> $B
    .venv/bin/python bench/bench_frequency_likelihood.py time --n 10000000 --d 1000 --epsilons 1,4 \
        --oracles local-hashing --repeat 1 >> $B
    .venv/bin/python bench/bench_frequency_likelihood.py passes --n 100000 --d 10,100,300 \
        --oracles unary-randomized-response,subset-selection,local-hashing >> $B
    .venv/bin/python bench/bench_frequency_likelihood.py model --n 100000 --d 1000 --model-reports 32,16,8 >> $B
    .venv/bin/python bench/bench_frequency_likelihood.py model --n 50000 --d 2000 --epsilons 0.5,4 \
        --oracles unary-randomized-response,subset-selection,local-hashing --model-reports 32,8 >> $B
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import ldpest

ORACLES = ("unary-randomized-response", "optimized-unary-encoding", "subset-selection", "local-hashing")


def register_example_plugin() -> None:
    """The OUE example plugin from the source tree, when it is not installed."""
    try:
        ldpest.mechanism("optimized-unary-encoding", epsilon=1, categories=[0, 1])
    except ldpest.UnknownPluginError:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins" / "ldpest-oue" / "src"))
        import ldpest_oue

        ldpest.register_plugin(ldpest_oue, name="ldpest-oue")


def truth_of(shape: str, d: int) -> np.ndarray:
    values = np.exp(-12.5 * np.arange(d) / d) if shape == "skewed" else np.ones(d)
    return values / values.sum()


def quiet_estimate(reports, estimator):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ldpest.EstimateWarning)
        return ldpest.estimate(reports, estimator)


def accuracy(args) -> None:
    estimators = {"mle": ldpest.estimator("frequency-likelihood"),
                  "simplex": ldpest.estimator("frequency", projection="simplex"),
                  "auto": ldpest.estimator("frequency")}
    print(f"# accuracy: n = {args.n}, {args.reps} repetitions; mean squared l2 error x 1e3; ratio = mle / simplex "
          "(+- its paired standard error)")
    print(f"{'oracle':28s} {'eps':>4s} {'d':>4s} {'truth':6s} {'mle':>8s} {'simplex':>8s} {'auto':>8s} "
          f"{'ratio':>14s} {'passes':>9s}")
    for name, epsilon, d, shape in itertools.product(args.oracles.split(","), map(float, args.epsilons.split(",")),
                                                     map(int, args.d.split(",")), ("skewed", "flat")):
        mechanism = ldpest.mechanism(name, epsilon=epsilon, categories=list(range(d)))
        truth = truth_of(shape, d)
        rng = np.random.default_rng(0)
        errors = {key: np.empty(args.reps) for key in estimators}
        passes = np.empty(args.reps)
        for rep in range(args.reps):
            reports = mechanism.privatize(rng.choice(d, size=args.n, p=truth), rng=rng)
            for key, estimator in estimators.items():
                result = quiet_estimate(reports, estimator)
                errors[key][rep] = np.sum((result["probability"].values - truth) ** 2)
                if key == "mle":
                    passes[rep] = result.attrs["mle_passes"]
        ratio = errors["mle"].mean() / errors["simplex"].mean()
        paired = (errors["mle"] - errors["simplex"]).std(ddof=1) / np.sqrt(args.reps) / errors["simplex"].mean()
        means = "".join(f" {1e3 * errors[key].mean():8.3f}" for key in estimators)
        print(f"{name:28s} {epsilon:4g} {d:4d} {shape:6s}{means} {ratio:7.3f} +- {paired:.3f} "
              f"{passes.mean():5.1f} {int(passes.max()):3d}", flush=True)


def timing(args) -> None:
    print(f"# time: n = {args.n}, d = {args.d}, best of {args.repeat}; seconds of ldpest.estimate on reports in memory")
    print(f"{'oracle':28s} {'eps':>4s} {'projection s':>12s} {'likelihood s':>12s} {'ratio':>6s} {'passes':>6s}")
    d = int(args.d)
    for name, epsilon in itertools.product(args.oracles.split(","), map(float, args.epsilons.split(","))):
        mechanism = ldpest.mechanism(name, epsilon=epsilon, categories=list(range(d)))
        rng = np.random.default_rng(0)
        reports = mechanism.privatize(rng.choice(d, size=args.n, p=truth_of("skewed", d)), rng=rng)
        seconds = {}
        for key, estimator in (("projection", ldpest.estimator("frequency", projection="simplex")),
                               ("likelihood", ldpest.estimator("frequency-likelihood"))):
            best = np.inf
            for _ in range(args.repeat):
                start = time.perf_counter()
                result = quiet_estimate(reports, estimator)
                best = min(best, time.perf_counter() - start)
            seconds[key] = best
        print(f"{name:28s} {epsilon:4g} {seconds['projection']:12.3f} {seconds['likelihood']:12.3f} "
              f"{seconds['likelihood'] / seconds['projection']:6.1f} {result.attrs['mle_passes']:6d}", flush=True)
        del reports


def passes(args) -> None:
    """Passes to convergence with the simulated curvature's rank-one fit off the diagonal (the default) and
    without it (``RANK_ONE_BELOW = 0``), on one set of reports per cell."""
    from ldpest_multinomial import likelihood

    default = likelihood.RANK_ONE_BELOW
    print(f"# passes: n = {args.n}, one set of reports per cell; rank-one fit where fewer than {default} "
          "simulated reports per category, against never")
    print(f"{'oracle':28s} {'eps':>4s} {'d':>4s} {'truth':6s} {'rank-one':>8s} {'simulated':>9s}")
    totals = np.zeros(2, dtype=int)
    for name, epsilon, d, shape in itertools.product(args.oracles.split(","), map(float, args.epsilons.split(",")),
                                                     map(int, args.d.split(",")), ("skewed", "flat")):
        mechanism = ldpest.mechanism(name, epsilon=epsilon, categories=list(range(d)))
        reports = mechanism.privatize(np.random.default_rng(0).choice(d, size=args.n, p=truth_of(shape, d)), rng=1)
        counts = []
        for below in (default, 0):
            likelihood.RANK_ONE_BELOW = below
            estimator = ldpest.estimator("frequency-likelihood", max_passes=30)
            counts.append(quiet_estimate(reports, estimator).attrs["mle_passes"])
        likelihood.RANK_ONE_BELOW = default
        totals += counts
        print(f"{name:28s} {epsilon:4g} {d:4d} {shape:6s} {counts[0]:8d} {counts[1]:9d}", flush=True)
    print(f"# total {totals[0]} with the fit, {totals[1]} without")


def model(args) -> None:
    """Passes and seconds to convergence with each count of simulated reports per category behind the
    curvature off the diagonal (``MODEL_REPORTS``; at least ``MODEL_LEAST`` reports whatever the count, and
    here not limited by n: ``MODEL_SHARE = 1``), on one set of reports per cell."""
    from ldpest_multinomial import likelihood

    default, counts = likelihood.MODEL_REPORTS, [int(count) for count in args.model_reports.split(",")]
    share, likelihood.MODEL_SHARE = likelihood.MODEL_SHARE, 1
    print(f"# model: n = {args.n}, one set of reports per cell; passes (seconds) with MODEL_REPORTS = "
          f"{', '.join(map(str, counts))} simulated reports per category, at least {likelihood.MODEL_LEAST}")
    print(f"{'oracle':28s} {'eps':>4s} {'d':>5s} {'truth':6s} " + " ".join(f"{count:>13d}" for count in counts))
    passes, seconds = np.zeros(len(counts), dtype=int), np.zeros(len(counts))
    for name, epsilon, d, shape in itertools.product(args.oracles.split(","), map(float, args.epsilons.split(",")),
                                                     map(int, args.d.split(",")), ("skewed", "flat")):
        mechanism = ldpest.mechanism(name, epsilon=epsilon, categories=list(range(d)))
        reports = mechanism.privatize(np.random.default_rng(0).choice(d, size=args.n, p=truth_of(shape, d)), rng=1)
        cells = []
        for index, count in enumerate(counts):
            likelihood.MODEL_REPORTS = count
            start = time.perf_counter()
            result = quiet_estimate(reports, ldpest.estimator("frequency-likelihood", max_passes=30))
            elapsed = time.perf_counter() - start
            seconds[index] += elapsed
            passes[index] += result.attrs["mle_passes"]
            cells.append(f"{result.attrs['mle_passes']:3d} ({elapsed:6.2f} s)")
        likelihood.MODEL_REPORTS = default
        print(f"{name:28s} {epsilon:4g} {d:5d} {shape:6s} " + " ".join(f"{cell:>13s}" for cell in cells), flush=True)
    likelihood.MODEL_SHARE = share
    print("# total " + ", ".join(f"{count} per category: {total} passes in {second:.1f} s"
                                 for count, total, second in zip(counts, passes, seconds, strict=True)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("part", choices=("accuracy", "time", "passes", "model"))
    parser.add_argument("--oracles", default=",".join(ORACLES))
    parser.add_argument("--epsilons", default="0.5,1,2,4")
    parser.add_argument("--d", default="10,100")
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--model-reports", default="32,8", help="the model part's counts of simulated reports")
    args = parser.parse_args()
    register_example_plugin()
    {"accuracy": accuracy, "time": timing, "passes": passes, "model": model}[args.part](args)


if __name__ == "__main__":
    main()
