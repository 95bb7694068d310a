"""The ``mean`` estimator of the numeric family (docs/numeric.md).

Statistics: the count of each code (additive, exact integers; they stream and merge on Dask).
With ``c_k`` reports of code ``k`` and ``v_k`` its unbiased value (units of ``t``),

* ``mean_t = sum_k c_k v_k / n`` is unbiased for the data's mean of ``t``, and the mean in the
  data's units is ``low + (mean_t + 1) (high - low) / 2`` (``unprojected``);
* ``projection="clip"`` (the default) reports that mean moved into ``[low, high]``, which never
  moves it away from the truth; ``"none"`` reports the unbiased value itself;
* ``stderr`` (of ``unprojected``): for ``duchi`` (and ``hybrid`` at epsilon <= epsilon*, which is
  Duchi), whose values are ``+-C``, ``Var(v) = C^2 - mu^2``
  exactly, taken at the estimate in ``[-1, 1]``; otherwise the sample variance of the values
  (``n - 1`` in the denominator, unbiased), never below the least variance a data law with the
  estimated mean can give its reports (``least_variance_at``; a floor that ignored the mean, the
  least over all inputs, let intervals cover 80% at epsilon 8, n = 100, data on a bound) nor
  below the rounding's worst case ``(step / 2)^2``
  (at large epsilon n equal reports would otherwise give an interval of width 0 that misses a
  value between two grid points), and at ``n = 1`` the worst case over inputs.  It describes the
  mean of the population the users were drawn from; for the mean of these users' own values it
  is an upper bound (it includes the spread of the data);
* intervals: for ``duchi`` exact Clopper-Pearson on the count of ``+C`` codes (a binomial
  count), otherwise Student-t with ``n - 1`` degrees of freedom.  Like every ldpest interval they
  are not clipped to ``[low, high]`` (clipping would only raise the coverage of a truth on a
  bound, to about 97.5%).
"""

from __future__ import annotations

import json

import numpy as np

import ldpest
from ldpest import DataError, EstimateParts, Estimator
from ldpest.stats.intervals import clopper_pearson
from ldpest.stats.sufficient import count_indices
from ldpest.util.validation import check_choice

from .mechanisms import NumericMechanism
from .multi import Multidimensional

PROJECTIONS = ("clip", "none")


class MeanEstimator(Estimator):
    """The unbiased mean of bounded numbers, its standard error and interval (module docstring)."""

    name = "mean"
    family = "numeric"
    accepts = (NumericMechanism, Multidimensional)
    parameter_help = {"projection": "'clip' (the mean moved into [low, high]) or 'none' (the unbiased mean)"}

    def __init__(self, *, projection="clip"):
        self._set_params(projection=check_choice("projection", projection, PROJECTIONS))

    def _aggregate(self, mechanism, values):
        if isinstance(mechanism, Multidimensional):
            return {"counts": mechanism.code_counts(values)}
        return {"counts": code_counts(mechanism, values)}

    def _finalize(self, mechanism, arrays, n):
        if isinstance(mechanism, Multidimensional):
            return self._finalize_attributes(mechanism, np.asarray(arrays["counts"], dtype=np.float64), n)
        counts, n = first_part(mechanism, arrays["counts"])
        values = mechanism.code_values
        mean_t = float(counts @ values) / n
        variance, method = self.report_variance(mechanism, counts, mean_t, n)
        unprojected = float(mechanism.to_data_units(mean_t))
        mean = unprojected if self._params["projection"] == "none" else min(max(unprojected, mechanism.low),
                                                                              mechanism.high)
        stderr = np.sqrt(variance / n) * mechanism.half_width
        return EstimateParts(
            variable="mean", estimate=np.array(mean), stderr=np.array(stderr),
            long_name=None if mechanism.variable is None else f"estimated mean of {mechanism.variable}",
            unprojected=np.array(unprojected), projection=self._params["projection"],
            units=mechanism.units, uncertainty_of="unprojected", stderr_method=method,
            extra={"counts": (("code",), np.asarray(arrays["counts"], dtype=np.int64))},
            attrs={"low": mechanism.low, "high": mechanism.high, "reports_of_x": n,
                   "data_outside_bounds": mechanism.outside_note()})

    def _finalize_attributes(self, mechanism, counts, n):
        """Each attribute's mean from ``Y_j = (d / k) v 1{j picked}`` (ldpest_numeric.multi); the
        attributes share one lattice, so its values and variance floor serve them all."""
        scale = mechanism.d / mechanism.k
        unit = mechanism.unit_attribute
        values = unit.code_values
        rows = counts[:, :len(values)]
        mean_t = scale * (rows @ values) / n
        if n == 1:
            variance = np.full(mechanism.d, scale * (unit.worst_case_variance() + 1.0))
        else:
            second = scale ** 2 * (rows @ values ** 2) / n
            # E[Y_j^2] = (d / k) E[m(X_j)] >= (d / k) (least_variance_at(mu) + mu^2): the floor at the estimate
            centre = np.clip(mean_t, -1.0, 1.0)
            least = np.maximum(unit.least_variance_at(centre), unit.rounding_variance())
            floor = scale * (least + centre ** 2) - centre ** 2
            variance = np.maximum((second - mean_t ** 2) * n / (n - 1), floor)
        low = np.array(mechanism.params["low"])
        high = np.array(mechanism.params["high"])
        half_widths = mechanism.half_widths
        unprojected = low + (mean_t + 1) * half_widths
        stderr = np.sqrt(variance / n) * half_widths
        estimate = unprojected if self._params["projection"] == "none" else np.clip(unprojected, low, high)
        units = mechanism.params["units"]
        same = units[0] if units is not None and len(set(units)) == 1 else None
        return EstimateParts(
            variable="mean", estimate=estimate, stderr=np.array(stderr), dims=("attribute",),
            coords={"attribute": np.array(mechanism.names)}, unprojected=unprojected, units=same,
            projection=self._params["projection"], uncertainty_of="unprojected",
            stderr_method="sample variance of (d / k) v over the reports, floored",
            attrs={"attribute_units": json.dumps(units), "attributes_per_report": mechanism.k,
                   "base": mechanism.params["base"], "data_outside_bounds": mechanism.attributes[0].outside_note()})

    @staticmethod
    def report_variance(mechanism, counts, mean_t, n) -> tuple[float, str]:
        """The estimated variance of one report's value (units of ``t``) and how it was estimated."""
        if mechanism.sign_code is not None:
            return float(mechanism.sign_variance(np.clip(mean_t, -1.0, 1.0))), "analytic at the estimate"
        if n == 1:
            return mechanism.worst_case_variance(), "worst case over inputs (n = 1)"
        second = float(counts @ mechanism.code_values ** 2) / n
        sample = (second - mean_t ** 2) * n / (n - 1)
        floor = max(float(mechanism.least_variance_at(mean_t)), mechanism.rounding_variance())
        return max(sample, floor), "sample variance of the reports"

    def interval(self, result, level):
        mechanism = ldpest.mechanism_from_spec(json.loads(result.attrs["mechanism_spec"]))
        n = int(result.attrs.get("reports_of_x", result.attrs["n"]))
        if isinstance(mechanism, NumericMechanism) and mechanism.sign_code is not None:
            plus = result["counts"].values[mechanism.sign_code]
            below, above = clopper_pearson(np.array(plus), n, level)
            p = float(mechanism.keep)
            ends = [mechanism.to_data_units((share - (1 - p)) / (2 * p - 1) * 2 - 1) for share in (below, above)]
            lower, upper = (np.asarray(end, dtype=np.float64) for end in ends)
            return lower, upper, "exact (Clopper-Pearson on the count of +C reports)"
        centre, stderr = result["unprojected"].values, result["stderr"].values
        from scipy import stats as scipy_stats  # lazily: 0.5 s, and every registry loads this module

        critical = scipy_stats.t.ppf(0.5 + level / 2, df=max(n - 1, 1))
        return centre - critical * stderr, centre + critical * stderr, "Student t"


def code_counts(mechanism, values) -> np.ndarray:
    """The count of each of the mechanism's codes among stored reports (the numeric estimators'
    additive statistic)."""
    if mechanism.code_count == 2:  # duchi: the count of +C codes is all there is
        plus = np.count_nonzero(values)
        return np.array([len(values) - plus, plus], dtype=np.int64)
    return count_indices(values, mechanism.code_count)


def first_part(mechanism, counts) -> tuple[np.ndarray, int]:
    """The counts of the reports of x (all of them without ``square_share``) and their number."""
    counts = np.asarray(counts, dtype=np.float64)[:len(mechanism.code_values)]
    used = int(counts.sum())
    if used == 0:
        raise DataError("no report of x among the reports (every device sent x^2): the mean needs reports of x")
    return counts, used


class VarianceEstimator(Estimator):
    """The variance of bounded numbers from devices split between x and x^2 (``square_share``).

    With ``m1``, ``m2`` the unbiased means of the reports of x and of x^2 and ``v1`` the estimated
    variance of ``m1`` (the mean estimator's, squared), ``variance = m2 - m1^2 + v1`` is unbiased
    for ``E[x^2] - E[x]^2`` (``E[m1^2] = mu^2 + Var(m1)``) up to the bias of ``v1`` itself, which
    is O(1/n^2) (its variance floor, and Duchi's analytic variance at the estimate).  The two parts are independent, so
    ``Var = Var(m2) + 4 mu^2 Var(m1) + 2 Var(m1)^2`` (delta method, exact for a normal ``m1``);
    the stderr plugs in the estimates and the interval is normal.  ``projection="clip"`` moves the
    estimate into ``[0, ((high - low) / 2)^2]``, the variances a number in ``[low, high]`` can have.

    Why devices and not the budget are split: the variance of one report grows like
    ``1 / epsilon^2`` at small epsilon and faster at large epsilon, so two reports at epsilon / 2
    cost more than twice one report at epsilon; halving the devices only doubles it.
    """

    name = "variance"
    family = "numeric"
    accepts = (NumericMechanism,)
    parameter_help = {"projection": "'clip' (into [0, ((high - low) / 2)^2]) or 'none' (the unbiased value)"}

    def __init__(self, *, projection="clip"):
        self._set_params(projection=check_choice("projection", projection, PROJECTIONS))

    def accepts_mechanism(self, mechanism):
        return super().accepts_mechanism(mechanism) and mechanism.squares is not None

    def check_accepts(self, mechanism):
        if isinstance(mechanism, NumericMechanism) and mechanism.squares is None:
            raise ldpest.IncompatibleError(f"the variance needs reports of x and of x^2: privatise with "
                                           f"{mechanism.name!r} and square_share > 0 (e.g. 0.5)")
        super().check_accepts(mechanism)

    def _aggregate(self, mechanism, values):
        return {"counts": code_counts(mechanism, values)}

    def _finalize(self, mechanism, arrays, n):
        counts = np.asarray(arrays["counts"], dtype=np.float64)
        size = len(mechanism.code_values)
        moments = []
        for part, part_counts in ((mechanism, counts[:size]), (mechanism.squares, counts[size:])):
            used = int(part_counts.sum())
            if used < 2:
                raise DataError(f"the variance needs at least 2 reports of x and 2 of x^2, got "
                                f"{int(counts[:size].sum())} and {int(counts[size:].sum())}")
            mean_t = float(part_counts @ part.code_values) / used
            variance_t, _ = MeanEstimator.report_variance(part, part_counts, mean_t, used)
            moments.append((float(part.to_data_units(mean_t)), variance_t * part.half_width ** 2 / used, used))
        (m1, v1, n1), (m2, v2, n2) = moments
        unprojected = m2 - m1 ** 2 + v1
        stderr = np.sqrt(v2 + 4 * m1 ** 2 * v1 + 2 * v1 ** 2)
        top = mechanism.half_width ** 2
        estimate = unprojected if self._params["projection"] == "none" else min(max(unprojected, 0.0), top)
        units = mechanism.params["units"]
        return EstimateParts(
            variable="variance", estimate=np.array(estimate), stderr=np.array(stderr),
            long_name=None if mechanism.variable is None else f"estimated variance of {mechanism.variable}",
            unprojected=np.array(unprojected), projection=self._params["projection"],
            units=None if units is None else f"{units}^2", uncertainty_of="unprojected",
            stderr_method="delta method with sample variances of the reports",
            extra={"counts": (("code",), np.asarray(arrays["counts"], dtype=np.int64))},
            attrs={"low": mechanism.low, "high": mechanism.high, "reports_of_x": n1, "reports_of_x_squared": n2,
                   "split": f"devices split by a coin: {mechanism.params['square_share']:g} sent x^2, the rest x"})
