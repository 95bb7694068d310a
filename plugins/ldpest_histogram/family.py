"""The histogram family's studies: a product of scipy.stats marginals as the truth, scored by the
L1 error of the cell masses (slope -1/2 in log n at fixed cells: MATH.md section 2)."""

from __future__ import annotations

import numpy as np

import ldpest
from ldpest.stats.distributions import distributions


class Histogram(ldpest.Family):
    """Truth: one distribution per dimension (``--truth 'beta(2,2)'``, repeated for every
    dimension if one is given); error ``sum_cells |mass_hat - mass|``."""

    name = "histogram"
    metric = "L1 error of the cell masses"

    def truth(self, mechanism, given):
        dists = distributions(given, mechanism.d)
        lower, upper = mechanism.partition.cell_corners()
        masses = np.ones(lower.shape[0])
        for i, dist in enumerate(dists):
            masses *= dist.cdf(upper[:, i]) - dist.cdf(lower[:, i])
        return dists, masses

    def sample(self, mechanism, truth, n, rng):
        return np.column_stack([dist.rvs(size=n, random_state=rng) for dist in truth[0]])

    def error(self, mechanism, result, truth):
        return float(np.abs(result["mass"].values - mechanism.partition.to_grid(truth[1])).sum())

    def theoretical_slope(self, mechanism):
        return -0.5

    def exact_statistics(self, estimator, mechanism, truth, n, rng):
        return estimator.simulate(mechanism, truth[1], n, rng)

    def expected(self, estimator, mechanism, data):
        cells = mechanism.encode_data(data)
        inside = cells[(cells >= 0) & (cells < mechanism.partition.size)]  # oracle-histogram: N is outside
        masses = np.bincount(inside, minlength=mechanism.partition.size) / len(cells)
        return "unprojected", mechanism.partition.to_grid(masses / mechanism.partition.cell_volume)
