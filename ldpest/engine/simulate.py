"""Studies of estimation error against n and epsilon (``ldpest simulate``).

For each epsilon and n, ``reps`` independent data sets are drawn from a known
truth, privatised and estimated; the error of each estimate is recorded.  When
the estimator offers an exact aggregate simulation (``Estimator.simulate``:
the multinomial and histogram families) the sufficient statistics are drawn
directly from their exact law in O(d) per repetition, so n = 10^9 takes
seconds; otherwise every record is privatised.

Errors (with the slope they follow in log n when the sizes are fixed, since
the estimators are unbiased and variance-dominated):

* frequency oracles: squared l2 error of ``probability`` (slope -1);
* histograms: L1 error of the cell masses ``mass`` (slope -1/2);
* series: integrated squared error, exact by Parseval (slope -1 until the
  truncation bias dominates).
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import integrate
from scipy import stats as scipy_stats

from ..contract.base import FrequencyOracle
from ..contract.registry import estimator as make_estimator
from ..util.errors import DataDroppedWarning, ParameterError
from ..util.version import __version__
from ..util.xarray import xr
from .api import mechanism as make_mechanism

MAX_DIRECT_RECORDS = 2 * 10 ** 7


def parse_distribution(text: str):
    """``"beta(2,2)"`` -> ``scipy.stats.beta(2, 2)`` (only scipy.stats names, numeric arguments)."""
    match = re.fullmatch(r"\s*([a-z_][a-z0-9_]*)\s*\(([^()]*)\)\s*", text or "")
    if not match or not isinstance(getattr(scipy_stats, match.group(1), None), scipy_stats.rv_continuous):
        raise ParameterError(f"truth must look like a scipy.stats distribution, e.g. 'beta(2,2)'; got {text!r}")
    try:
        args = [float(a) for a in match.group(2).split(",") if a.strip()]
        return getattr(scipy_stats, match.group(1))(*args)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"truth {text!r}: {exc}") from None


@dataclass
class Scenario:
    """A truth, and how to measure an estimate's error against it."""

    mechanism_name: str
    params: dict
    estimator_name: str
    estimator_params: dict
    truth: object  # theta (frequencies) or a list of scipy distributions (one per coordinate)

    def build(self, epsilon: float):
        mech = make_mechanism(self.mechanism_name, epsilon=epsilon, **self.params)
        est = make_estimator(self.estimator_name or mech.default_estimator, **self.estimator_params)
        return mech, est

    def kind(self, mech) -> str:
        if isinstance(mech, FrequencyOracle):
            return "frequency"
        if hasattr(mech, "partition"):
            return "histogram"
        if hasattr(mech, "basis"):
            return "series"
        raise ParameterError(f"simulate does not know how to score {mech.name!r} estimates")


def _frequency_truth(mech, truth):
    d = len(mech.categories)
    if truth is not None and any(isinstance(t, str) for t in np.atleast_1d(np.asarray(truth, dtype=object))):
        raise ParameterError(f"--truth describes a density; {mech.name!r} estimates frequencies: give --theta "
                             f"({d} frequencies, e.g. --theta {','.join(['%.3g' % (1 / d)] * d)})")
    theta = np.full(d, 1.0 / d) if truth is None else np.asarray(truth, dtype=np.float64)
    if theta.shape != (d,) or np.any(theta < 0) or not math.isclose(theta.sum(), 1.0, abs_tol=1e-9):
        raise ParameterError(f"--theta must give {d} non-negative frequencies summing to 1")
    return theta / theta.sum()


def _marginals(mech, truth):
    if truth is None:
        raise ParameterError("--truth is needed for densities, e.g. --truth 'beta(2,2)'")
    dists = [parse_distribution(t) for t in truth] if isinstance(truth, (list, tuple)) else [parse_distribution(truth)]
    d = getattr(mech, "d", 1)
    if len(dists) == 1 and d > 1:
        dists = dists * d
    if len(dists) != d:
        raise ParameterError(f"--truth gives {len(dists)} distribution(s) for {d} dimension(s)")
    return dists


def _cell_masses(mech, dists):
    lower, upper = mech.partition.cell_corners()
    masses = np.ones(lower.shape[0])
    for i, dist in enumerate(dists):
        masses *= dist.cdf(upper[:, i]) - dist.cdf(lower[:, i])
    return masses


def _sample(dists, n, rng):
    return np.column_stack([dist.rvs(size=n, random_state=rng) for dist in dists])


def _series_truth(mech, dists):
    dist = dists[0]
    mass = dist.cdf(1) - dist.cdf(0)
    pdf = lambda t: dist.pdf(t) / mass  # noqa: E731  (truncated to [0, 1])
    basis = mech.basis
    theta = np.array([integrate.quad(lambda t, j=j: pdf(t) * basis.evaluate([t], mech.k)[0, j], 0, 1, limit=400)[0]
                      for j in range(mech.k)])
    integral_f2 = integrate.quad(lambda t: pdf(t) ** 2, 0, 1, limit=400)[0]
    return theta, max(0.0, integral_f2 - float(np.sum(theta ** 2)))


def _truncated_sample(dist, n, rng):
    out = np.empty(0)
    while out.size < n:
        draw = dist.rvs(size=2 * (n - out.size) + 16, random_state=rng)
        out = np.concatenate([out, draw[(draw >= 0) & (draw <= 1)]])
    return out[:n]


def run_study(scenario: Scenario, epsilons, ns, reps: int, rng, progress=None) -> xr.Dataset:
    """Errors of ``reps`` estimates for each epsilon and n (see module doc)."""
    epsilons = [float(e) for e in epsilons]
    ns = [int(n) for n in ns]
    if reps < 2:
        raise ParameterError("--reps must be at least 2 (the study reports standard errors)")
    errors = np.empty((len(epsilons), len(ns), reps))
    exact_everywhere = True
    kind = None
    for a, epsilon in enumerate(epsilons):
        mech, est = scenario.build(epsilon)
        kind = scenario.kind(mech)
        for b, n in enumerate(ns):
            for r in range(reps):
                errors[a, b, r], exact = _one_error(kind, mech, est, scenario.truth, n, rng)
                exact_everywhere &= exact
            if progress is not None:
                progress()
    slope = {"frequency": -1.0, "histogram": -0.5, "series": -1.0}[kind]
    metric = {"frequency": "squared l2 error of probability", "histogram": "L1 error of the cell masses",
              "series": "integrated squared error"}[kind]
    mean = errors.mean(axis=2)
    return xr.Dataset(
        {"error": (("epsilon", "n", "rep"), errors),
         "mean_error": (("epsilon", "n"), mean),
         "stderr_error": (("epsilon", "n"), errors.std(axis=2, ddof=1) / math.sqrt(reps))},
        coords={"epsilon": epsilons, "n": ns, "rep": np.arange(reps)},
        attrs={"mechanism": scenario.mechanism_name, "estimator": est.name, "metric": metric,
               "theoretical_slope": slope, "reps": reps,
               "simulation": "exact aggregate" if exact_everywhere else "per-record privatisation",
               "ldpest_version": __version__},
    )


def _one_error(kind, mech, est, truth, n, rng):
    try:
        if kind == "frequency":
            theta = _frequency_truth(mech, truth)
            try:
                stats, exact = est.simulate(mech, theta, n, rng), True
            except NotImplementedError:
                stats, exact = _direct(est, mech, lambda size: rng.choice(np.asarray(mech.categories, dtype=object),
                                                                          size=size, p=theta), n, rng), False
            result = est.finalize(stats)
            return float(np.sum((result["probability"].values - theta) ** 2)), exact
        if kind == "histogram":
            dists = _marginals(mech, truth)
            masses = _cell_masses(mech, dists)
            try:
                stats, exact = est.simulate(mech, masses, n, rng), True
            except NotImplementedError:
                stats, exact = _direct(est, mech, lambda size: _sample(dists, size, rng), n, rng), False
            result = est.finalize(stats)
            grid_masses = mech.partition.to_grid(masses)
            return float(np.abs(result["mass"].values - grid_masses).sum()), exact
        dists = _marginals(mech, truth)
        theta, tail = _series_truth(mech, dists)
        stats = _direct(est, mech, lambda size: _truncated_sample(dists[0], size, rng), n, rng)
        result = est.finalize(stats)
        return float(np.sum((result["coefficient"].values - theta) ** 2) + tail), False
    except NotImplementedError as exc:
        raise ParameterError(str(exc)) from None


def _direct(est, mech, draw, n, rng):
    if n > MAX_DIRECT_RECORDS:
        raise ParameterError(
            f"n = {n} needs an exact aggregate simulation, which {est.name!r} with {mech.name!r} lacks; "
            f"per-record privatisation is limited to n <= {MAX_DIRECT_RECORDS}"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataDroppedWarning)
        return est.aggregate(mech.privatize(draw(n), rng=rng))
