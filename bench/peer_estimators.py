"""The peers' frequency estimates from given counts; runs inside bench/.peers (see peers.py).

Reads one JSON task per line on stdin and writes one JSON line per task:

    in:  {"n", "p", "q", "counts": [[...] per draw], "unbiased": [[...] per draw], "check_ibu": bool}
    out: {"multi-freq-ldpy clip": [[...] per draw], "multi-freq-ldpy IBU": ..., "pure-ldp additive": ...,
          "pure-ldp simplex": ..., "pure-ldp threshold": ..., "ibu_check": max |difference| or null,
          "ibu_iterations": [...]}

``counts`` are the reports' support counts (how many reports support each category), ``p`` and ``q`` the
probabilities that a report supports its own category and another one (``p = q = null`` when the oracle
has no such counts: then only the post-processings of ``unbiased`` are run). Each estimate is the peer's
own code:
- multi-freq-ldpy: ``Histogram_estimator.MI`` (clip and renormalise) and ``IBU`` with the matrix that its
  aggregators build (``p`` on the diagonal, ``q`` off it) on ``counts / sum(counts)``, with its defaults
  (10,000 iterations, ``max_abs`` change below 1e-12);
- pure-ldp: ``FreqOracleServer.estimate_all`` with normalisation 1 (additive), 2 (simplex projection) and
  3 (threshold cut), applied to the unbiased count estimates ``n * unbiased``.

multi-freq-ldpy's IBU multiplies by the dense d x d matrix; the same iteration with the matrix applied
as ``(p - q) x + q sum(x)`` is used here (it takes seconds at d = 1000), and for tasks with
``check_ibu`` the dense one is run too and the largest difference reported.
"""

import json
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")

from multi_freq_ldpy.estimators.Histogram_estimator import IBU, MI  # noqa: E402
from pure_ldp.core import FreqOracleServer  # noqa: E402

IBU_ITERATIONS, IBU_TOLERANCE = 10_000, 1e-12  # multi-freq-ldpy's defaults


def ibu_structured(p, q, observed):
    """multi-freq-ldpy's IBU (err_func 'max_abs') with A = (p - q) I + q J applied in O(d), and the
    iterations it made (IBU_ITERATIONS: stopped by the limit, not by the tolerance)."""
    estimate = np.full(len(observed), 1.0 / len(observed))
    for iteration in range(1, IBU_ITERATIONS + 1):
        mixed = (p - q) * estimate + q * estimate.sum()
        ratio = observed / mixed
        following = estimate * ((p - q) * ratio + q * ratio.sum())
        if np.abs(estimate - following).max() < IBU_TOLERANCE:
            return following, iteration
        estimate = following
    return following, iteration


class GivenEstimates(FreqOracleServer):
    """A pure-ldp server whose per-item estimates are given (so its normalisations run on them)."""

    def __init__(self, count_estimates, n):
        super().__init__(1.0, len(count_estimates), index_mapper=lambda v: v)
        self.count_estimates = np.asarray(count_estimates, dtype=float)
        self.n = n

    def check_and_update_estimates(self):
        pass

    def estimate(self, data, suppress_warnings=False):
        return self.count_estimates[data]


def pure_ldp(unbiased, n, normalization):
    server = GivenEstimates(np.asarray(unbiased) * n, n)
    return (np.asarray(server.estimate_all(range(len(unbiased)), suppress_warnings=True,
                                           normalization=normalization), dtype=float) / n).tolist()


def run(task):
    n = task["n"]
    out = {"multi-freq-ldpy clip": [], "multi-freq-ldpy IBU": [], "pure-ldp additive": [],
           "pure-ldp simplex": [], "pure-ldp threshold": [], "ibu_check": None, "ibu_iterations": []}
    p, q = task["p"], task["q"]
    for index, unbiased in enumerate(task["unbiased"]):
        unbiased = np.asarray(unbiased, dtype=float)
        if p is None:  # no support counts: clip and renormalise the unbiased estimate, as MI does
            out["multi-freq-ldpy clip"].append(MI(unbiased * n, n, 1.0, 0.0).tolist())
        else:
            counts = np.asarray(task["counts"][index], dtype=float)
            out["multi-freq-ldpy clip"].append(MI(counts, n, p, q).tolist())
            observed = counts / counts.sum()
            ibu, iterations = ibu_structured(p, q, observed)
            out["multi-freq-ldpy IBU"].append(ibu.tolist())
            out["ibu_iterations"].append(iterations)
            if task.get("check_ibu") and index == 0:
                d = len(counts)
                matrix = np.full((d, d), q)
                np.fill_diagonal(matrix, p)
                dense = IBU(d, matrix, observed, IBU_ITERATIONS, IBU_TOLERANCE, "max_abs")
                out["ibu_check"] = float(np.abs(dense - ibu).max())
        for name, normalization in (("additive", 1), ("simplex", 2), ("threshold", 3)):
            out[f"pure-ldp {name}"].append(pure_ldp(unbiased, n, normalization))
    return out


def main():
    for line in sys.stdin:
        print(json.dumps(run(json.loads(line))), flush=True)


if __name__ == "__main__":
    main()
