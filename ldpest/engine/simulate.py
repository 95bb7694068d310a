"""Studies of estimation error against n and epsilon (``ldpest simulate``).

For each epsilon and n, ``reps`` independent data sets are drawn from a known truth, privatised
and estimated; the error of each estimate is recorded.  The mechanism's family
(:class:`ldpest.Family`, found by :func:`ldpest.family_of`) says how: the truth from what the user
gave, the data, the error metric and its theoretical slope in log n.  When the family offers an
exact aggregate simulation (the multinomial and histogram families) the sufficient statistics
are drawn directly from their exact law in O(d) per repetition, so n = 10^9 takes seconds;
otherwise every record is privatised (n <= MAX_DIRECT_RECORDS).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from ..contract.registry import estimator as make_estimator
from ..contract.registry import family_of
from ..util.errors import DataDroppedWarning, ParameterError
from ..util.version import __version__
from ..util.xarray import xr
from .api import mechanism as make_mechanism

MAX_DIRECT_RECORDS = 2 * 10 ** 7


@dataclass
class Scenario:
    """A study's mechanism and estimator, and the truth as the user gave it (the family reads it)."""

    mechanism_name: str
    params: dict
    estimator_name: str
    estimator_params: dict
    truth: object  # --theta numbers, --truth texts (scipy.stats distributions), or None

    def build(self, epsilon: float):
        mech = make_mechanism(self.mechanism_name, epsilon=epsilon, **self.params)
        est = make_estimator(self.estimator_name or mech.default_estimator, **self.estimator_params)
        return mech, est


def run_study(scenario: Scenario, epsilons, ns, reps: int, rng, progress=None) -> xr.Dataset:
    """Errors of ``reps`` estimates for each epsilon and n (see module doc)."""
    epsilons = [float(e) for e in epsilons]
    ns = [int(n) for n in ns]
    if reps < 2:
        raise ParameterError("--reps must be at least 2 (the study reports standard errors)")
    errors = np.empty((len(epsilons), len(ns), reps))
    exact_everywhere = True
    family = slope = None
    for a, epsilon in enumerate(epsilons):
        mech, est = scenario.build(epsilon)
        family = family_of(mech)
        truth = family.truth(mech, scenario.truth)
        slope = family.theoretical_slope(mech)
        for b, n in enumerate(ns):
            for r in range(reps):
                stats, exact = _statistics(family, est, mech, truth, n, rng)
                errors[a, b, r] = family.error(mech, est.finalize(stats), truth)
                exact_everywhere &= exact
            if progress is not None:
                progress()
    mean = errors.mean(axis=2)
    attrs = {"mechanism": scenario.mechanism_name, "estimator": est.name, "family": family.name,
             "metric": family.metric, "reps": reps,
             "simulation": "exact aggregate" if exact_everywhere else "per-record privatisation",
             "ldpest_version": __version__}
    if slope is not None:
        attrs["theoretical_slope"] = float(slope)
    return xr.Dataset(
        {"error": (("epsilon", "n", "rep"), errors),
         "mean_error": (("epsilon", "n"), mean),
         "stderr_error": (("epsilon", "n"), errors.std(axis=2, ddof=1) / math.sqrt(reps))},
        coords={"epsilon": epsilons, "n": ns, "rep": np.arange(reps)},
        attrs=attrs,
    )


def _statistics(family, est, mech, truth, n, rng):
    """The statistics of one repetition: the exact aggregate draw where the family has one."""
    try:
        return family.exact_statistics(est, mech, truth, n, rng), True
    except NotImplementedError:
        pass
    if n > MAX_DIRECT_RECORDS:
        raise ParameterError(
            f"n = {n} needs an exact aggregate simulation, which {est.name!r} with {mech.name!r} lacks; "
            f"per-record privatisation is limited to n <= {MAX_DIRECT_RECORDS}"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataDroppedWarning)
        return est.aggregate(mech.privatize(family.sample(mech, truth, n, rng), rng=rng)), False
