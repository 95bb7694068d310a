"""The ``frequency`` estimator (MATH.md section 1)."""

from __future__ import annotations

import numpy as np

from ldpest import DataError, EstimateParts, Estimator, FrequencyOracle, SufficientStats
from ldpest.projection import project_simplex
from ldpest.validation import check_choice


class FrequencyEstimator(Estimator):
    """Unbiased category frequencies from any frequency-oracle mechanism.

    The mechanism supplies its linear debiasing (``frequency_estimate``);
    ``projection="simplex"`` (default) then returns the Euclidean projection
    onto the probability simplex, which never increases the l2 error.
    ``unprojected`` and ``stderr`` (analytic, of the unprojected estimate)
    are kept in the result.
    """

    name = "frequency"
    family = "multinomial"
    accepts = (FrequencyOracle,)
    projections = ("simplex", "none")

    def __init__(self, *, projection="simplex"):
        self._set_params(projection=check_choice("projection", projection, self.projections))

    def _aggregate(self, mechanism, values):
        return mechanism.frequency_statistics(values)

    def _finalize(self, mechanism, arrays, n):
        theta, stderr = mechanism.frequency_estimate(arrays, n)
        projection = self._params["projection"]
        estimate = project_simplex(theta) if projection == "simplex" else theta
        model = mechanism.count_model(arrays)
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
        )

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
