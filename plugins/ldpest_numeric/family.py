"""The numeric family's studies: a distribution on [0, 1] (``--truth 'beta(5,2)'``) scaled to
``[low, high]`` as the truth.  Scored by the squared error of the statistic: the mean (slope -1 in
log n: the estimate is unbiased with variance ``Var(value) / n``), the variance, or for the tree
mechanisms the CDF (averaged over its points), the range probabilities (summed) or the quantiles
(summed, in units of ``high - low``)."""

from __future__ import annotations

import numpy as np

import ldpest
from ldpest.stats.distributions import distributions, truncated_sample


class Numeric(ldpest.Family):
    """Truth: one distribution on [0, 1] scaled to the mechanism's bounds (module docstring)."""

    name = "numeric"
    metric = "squared error of the statistic"

    def truth(self, mechanism, given):
        if hasattr(mechanism, "attributes"):  # multidimensional: one law per attribute (one serves all)
            laws = distributions(given, mechanism.d)
            return laws, np.array([a.low + (a.high - a.low) * law.expect(lb=0, ub=1, conditional=True)
                                   for a, law in zip(mechanism.attributes, laws, strict=True)])
        dist = distributions(given, 1)[0]
        mean01 = dist.expect(lb=0, ub=1, conditional=True)
        return dist, mechanism.low + (mechanism.high - mechanism.low) * mean01

    def sample(self, mechanism, truth, n, rng):
        if hasattr(mechanism, "attributes"):
            return np.column_stack([a.low + (a.high - a.low) * truncated_sample(law, n, rng)
                                    for a, law in zip(mechanism.attributes, truth[0], strict=True)])
        return mechanism.low + (mechanism.high - mechanism.low) * truncated_sample(truth[0], n, rng)

    def _cdf01(self, dist, u):
        """The truth's CDF on [0, 1] (conditioned on [0, 1])."""
        low, high = dist.cdf(0.0), dist.cdf(1.0)
        return (dist.cdf(np.clip(u, 0.0, 1.0)) - low) / (high - low)

    def _to01(self, mechanism, x):
        return (np.asarray(x, dtype=np.float64) - mechanism.low) / (mechanism.high - mechanism.low)

    def leaf_masses(self, mechanism, truth) -> np.ndarray:
        return np.diff(self._cdf01(truth[0], self._to01(mechanism, mechanism.edges())))

    def error(self, mechanism, result, truth):
        dist = truth[0]
        if "mean" in result:
            return float(np.sum((result["mean"].values - truth[1]) ** 2))
        if "variance" in result:
            second = dist.expect(lambda u: u * u, lb=0, ub=1, conditional=True)
            exact = (second - ((truth[1] - mechanism.low) / (mechanism.high - mechanism.low)) ** 2)
            return float((result["variance"].values - exact * (mechanism.high - mechanism.low) ** 2) ** 2)
        if "cdf" in result:
            dim = result["cdf"].dims[0]
            exact = self._cdf01(dist, self._to01(mechanism, result[dim].values))
            return float(np.mean((result["cdf"].values - exact) ** 2))
        if "probability" in result:
            ends = [self._cdf01(dist, self._to01(mechanism, result[v].values)) for v in ("range_low", "range_high")]
            return float(np.sum((result["probability"].values - (ends[1] - ends[0])) ** 2))
        if "quantile" in result:
            low, high = dist.cdf(0.0), dist.cdf(1.0)
            exact = dist.ppf(low + result["level"].values * (high - low))
            return float(np.sum((self._to01(mechanism, result["quantile"].values) - exact) ** 2))
        raise NotImplementedError(f"the numeric family does not score {list(result.data_vars)}")

    def theoretical_slope(self, mechanism):
        return -1.0

    def exact_statistics(self, estimator, mechanism, truth, n, rng):
        if not hasattr(mechanism, "simulate_statistics"):
            raise NotImplementedError("these reports are privatised one by one")
        return estimator.simulate(mechanism, self.leaf_masses(mechanism, truth), n, rng)

    def expected(self, estimator, mechanism, data):
        if estimator.name == "ems":
            raise NotImplementedError("ems smooths its estimate, which is biased by design (docs/numeric.md)")
        if estimator.name == "quantile":
            raise NotImplementedError("a quantile is a non-linear function of the CDF: not unbiased")
        x = np.asarray(mechanism.encode_data(data))
        if hasattr(mechanism, "attributes"):
            return "unprojected", x.mean(axis=0)
        if estimator.name in ("cdf", "range"):
            from .ranges import below_weights

            masses = np.bincount(mechanism.leaves(x), minlength=mechanism.bins) / len(x)
            if estimator.name == "cdf":
                return "unprojected", masses @ below_weights(mechanism, estimator.points(mechanism))
            pairs = np.array(estimator.params["ranges"])
            inside = below_weights(mechanism, pairs[:, 1]) - below_weights(mechanism, pairs[:, 0])
            return "unprojected", masses @ inside
        return "unprojected", x.var() if estimator.name == "variance" else x.mean()
