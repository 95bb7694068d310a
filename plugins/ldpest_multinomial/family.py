"""The multinomial family's studies: category frequencies as the truth, scored by the squared l2
error of ``probability`` (slope -1 in log n: MATH.md section 1)."""

from __future__ import annotations

import math

import numpy as np

import ldpest
from ldpest import ParameterError


class Multinomial(ldpest.Family):
    """Truth: ``theta`` (``--theta``, default uniform); error ``sum_j (p_hat_j - theta_j)^2``."""

    name = "multinomial"
    metric = "squared l2 error of probability"

    def truth(self, mechanism, given):
        d = len(mechanism.categories)
        if given is not None and any(isinstance(t, str) for t in np.atleast_1d(np.asarray(given, dtype=object))):
            raise ParameterError(f"--truth describes a density; {mechanism.name!r} estimates frequencies: give --theta "
                                 f"({d} frequencies, e.g. --theta {','.join(['%.3g' % (1 / d)] * d)})")
        theta = np.full(d, 1.0 / d) if given is None else np.asarray(given, dtype=np.float64)
        if theta.shape != (d,) or np.any(theta < 0) or not math.isclose(theta.sum(), 1.0, abs_tol=1e-9):
            raise ParameterError(f"--theta must give {d} non-negative frequencies summing to 1")
        return theta / theta.sum()

    def sample(self, mechanism, truth, n, rng):
        return rng.choice(np.asarray(mechanism.categories, dtype=object), size=n, p=truth)

    def error(self, mechanism, result, truth):
        return float(np.sum((result["probability"].values - truth) ** 2))

    def theoretical_slope(self, mechanism):
        return -1.0

    def exact_statistics(self, estimator, mechanism, truth, n, rng):
        return estimator.simulate(mechanism, truth, n, rng)

    def expected(self, estimator, mechanism, data):
        codes = mechanism.encode_data(data)
        return "unprojected", np.bincount(codes, minlength=len(mechanism.categories)) / len(codes)
