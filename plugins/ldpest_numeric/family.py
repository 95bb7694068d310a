"""The numeric family's studies: a distribution on [0, 1] (``--truth 'beta(5,2)'``) scaled to
``[low, high]`` as the truth, scored by the squared error of the mean (slope -1 in log n: the
estimate is unbiased with variance ``Var(value) / n``)."""

from __future__ import annotations

import numpy as np

import ldpest
from ldpest.stats.distributions import distributions, truncated_sample


class Numeric(ldpest.Family):
    """Truth: one distribution on [0, 1] scaled to the mechanism's bounds; error: the squared error
    of the mean."""

    name = "numeric"
    metric = "squared error of the mean"

    def truth(self, mechanism, given):
        dist = distributions(given, 1)[0]
        mean01 = dist.expect(lb=0, ub=1, conditional=True)
        return dist, mechanism.low + (mechanism.high - mechanism.low) * mean01

    def sample(self, mechanism, truth, n, rng):
        return mechanism.low + (mechanism.high - mechanism.low) * truncated_sample(truth[0], n, rng)

    def error(self, mechanism, result, truth):
        return float((result["mean"].values - truth[1]) ** 2)

    def theoretical_slope(self, mechanism):
        return -1.0

    def expected(self, estimator, mechanism, data):
        if estimator.name == "ems":
            raise NotImplementedError("ems smooths its estimate, which is biased by design (docs/numeric.md)")
        x = np.asarray(mechanism.encode_data(data))
        return "unprojected", x.var() if estimator.name == "variance" else x.mean()
