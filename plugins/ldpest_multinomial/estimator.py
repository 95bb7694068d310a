"""The ``frequency`` estimator (MATH.md section 1)."""

from __future__ import annotations

import json
import warnings

import numpy as np

import ldpest
from ldpest import (
    DataError,
    EstimateParts,
    EstimateWarning,
    Estimator,
    FrequencyOracle,
    InconsistentEstimateWarning,
    ParameterError,
    SufficientStats,
)
from ldpest.stats.projection import project_frequencies
from ldpest.util.validation import check_choice

INCONSISTENT_P = 1e-6  # chance, over all categories together, that reports of the stated mechanism warn
UNINFORMATIVE_WIDTH = 0.5  # a 95% interval at least this wide says little about a frequency


def _least_consistent(theta, stderr, n: int, model) -> tuple[int, float]:
    """``(j, p)``: the category least consistent with every distribution, and the chance of an
    estimate at least that far outside [0, 1] under the closest one.  Counts ``Binomial(n, offset +
    gap theta_j)`` (``model``) take the exact binomial tail at the nearest end of ``[offset,
    offset + gap]``; other estimates the normal tail of their distance outside [0, 1]."""
    from scipy import special  # the ufuncs: scipy.stats' frozen-distribution checks cost 0.1 ms a call

    if model is not None:
        counts, offset, gap = model
        counts = np.asarray(counts, dtype=np.float64)
        low, high = sorted((offset, offset + gap))
        tails = np.minimum(special.bdtrc(counts - 1, n, high), special.bdtr(counts, n, low))  # P(X >= c), P(X <= c)
    else:
        tails = special.ndtr(-np.maximum((theta - 1) / stderr, -theta / stderr))
    worst = int(np.argmin(tails))
    return worst, float(tails[worst])


def warn_about_frequencies(theta, stderr, categories, n: int, epsilon: float, model=None) -> None:
    """An InconsistentEstimateWarning when the unprojected estimate is inconsistent with every distribution
    (a frequency so far outside [0, 1] that reports of this mechanism give one as far, for any
    category, with probability below ``INCONSISTENT_P``: reports made with another epsilon or other
    categories?), or an EstimateWarning when it is uninformative (every 95% interval wider than 0.5)."""
    worst, tail = _least_consistent(theta, stderr, n, model)
    if 2 * len(theta) * tail < INCONSISTENT_P:  # both sides of every category (Bonferroni)
        above, below = (theta[worst] - 1) / stderr[worst], -theta[worst] / stderr[worst]
        side = "above 1" if above >= below else "below 0"
        shifted = all(type(c) is int for c in categories) and list(categories) == list(range(1, len(categories) + 1))
        codes = " (or as 0-based codes: --codes 0-based)" if shifted else ""
        warnings.warn(
            f"the estimate is inconsistent with every distribution: the frequency of {categories[worst]!r} is "
            f"{theta[worst]:.3g}, {max(above, below):.0f} standard errors {side} (probability {tail:.1g} under "
            f"the closest distribution); were the reports made with epsilon = {epsilon:g} and these "
            f"categories{codes}?", InconsistentEstimateWarning, stacklevel=2)
    elif np.all(2 * 1.96 * stderr > UNINFORMATIVE_WIDTH):
        warnings.warn(
            f"the estimate is uninformative: every 95% interval is wider than {UNINFORMATIVE_WIDTH} "
            f"(n = {n} reports at epsilon = {epsilon:g}); `ldpest plan` gives the n a target standard error "
            "needs", EstimateWarning, stacklevel=2)


class FrequencyEstimator(Estimator):
    """Unbiased category frequencies from any frequency-oracle mechanism.

    The mechanism supplies its linear debiasing (``frequency_estimate``);
    ``projection="simplex"`` (default) then returns the Euclidean projection
    onto the probability simplex, which never increases the l2 error;
    ``"positive"`` clips at 0 and renormalises (Norm-Mul in Wang et al. 2020, multi-freq-ldpy's
    post-processing; uniform if nothing is positive); ``"mle"`` the maximum-likelihood frequencies
    on the simplex where the oracle's statistics are sufficient for them
    (:meth:`FrequencyOracle.frequency_mle`: randomized response in closed form, Hadamard response by
    EM over its symbol histogram; the result's ``mle_*`` attributes say how).
    ``unprojected`` and ``stderr`` (analytic, of the unprojected estimate)
    are kept in the result.
    """

    parameter_help = {"projection": "simplex (the Euclidean projection onto the probability simplex), positive "
                                    "(clip at 0 and renormalise: Norm-Mul, as multi-freq-ldpy does), mle (the "
                                    "maximum-likelihood frequencies, where the statistics suffice: "
                                    "randomized-response, hadamard-response) or none"}
    name = "frequency"
    family = "multinomial"
    accepts = (FrequencyOracle,)
    projections = ("simplex", "positive", "mle", "none")

    def __init__(self, *, projection="simplex"):
        self._set_params(projection=check_choice("projection", projection, self.projections))

    def _aggregate(self, mechanism, values):
        return mechanism.frequency_statistics(values)

    def _finalize(self, mechanism, arrays, n):
        theta, stderr = mechanism.frequency_estimate(arrays, n)
        model = mechanism.count_model(arrays)
        warn_about_frequencies(theta, stderr, mechanism.categories, n, mechanism.epsilon, model)
        projection = self._params["projection"]
        attrs = {}
        if projection == "mle":
            found = mechanism.frequency_mle(arrays, n)
            if found is None:
                raise ParameterError(f"projection='mle': the statistics of {mechanism.name!r} are not sufficient "
                                     "for its maximum-likelihood estimate (available for randomized-response and "
                                     "hadamard-response); use 'simplex' or 'positive'")
            estimate, info = found
            attrs = {f"mle_{key}": int(value) if isinstance(value, bool | np.bool_) else value
                     for key, value in info.items()}
            if not info.get("converged", True):
                warnings.warn(f"the maximum-likelihood iteration stopped after {info['iterations']} iterations with "
                              f"the log-likelihood within {info['likelihood_gap']:.3g} of its maximum",
                              EstimateWarning, stacklevel=2)
        else:
            estimate = project_frequencies(theta, projection)
        kurtosis = getattr(mechanism, "excess_kurtosis", None)
        return EstimateParts(
            variable="probability",
            estimate=estimate,
            stderr=stderr,
            dims=("category",),
            coords={"category": mechanism.category_coordinate},
            projection=projection,
            unprojected=theta,
            count=None if model is None else model[0],
            count_map=None if model is None else (model[1], model[2], 1.0),
            excess_kurtosis=None if kurtosis is None else kurtosis(theta, n),
            extra={name: (("category",), values) for name, values in mechanism.interval_counts(arrays).items()},
            attrs=attrs,
        )

    def interval(self, result, level):
        """The oracle's own exact intervals where it has them (:meth:`FrequencyOracle.frequency_interval`),
        else None: Clopper-Pearson on the binomial counts, or the normal interval."""
        if result.variables["stderr"].attrs.get("estimate", "unprojected") != "unprojected":
            return None
        mechanism = ldpest.mechanism_from_spec(json.loads(result.attrs["mechanism_spec"]))
        return mechanism.frequency_interval(result, level)

    def simulate(self, mechanism, theta, n: int, rng) -> SufficientStats:
        """Exact draw of the statistics of ``n`` reports of data with frequencies ``theta``,
        in O(d), for mechanisms that offer ``simulate_frequency_statistics``."""
        self._check_mechanism(mechanism)
        if not hasattr(mechanism, "simulate_frequency_statistics"):
            raise NotImplementedError(f"{mechanism.name!r} has no exact aggregate simulation")
        theta = np.asarray(theta, dtype=np.float64)
        if theta.shape != (len(mechanism.categories),) or np.any(theta < 0) or abs(theta.sum() - 1) > 1e-9:
            raise DataError(f"theta must be {len(mechanism.categories)} non-negative frequencies summing to 1")
        arrays = mechanism.simulate_frequency_statistics(theta / theta.sum(), n, rng)
        return SufficientStats(self.statistics_spec_json, mechanism.spec_json, n, arrays)
