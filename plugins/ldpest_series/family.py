"""The series family's studies: a scipy.stats distribution truncated to [0, 1] as the truth, scored
by the integrated squared error, exact by Parseval (slope -1 in log n until the truncation bias
dominates: MATH.md section 3)."""

from __future__ import annotations

import numpy as np

import ldpest
from ldpest.stats.distributions import distributions, truncated_sample


class Series(ldpest.Family):
    """Truth: one distribution on [0, 1] (``--truth 'beta(2,2)'``); error ``sum_j (theta_hat_j -
    theta_j)^2 + sum_{j > k} theta_j^2``, the ISE of the estimate by Parseval."""

    name = "series"
    metric = "integrated squared error"

    def truth(self, mechanism, given):
        from scipy import integrate

        dist = distributions(given, 1)[0]
        mass = dist.cdf(1) - dist.cdf(0)

        def pdf(t):
            return dist.pdf(t) / mass  # truncated to [0, 1]

        basis, k = mechanism.basis, mechanism.k
        theta = np.array([integrate.quad(lambda t, j=j: pdf(t) * basis.evaluate([t], k)[0, j], 0, 1, limit=400)[0]
                          for j in range(k)])
        integral_f2 = integrate.quad(lambda t: pdf(t) ** 2, 0, 1, limit=400)[0]
        return dist, theta, max(0.0, integral_f2 - float(np.sum(theta ** 2)))

    def sample(self, mechanism, truth, n, rng):
        return truncated_sample(truth[0], n, rng)

    def error(self, mechanism, result, truth):
        _, theta, tail = truth
        return float(np.sum((result["coefficient"].values - theta) ** 2) + tail)

    def theoretical_slope(self, mechanism):
        return -1.0

    def expected(self, estimator, mechanism, data):
        x = mechanism.encode_data(data)
        return "coefficient", mechanism.basis.evaluate(x, mechanism.k).mean(axis=0)
