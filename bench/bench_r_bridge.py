"""The R bridge's overhead (issue 13): ldp_privatize and ldp_estimate on 10^6 labels from R
against the same Python calls, in one run.

    .venv/bin/python bench/bench_r_bridge.py [--n 1000000] [--repeat 3]

R runs as users start it (a bare Rscript --vanilla with R_LIBS=.rlib and LDPEST_PYTHON);
each figure is the best of --repeat calls after a warm-up call.  Target: R at most 0.3 s
slower than Python for 10^6 values, for both calls.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

R_CODE = r"""
library(ldpest)
n <- as.integer(Sys.getenv("BENCH_N")); repeats <- as.integer(Sys.getenv("BENCH_REPEAT"))
start <- Sys.time(); invisible(ldp_plugins()); first <- as.numeric(Sys.time() - start, units = "secs")
best <- function(f) min(sapply(seq_len(repeats), function(i) system.time(f())[["elapsed"]]))
modes <- c("car", "bus", "bike", "walk")
x <- sample(modes, n, replace = TRUE, prob = c(0.4, 0.3, 0.2, 0.1))
f <- factor(x, levels = modes)
r <- ldp_privatize(f, "randomized-response", epsilon = 1, seed = 1)
invisible(ldp_estimate(r))
out <- list(first_call = first,
            privatize_character = best(function() ldp_privatize(x, "randomized-response", epsilon = 1,
                                                                categories = modes, seed = 1)),
            privatize_factor = best(function() ldp_privatize(f, "randomized-response", epsilon = 1, seed = 1)),
            estimate_reports = best(function() ldp_estimate(r)),
            estimate_collected = best(function() ldp_estimate(x, mechanism = "randomized-response", epsilon = 1,
                                                              categories = modes)))
cat(jsonlite::toJSON(out, auto_unbox = TRUE), "\n")
"""


def python_times(n: int, repeats: int) -> dict:
    import ldpest

    modes = ["car", "bus", "bike", "walk"]
    x = np.random.default_rng(0).choice(np.array(modes, dtype=object), n, p=[0.4, 0.3, 0.2, 0.1])
    mech = ldpest.mechanism("randomized-response", epsilon=1.0, categories=modes)
    reports = mech.privatize(x, rng=1)
    labels = reports.labels()
    ldpest.estimate(reports)

    sys.path.insert(0, str(ROOT / "bench"))
    from bench_frequency import best_time

    return {"privatize": best_time(lambda: mech.privatize(x, rng=1), repeats),
            "estimate_reports": best_time(lambda: ldpest.estimate(reports), repeats),
            "estimate_collected": best_time(lambda: ldpest.estimate(ldpest.Reports.from_array(labels, mech)), repeats)}


def r_times(n: int, repeats: int) -> dict:
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8",
           "R_LIBS": str(ROOT / ".rlib"), "LDPEST_PYTHON": sys.executable, "BENCH_N": str(n),
           "BENCH_REPEAT": str(repeats)}
    done = subprocess.run(["Rscript", "--vanilla", "-e", R_CODE], env=env, capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10 ** 6)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    py, r = python_times(args.n, args.repeat), r_times(args.n, args.repeat)
    rows = [("privatize (character vector)", r["privatize_character"], py["privatize"]),
            ("privatize (factor)", r["privatize_factor"], py["privatize"]),
            ("estimate (ldp_reports)", r["estimate_reports"], py["estimate_reports"]),
            ("estimate (collected labels)", r["estimate_collected"], py["estimate_collected"])]
    print(f"n = {args.n}; first R call (starts Python): {r['first_call']:.2f} s")
    print(f"{'call':<32}{'R s':>8}{'Python s':>10}{'overhead s':>12}{'target':>8}")
    for name, r_s, py_s in rows:
        print(f"{name:<32}{r_s:>8.3f}{py_s:>10.3f}{r_s - py_s:>12.3f}{'<= 0.3':>8}")


if __name__ == "__main__":
    main()
