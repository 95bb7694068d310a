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
  (``n - 1`` in the denominator, unbiased), never below the smallest variance any input has
  (every law's report variance is at least it) nor below the rounding's worst case ``(step / 2)^2``
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
from scipy import stats as scipy_stats

import ldpest
from ldpest import EstimateParts, Estimator
from ldpest.stats.intervals import clopper_pearson
from ldpest.stats.sufficient import count_indices
from ldpest.util.validation import check_choice

from .mechanisms import NumericMechanism

PROJECTIONS = ("clip", "none")


class MeanEstimator(Estimator):
    """The unbiased mean of bounded numbers, its standard error and interval (module docstring)."""

    name = "mean"
    family = "numeric"
    accepts = (NumericMechanism,)
    parameter_help = {"projection": "'clip' (the mean moved into [low, high]) or 'none' (the unbiased mean)"}

    def __init__(self, *, projection="clip"):
        self._set_params(projection=check_choice("projection", projection, PROJECTIONS))

    def _aggregate(self, mechanism, values):
        if len(mechanism.code_values) == 2:  # duchi: the count of +C codes is all there is
            plus = np.count_nonzero(values)
            return {"counts": np.array([len(values) - plus, plus], dtype=np.int64)}
        return {"counts": count_indices(values, len(mechanism.code_values))}

    def _finalize(self, mechanism, arrays, n):
        counts = np.asarray(arrays["counts"], dtype=np.float64)
        values = mechanism.code_values
        mean_t = float(counts @ values) / n
        variance, method = self.report_variance(mechanism, counts, mean_t, n)
        unprojected = float(mechanism.to_data_units(mean_t))
        mean = unprojected if self._params["projection"] == "none" else min(max(unprojected, mechanism.low),
                                                                              mechanism.high)
        stderr = np.sqrt(variance / n) * mechanism.half_width
        outside = mechanism.params["outside"]
        return EstimateParts(
            variable="mean", estimate=np.array(mean), stderr=np.array(stderr),
            unprojected=np.array(unprojected), projection=self._params["projection"],
            units=mechanism.params["units"], uncertainty_of="unprojected", stderr_method=method,
            extra={"counts": (("code",), np.asarray(arrays["counts"], dtype=np.int64))},
            attrs={"low": mechanism.low, "high": mechanism.high,
                   "data_outside_bounds": "clipped to [low, high] on the device" if outside == "clip"
                   else "refused on the device (the data lay in [low, high])"})

    @staticmethod
    def report_variance(mechanism, counts, mean_t, n) -> tuple[float, str]:
        """The estimated variance of one report's value (units of ``t``) and how it was estimated."""
        if mechanism.sign_code is not None:
            return float(mechanism.sign_variance(np.clip(mean_t, -1.0, 1.0))), "analytic at the estimate"
        if n == 1:
            return mechanism.worst_case_variance(), "worst case over inputs (n = 1)"
        second = float(counts @ mechanism.code_values ** 2) / n
        sample = (second - mean_t ** 2) * n / (n - 1)
        floor = max(mechanism.least_variance(), mechanism.rounding_variance())
        return max(sample, floor), "sample variance of the reports"

    def interval(self, result, level):
        mechanism = ldpest.mechanism_from_spec(json.loads(result.attrs["mechanism_spec"]))
        n = int(result.attrs["n"])
        if mechanism.sign_code is not None:
            plus = result["counts"].values[mechanism.sign_code]
            below, above = clopper_pearson(np.array(plus), n, level)
            p = float(mechanism.keep)
            ends = [mechanism.to_data_units((share - (1 - p)) / (2 * p - 1) * 2 - 1) for share in (below, above)]
            method = "exact (Clopper-Pearson on the count of +C reports)"
        else:
            centre, stderr = float(result["unprojected"]), float(result["stderr"])
            critical = scipy_stats.t.ppf(0.5 + level / 2, df=max(n - 1, 1))
            ends = [centre - critical * stderr, centre + critical * stderr]
            method = "Student t"
        lower, upper = (np.asarray(end, dtype=np.float64) for end in ends)
        return lower, upper, method
