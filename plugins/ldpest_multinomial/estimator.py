"""The ``frequency`` estimator (MATH.md section 1)."""

from __future__ import annotations

import functools
import inspect
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
from ldpest.stats.projection import (
    ibu_fixed_point,
    project_frequencies,
    project_positive,
    project_simplex,
    shrink_to_uniform,
)
from ldpest.stats.risk import (
    CovarianceOperator,
    affine_mle_divergence,
    estimate_seed,
    gaussian_sampler,
    plug_in_risks,
    positive_divergence,
    shrink_divergence,
    simplex_divergence,
    stein_risk,
)
from ldpest.util.blas import on_one_blas_thread, one_blas_thread
from ldpest.util.validation import check_choice

INCONSISTENT_P = 1e-6  # chance, over all categories together, that reports of the stated mechanism warn
UNINFORMATIVE_WIDTH = 0.5  # a 95% interval at least this wide says little about a frequency
AUTO_DRAWS = 20  # projection='auto': simulations at each plug-in truth
AUTO_REGRET = 2.0  # ... and how much worse than another candidate Stein's choice may be at one of them
AUTO_MARGIN = 0.1  # ... or how much better than it another must be at both, to overrule it
AUTO_GAUSSIAN_LIMIT = 1024  # categories up to which an oracle without exact simulation is simulated as normal


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


def _mle(mechanism, arrays, n: int):
    """The oracle's maximum-likelihood frequencies and their ``mle_*`` attributes (warning if unconverged)."""
    with one_blas_thread():
        found = mechanism.frequency_mle(arrays, n)
    if found is None:
        raise ParameterError(f"projection='mle': the statistics of {mechanism.name!r} are not sufficient "
                             "for its maximum-likelihood estimate (available for randomized-response and "
                             "hadamard-response); use 'auto', 'simplex' or 'positive'")
    estimate, info = found
    if not info.get("converged", True):
        warnings.warn(f"the maximum-likelihood iteration stopped after {info['iterations']} iterations with "
                      f"the log-likelihood within {info['likelihood_gap']:.3g} of its maximum",
                      EstimateWarning, stacklevel=3)
    return estimate, _mle_attrs(info)


def ibu_offset(mechanism, arrays) -> float | None:
    """``offset / gap`` of an oracle whose estimate is ``(counts / n - offset) / gap`` (its ``count_model``),
    the ``r`` of :func:`ldpest.stats.projection.ibu_fixed_point`; None for other oracles."""
    model = mechanism.count_model(arrays)
    if model is None:
        return None
    _, offset, gap = model
    return offset / gap if gap > 0 and offset > 0 else None


def _ibu(mechanism, arrays, theta) -> np.ndarray:
    """``projection="ibu"``: the fixed point of the iterative Bayesian update on the support counts."""
    offset = ibu_offset(mechanism, arrays)
    if offset is None:
        raise ParameterError(f"projection='ibu': {mechanism.name!r} has no support counts (counts with mean "
                             "n (q + (p - q) theta)); available for randomized-response, unary encodings, "
                             "local-hashing, subset-selection and one-block hadamard-response; use 'auto', "
                             "'simplex', 'shrink' or 'positive'")
    return ibu_fixed_point(theta, offset)


def _mle_attrs(info: dict) -> dict:
    """The oracle's MLE ``info`` as result attributes ``mle_*`` (booleans as 0/1, which files keep)."""
    return {f"mle_{key}": int(value) if isinstance(value, bool | np.bool_) else value for key, value in info.items()}


def _unbiased_variance(mechanism, theta, stderr, n: int) -> np.ndarray:
    """``Var(theta_hat_j)`` estimated without bias where the oracle declares it: ``n Var_j = A_j(theta) -
    theta_j^2`` with ``A_j`` affine (every built-in oracle), so ``E[n Var_j(theta_hat)] = (n - 1) Var_j`` and
    ``frequency_variance(theta_hat) / (n - 1)`` is unbiased; else the squared standard errors.  The plug-in
    at a clipped or projected estimate is biased by a few percent where epsilon is small, which moves the
    risk estimates by more than the differences between the candidates."""
    if n < 2:
        return np.asarray(stderr, dtype=np.float64) ** 2
    try:
        return np.asarray(mechanism.frequency_variance(theta), dtype=np.float64) / (n - 1)
    except NotImplementedError:
        return np.asarray(stderr, dtype=np.float64) ** 2


@on_one_blas_thread
def lowest_risk_estimate(mechanism, arrays, n: int, theta, stderr) -> tuple[str, np.ndarray, dict]:
    """``projection="auto"``: ``(name, estimate, attrs)`` of the candidate with the lowest estimated risk
    (docs/frequency-oracles.md, "The default estimate").

    Candidates: the simplex projection, clip-and-renormalise, James-Stein shrinkage toward uniform
    (``shrink``), the maximum-likelihood frequencies where the oracle gives their divergence (randomized
    response; Hadamard response up to its ``iterative_mle_categories``), and the fixed point of the
    iterative Bayesian update on the support counts where the oracle has them and it is not the MLE (unary
    encodings, subset selection, local hashing, one-block Hadamard response).  Two estimates of each
    candidate's risk:

    * Stein's unbiased risk estimate (:mod:`ldpest.stats.risk`), where the oracle declares its covariance
      (:meth:`FrequencyOracle.frequency_cross_covariance`): unbiased, but noisy where epsilon is small;
    * the parametric bootstrap at three plug-in truths, the simplex, clip-and-renormalise and shrunk estimates
      (``AUTO_DRAWS`` simulations each, by the oracle's ``bootstrap_frequency_statistics`` or exact
      ``simulate_frequency_statistics``, else a normal law with its covariance up to ``AUTO_GAUSSIAN_LIMIT``
      categories): steady, but biased by its plug-in.

    Stein's choice stands unless the bootstrap finds another candidate at least ``AUTO_MARGIN`` less risky
    at every plug-in truth, or finds Stein's choice more than ``AUTO_REGRET`` times worse than the best at
    one of them while another projection (not ``shrink``) is steadier.  The bootstrap's seed is a function
    of the statistics, so the choice is reproducible.  Where the unbiased estimate is already a distribution
    every projection keeps it, and the lower Stein risk decides between it and ``shrink``.  An MLE that
    iterates (``FrequencyOracle.iterative_mle_categories``) is simulated only where Stein's estimate
    prefers it; elsewhere the bootstrap cannot prefer it."""
    declared = mechanism.frequency_cross_covariance(theta, np.zeros_like(theta)) is not None
    factors = mechanism.frequency_cross_covariance_factors(theta) if declared else None
    covariance = CovarianceOperator(_unbiased_variance(mechanism, theta, stderr, n),
                                    lambda vector: mechanism.frequency_cross_covariance(theta, vector) / n,
                                    columns=mechanism.cross_covariance_columns,
                                    factors=None if factors is None else (factors[0], np.asarray(factors[1]) / n))
    iterative = mechanism.iterative_mle_categories
    with_mle = (declared and type(mechanism).frequency_mle_divergence is not FrequencyOracle.frequency_mle_divergence
                and (iterative is None or len(theta) <= iterative))
    offset = ibu_offset(mechanism, arrays)
    total_variance = float(covariance.diagonal.sum())
    shrunk = shrink_to_uniform(theta, total_variance)
    estimates, mle_info = _candidates(mechanism, arrays, n, theta, with_mle, offset, total_variance, shrunk[0])
    offset = offset if "ibu" in estimates else None
    risks = _stein_risks(mechanism, arrays, n, theta, estimates, covariance, offset, total_variance,
                         shrunk[1]) if declared else {}
    if all(_within(estimate, estimates["simplex"], 1e-12) for name, estimate in estimates.items() if name != "shrink"):
        # the unbiased estimate is a distribution: every projection keeps it, and only shrinking it can help
        agree = ", ".join(name for name in estimates if name != "shrink")
        chosen = "shrink" if risks and risks["shrink"] < risks["simplex"] else "simplex"
        why = "the lower Stein risk estimate of simplex and shrink" if risks else "default (no declared covariance)"
        rule = f"auto: {chosen}; {agree} agree (the unbiased estimate is a distribution); {chosen} by {why}"
        return chosen, estimates[chosen], _auto_attrs(chosen, rule, risks, mle_info, shrunk[1])
    simulate_mle = "mle" in estimates and (iterative is None or min(risks, key=risks.get) == "mle")
    draw, how = _bootstrap_draw(mechanism, n, covariance if declared else None, simulate_mle, offset, total_variance)
    found = None
    if draw is not None:
        rng = np.random.default_rng(estimate_seed(theta, n))
        plug_ins = np.stack([estimates["simplex"], estimates["positive"], estimates["shrink"]])
        simulated = draw(plug_ins, rng)
        found = [plug_in_risks(truth, {name: rows[at] for name, rows in simulated.items()})
                 for at, truth in enumerate(plug_ins)]
    chosen, by = _choose(risks, found, list(estimates), how)
    rule = f"auto: {chosen} of {', '.join(estimates)}, by {by}"
    return chosen, estimates[chosen], _auto_attrs(chosen, rule, risks, mle_info, shrunk[1])


def _within(first, second, tolerance: float) -> bool:
    """``np.allclose(first, second, rtol=0, atol=tolerance)`` for finite arrays of one shape, without its
    broadcasting and NaN handling (a tenth of its cost on a few categories)."""
    return bool(np.max(np.abs(first - second), initial=0.0) <= tolerance)


def _auto_attrs(chosen: str, rule: str, risks: dict, mle_info: dict, shrink_weight: float) -> dict:
    """The attributes of an ``auto`` result: the rule, every Stein risk, and what the chosen one reports."""
    attrs = {"projection_rule": rule, **{f"estimated_risk_{name}": risk for name, risk in risks.items()}}
    if chosen == "mle":
        attrs.update(_mle_attrs(mle_info))
    elif chosen == "shrink":
        attrs["shrink_weight"] = shrink_weight
    return attrs


def _stein_risks(mechanism, arrays, n: int, theta, estimates: dict, covariance, offset,
                 total_variance: float, shrink_weight: float) -> dict[str, float]:
    """Stein's unbiased risk estimate of each candidate (drops ``mle`` if the oracle gives no divergence)."""
    divergences = {"simplex": simplex_divergence(estimates["simplex"], covariance),
                   "positive": positive_divergence(theta, covariance),
                   "shrink": shrink_divergence(theta, estimates["shrink"], shrink_weight, total_variance,
                                               covariance)}
    if "ibu" in estimates:  # the same closed form as randomized response's MLE, in x + offset
        divergences["ibu"] = affine_mle_divergence(theta, estimates["ibu"], offset, covariance)
    if "mle" in estimates:
        divergence = mechanism.frequency_mle_divergence(arrays, n, estimates["mle"], covariance)
        if divergence is None:
            del estimates["mle"]
        else:
            divergences["mle"] = divergence
    return {name: stein_risk(theta, estimates[name], covariance.diagonal, divergence)
            for name, divergence in divergences.items()}


def _choose(risks: dict, found: list | None, names: list, how: str | None) -> tuple[str, str]:
    """``(candidate, why)`` from the Stein risks (may be empty) and the bootstrap risks at the plug-in
    truths (None without a simulation); see :func:`lowest_risk_estimate`.  The shrunk plug-in truth lies near
    the uniform distribution, where shrinking is best by construction: the bootstrap may prefer ``shrink`` only
    where it is less risky at every plug-in truth, never as the steadiest."""
    if found is None:
        if risks:
            return min(risks, key=risks.get), "the lowest Stein unbiased risk estimate"
        return "simplex", "default: the oracle declares neither its covariance nor a simulation"
    # a candidate the simulation cannot give (mle from normal draws) is never preferred by it
    ratios = {name: max(at.get(name, np.inf) / max(min(at.values()), 1e-300) for at in found) for name in names}
    steadiest = min((name for name in names if name != "shrink"), key=ratios.get)  # ties: the first, simplex
    if not risks:
        return steadiest, f"the parametric bootstrap ({how}): the smallest worst ratio to the best at its plug-ins"
    chosen = min(risks, key=risks.get)
    better = [name for name in names if all(
        at.get(name, np.inf) <= (1 - AUTO_MARGIN) * at.get(chosen, np.inf) for at in found)]
    if better:
        pick = min(better, key=ratios.get)
        return pick, (f"the parametric bootstrap ({how}): {pick} has at least {AUTO_MARGIN:.0%} less risk than the "
                      f"lowest Stein estimate, {chosen}, at every plug-in truth")
    if ratios[chosen] > AUTO_REGRET * ratios[steadiest]:
        return steadiest, (f"the parametric bootstrap ({how}): the lowest Stein estimate, {chosen}, is "
                           f"{ratios[chosen]:.3g} times the best at one plug-in truth")
    return chosen, "the lowest Stein unbiased risk estimate"


def _candidates(mechanism, arrays, n: int, theta, with_mle: bool, offset: float | None,
                total_variance: float, shrunk) -> tuple[dict, dict]:
    """The candidate estimates from statistics, and the oracle's ``info`` on its MLE (empty without one).
    ``ibu`` is left out where it is the MLE (randomized response: the same water-filling on the same counts)."""
    estimates = _projections(theta, offset, total_variance, shrunk)
    found = mechanism.frequency_mle(arrays, n) if with_mle else None
    if found is None:
        return estimates, {}
    estimates["mle"] = found[0]
    if "ibu" in estimates and _within(estimates["ibu"], found[0], 1e-9):
        del estimates["ibu"]
    return estimates, found[1]


def _projections(theta, offset: float | None, total_variance: float, shrunk=None) -> dict:
    """The candidates that are functions of the unbiased estimate alone (``ibu`` where ``offset`` is given;
    ``shrunk``: the shrunk estimate if already computed)."""
    estimates = {"simplex": project_simplex(theta), "positive": project_positive(theta),
                 "shrink": shrink_to_uniform(theta, total_variance)[0] if shrunk is None else shrunk}
    if offset is not None:
        estimates["ibu"] = ibu_fixed_point(theta, offset)
    return estimates


def _bootstrap_draw(mechanism, n: int, covariance, with_mle: bool, offset: float | None, total_variance: float):
    """``(draw, how)``: ``draw(truths, rng)`` gives each candidate's estimates, shape ``(len(truths),
    AUTO_DRAWS, d)``, from the statistics of n reports simulated ``AUTO_DRAWS`` times at each of the
    ``truths``; ``(None, None)`` where the oracle cannot be simulated (no simulation, and no declared
    covariance or too many categories for a normal one).  The candidates are computed for all the draws at
    once; an oracle whose simulation takes ``draws`` makes each truth's in one call (its
    ``frequency_estimate`` and ``frequency_mle`` then take statistics with a leading axis of draws)."""
    d = len(mechanism.categories)
    simulate = getattr(mechanism, "bootstrap_frequency_statistics", None) or getattr(
        mechanism, "simulate_frequency_statistics", None)
    if simulate is not None:
        def exact(truths, rng):
            if _simulates_draws(type(mechanism), simulate.__name__):
                sets = [simulate(truth, n, rng, draws=AUTO_DRAWS) for truth in truths]
                sets = [{key: np.concatenate([arrays[key] for arrays in sets]) for key in sets[0]}]
            else:
                sets = [simulate(truth, n, rng) for truth in truths for _ in range(AUTO_DRAWS)]
            estimates = _projections(np.vstack([mechanism.frequency_estimate(arrays, n)[0] for arrays in sets]),
                                     offset, total_variance)
            mles = [mechanism.frequency_mle(arrays, n) for arrays in sets] if with_mle else []
            if mles and all(found is not None for found in mles):
                estimates["mle"] = np.vstack([found[0] for found in mles])
            return {name: rows.reshape(len(truths), AUTO_DRAWS, d) for name, rows in estimates.items()}
        return exact, f"{AUTO_DRAWS} simulations of the statistics each"
    if covariance is None or d > AUTO_GAUSSIAN_LIMIT:
        return None, None
    sample = gaussian_sampler(covariance)

    def normal(truths, rng):
        draws = np.vstack([sample(truth, rng, AUTO_DRAWS) for truth in truths])
        estimates = _projections(draws, offset, total_variance)
        return {name: rows.reshape(len(truths), AUTO_DRAWS, d) for name, rows in estimates.items()}
    return normal, f"{AUTO_DRAWS} normal simulations each"


@functools.cache
def _simulates_draws(oracle: type, method: str) -> bool:
    """Whether an oracle's simulation ``method`` takes ``draws`` (many sets of statistics in one call)."""
    return "draws" in inspect.signature(getattr(oracle, method)).parameters


def frequency_parts(mechanism, arrays, n: int, theta, stderr, estimate, projection: str, attrs: dict, *,
                    model) -> EstimateParts:
    """The parts of a frequency result: ``estimate`` (after ``projection``), with the unbiased ``theta``, its
    ``stderr``, the counts of exact intervals (``model``, the oracle's ``count_model(arrays)``) and the
    kurtosis of the normal ones."""
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


class FrequencyEstimator(Estimator):
    """Category frequencies from any frequency-oracle mechanism.

    The mechanism supplies its linear unbiased estimate (``frequency_estimate``), which ``unprojected``
    and ``stderr`` (analytic, of the unprojected estimate) keep in the result.  ``probability`` is, by
    ``projection``:

    * ``"auto"`` (default): per result, the candidate below with the lowest estimated risk
      (:func:`lowest_risk_estimate`); ``attrs["projection"]`` names it and ``projection_rule`` says why;
    * ``"simplex"``: the Euclidean projection onto the probability simplex (Norm-Sub), which never
      increases the l2 error;
    * ``"positive"``: clip at 0 and renormalise (Norm-Mul in Wang et al. 2020, multi-freq-ldpy's
      post-processing; uniform if nothing is positive);
    * ``"ibu"``: the fixed point of the iterative Bayesian update on the support counts (multi-freq-ldpy's
      IBU run to convergence), in closed form (:func:`ldpest.stats.projection.ibu_fixed_point`), for the
      oracles whose statistic is support counts (randomized response, where it is the MLE, unary encodings,
      subset selection, local hashing);
    * ``"mle"``: the maximum-likelihood frequencies on the simplex where the oracle's statistics are
      sufficient for them (:meth:`FrequencyOracle.frequency_mle`: randomized response in closed form,
      Hadamard response by projected Newton over its symbol histogram; the result's ``mle_*`` attributes say how);
    * ``"none"``: the unbiased estimate.
    """

    parameter_help = {"projection": "auto (default: per result, the lowest estimated risk of simplex, positive "
                                    "and ibu or, for randomized-response, mle), simplex (the Euclidean projection "
                                    "onto the probability simplex), positive (clip at 0 and renormalise: Norm-Mul, "
                                    "multi-freq-ldpy's MI), ibu (the fixed point of multi-freq-ldpy's iterative "
                                    "Bayesian update on the support counts, in closed form: oracles with support "
                                    "counts), mle (the maximum-likelihood frequencies, where the statistics "
                                    "suffice: randomized-response, hadamard-response) or none"}
    name = "frequency"
    family = "multinomial"
    accepts = (FrequencyOracle,)
    aggregates_frequency_statistics = True
    projections = ("auto", "simplex", "positive", "shrink", "ibu", "mle", "none")

    def __init__(self, *, projection="auto"):
        self._set_params(projection=check_choice("projection", projection, self.projections))

    def _aggregate(self, mechanism, values):
        return mechanism.frequency_statistics(values)

    def _finalize(self, mechanism, arrays, n):
        theta, stderr = mechanism.frequency_estimate(arrays, n)
        model = mechanism.count_model(arrays)
        warn_about_frequencies(theta, stderr, mechanism.categories, n, mechanism.epsilon, model)
        projection = self._params["projection"]
        attrs = {}
        if projection == "auto":
            projection, estimate, attrs = lowest_risk_estimate(mechanism, arrays, n, theta, stderr)
        elif projection == "mle":
            estimate, attrs = _mle(mechanism, arrays, n)
        elif projection == "ibu":
            estimate = _ibu(mechanism, arrays, theta)
        elif projection == "shrink":
            total_variance = float(_unbiased_variance(mechanism, theta, stderr, n).sum())
            estimate, weight = shrink_to_uniform(theta, total_variance)
            attrs = {"shrink_weight": weight}
        else:
            estimate = project_frequencies(theta, projection)
        return frequency_parts(mechanism, arrays, n, theta, stderr, estimate, projection, attrs, model=model)

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
