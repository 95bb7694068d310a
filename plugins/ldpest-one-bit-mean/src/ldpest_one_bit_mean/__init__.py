"""The mean of bounded numbers from one private bit per person, a third-party ldpest plugin.

Each device holds a number ``x`` in ``[low, high]`` and sends one bit:

1. unbiased randomised rounding to ``{low, high}``: ``b = 1`` with probability
   ``t = (x - low) / (high - low)`` (:func:`ldpest.privacy.exact.randomized_rounding`, one step);
2. binary randomized response: the bit is kept when a 64-bit word is below ``T``, so
   ``p = T / 2^64`` exactly, with ``T = keep_threshold(epsilon)`` (``p / (1 - p) <= e^epsilon``,
   proven); else flipped.

The channel from the grid ``{low, high}`` to the report ``{0, 1}`` is ``[[p, 1 - p], [1 - p, p]]``
and a number's law is the mixture ``(1 - t, t)`` of its rows (``channel_mixture``), so every report
is epsilon-LDP.  With ``c`` ones among ``n`` reports, ``c ~ Binomial(n, pi)``, ``pi = (1 - p) +
(2p - 1) (mu - low) / (high - low)`` for data of mean ``mu``, and the estimator ``one-bit-mean``
gives the unbiased ``mu_hat = low + (high - low) (c / n - (1 - p)) / (2p - 1)``, its standard error
``(high - low) sqrt(pi (1 - pi) / n) / (2p - 1)`` at the estimate moved into ``[low, high]``, and
its own exact interval: Clopper-Pearson on ``c``, mapped through the same affine map.

Written from docs/plugin-author-guide.md alone, with ldpest's public API only; it is the guide's
numeric example (the other, ``ldpest-oue``, is a frequency oracle).
"""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np

import ldpest
from ldpest.privacy.exact import WORD, keep_threshold, random_words, randomized_rounding, rounding_mixture, select
from ldpest.stats.distributions import distributions, truncated_sample
from ldpest.stats.intervals import clopper_pearson
from ldpest.util.validation import check_epsilon, check_finite


class OneBitMean(ldpest.Mechanism):
    """One randomized-response bit per number in [low, high] (module docstring)."""

    name = "one-bit-mean"
    family = "one-bit-mean"
    default_estimator = "one-bit-mean"
    data_kind = "number"
    report_kind = "number"
    example_params = {"low": 0, "high": 500}
    parameter_help = {"epsilon": "privacy level epsilon > 0 of each report",
                      "low": "smallest possible value of the data", "high": "largest possible value of the data",
                      "units": "units of the data, e.g. 'ms' (the mean and its interval are in them)"}

    def __init__(self, *, epsilon, low, high, units=None):
        low, high = float(low), float(high)
        if not (np.isfinite(low) and np.isfinite(high) and low < high):
            raise ldpest.ParameterError(f"low < high must be finite numbers, got low={low!r}, high={high!r}")
        if units is not None and not isinstance(units, str):
            raise ldpest.ParameterError(f"units must be text, e.g. 'ms', got {units!r}")
        self._set_params(epsilon=check_epsilon(epsilon), low=low, high=high, units=units)
        self._keep = keep_threshold(self.epsilon)  # P(keep) = keep / 2^64: ratio proven <= e^epsilon

    @property
    def p(self) -> float:
        """The implemented probability of keeping the bit."""
        return self._keep / WORD

    def report_alphabet_size(self) -> int:
        """Reports are one bit: Spark counts them where they are stored."""
        return 2

    def encode_data(self, data):
        x = np.asarray(data)
        if x.dtype.kind not in "iuf":
            raise ldpest.DataError(f"data for {self.name!r} must be numbers, got dtype {x.dtype}")
        x = check_finite("data", x.astype(np.float64).ravel())
        outside = (x < self._params["low"]) | (x > self._params["high"])
        if outside.any():
            raise ldpest.DataError(f"data: {int(outside.sum())} value(s) outside [{self._params['low']:g}, "
                                   f"{self._params['high']:g}]", row=np.flatnonzero(outside)[0])
        return x

    def _privatize(self, x, rng):
        bits = randomized_rounding(x, self._params["low"], self._params["high"], 1, rng)
        keep = random_words(rng, x.shape[0]) < np.uint64(self._keep)
        return select(keep, bits, 1 - bits).astype(np.uint8)  # np.where, without a branch per record

    def encode_reports(self, values):
        values = np.asarray(values)
        if values.ndim != 1 or not np.isin(values, (0, 1)).all():
            raise ldpest.DataError(f"reports of {self.name!r} must be one column of 0/1 bits")
        return values.astype(np.uint8)

    def channel(self):
        p = Fraction(self._keep, WORD)  # what the sampler implements, exactly
        matrix = np.array([[p, 1 - p], [1 - p, p]], dtype=object)
        return ldpest.Channel([self._params["low"], self._params["high"]], np.array([0, 1]), matrix)

    def channel_mixture(self, x):
        return rounding_mixture(x, self._params["low"], self._params["high"], 1)


class OneBitMeanEstimator(ldpest.Estimator):
    """The unbiased mean, its standard error and its exact interval (module docstring)."""

    name = "one-bit-mean"
    family = "one-bit-mean"
    accepts = ("one-bit-mean",)

    def __init__(self):
        self._set_params()

    def _aggregate(self, mechanism, values):
        return {"ones": np.array(int(np.count_nonzero(values)), dtype=np.int64)}

    def _finalize(self, mechanism, arrays, n):
        low, high, p = mechanism.params["low"], mechanism.params["high"], mechanism.p
        share = float(arrays["ones"]) / n
        mean = low + (high - low) * (share - (1 - p)) / (2 * p - 1)
        at = (1 - p) + (2 * p - 1) * min(max((mean - low) / (high - low), 0.0), 1.0)
        stderr = (high - low) * np.sqrt(at * (1 - at) / n) / (2 * p - 1)
        return ldpest.EstimateParts(variable="mean", estimate=np.array(mean), stderr=np.array(stderr),
                                    units=mechanism.params["units"], uncertainty_of="mean",
                                    extra={"ones": ((), arrays["ones"])})

    def interval(self, result, level):
        mechanism = ldpest.mechanism_from_spec(json.loads(result.attrs["mechanism_spec"]))
        low, high, p = mechanism.params["low"], mechanism.params["high"], mechanism.p
        below, above = clopper_pearson(result["ones"].values, int(result.attrs["n"]), level)
        to_mean = lambda share: low + (high - low) * (share - (1 - p)) / (2 * p - 1)  # noqa: E731
        return to_mean(below), to_mean(above), "exact (Clopper-Pearson on the count of ones)"

    def simulate(self, mechanism, mean, n, rng):
        """The count of ones is Binomial(n, pi(mean)) exactly, whatever the data's law."""
        low, high, p = mechanism.params["low"], mechanism.params["high"], mechanism.p
        pi = (1 - p) + (2 * p - 1) * (mean - low) / (high - low)
        return ldpest.SufficientStats(self.statistics_spec_json, mechanism.spec_json, n,
                                      {"ones": np.array(rng.binomial(n, pi), dtype=np.int64)})


class OneBitMeanFamily(ldpest.Family):
    """Truth: a distribution on [0, 1] (``--truth 'beta(5,2)'``) scaled to [low, high]; error: the
    squared error of the mean (slope -1)."""

    name = "one-bit-mean"
    metric = "squared error of the mean"

    def truth(self, mechanism, given):
        dist = distributions(given, 1)[0]
        low, high = mechanism.params["low"], mechanism.params["high"]
        mean01 = dist.expect(lb=0, ub=1, conditional=True)
        return dist, low + (high - low) * mean01

    def sample(self, mechanism, truth, n, rng):
        low, high = mechanism.params["low"], mechanism.params["high"]
        return low + (high - low) * truncated_sample(truth[0], n, rng)

    def error(self, mechanism, result, truth):
        return float((result["mean"].values - truth[1]) ** 2)

    def theoretical_slope(self, mechanism):
        return -1.0

    def exact_statistics(self, estimator, mechanism, truth, n, rng):
        return estimator.simulate(mechanism, truth[1], n, rng)

    def expected(self, estimator, mechanism, data):
        return "mean", np.asarray(mechanism.encode_data(data)).mean()


@ldpest.hookimpl
def register_mechanisms(register):
    register(OneBitMean)


@ldpest.hookimpl
def register_estimators(register):
    register(OneBitMeanEstimator)


@ldpest.hookimpl
def register_families(register):
    register(OneBitMeanFamily)


__all__ = ["OneBitMean", "OneBitMeanEstimator", "OneBitMeanFamily"]
