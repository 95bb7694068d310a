"""The ``frequency`` estimator (MATH.md section 1)."""

from __future__ import annotations

from ldpest import EstimateParts, Estimator, FrequencyOracle
from ldpest.labels import label_coordinate
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
        return EstimateParts(
            variable="probability",
            estimate=estimate,
            stderr=stderr,
            dims=("category",),
            coords={"category": label_coordinate(mechanism.categories)},
            projection=projection,
            unprojected=theta,
        )
