"""The ``rappor`` estimator: frequencies of known candidate strings from RAPPOR reports, as
RAPPOR's analysis does (docs/accounting.md, "Repeated collection").

Per cohort ``j`` with ``n_j`` reports and bit totals ``ones_j``, ``y_j = (ones_j - n_j p*) / (q* -
p*)`` has mean ``n_j X_j f_j``, where ``X_j`` (bits x candidates) holds the candidates' Bloom filters
in that cohort and ``f_j`` the candidates' frequencies among its users.  The pooled least-squares
estimate

    f_hat = G^-1 sum_j X_j' y_j,   G = sum_j n_j X_j' X_j,

is linear in the reports; with one cohort it is unbiased whenever every value is a candidate
(with several, when the cohorts' users have the same distribution, as random cohorts have).  Its
variance ``G^-1 (sum_j X_j' D_j X_j) G^-1 / (q* - p*)^2`` uses each bit's variance ``pi (1 - pi)``
with ``pi`` in ``{p*, q*}`` estimated from the bit totals (``D_j``: the sum over the cohort's users),
each at least ``n_j min(p*(1 - p*), q*(1 - q*))``: never 0.  RAPPOR's own analysis adds a lasso
selection step before this regression; with a candidate list that holds every value none is
needed.  ``projection="simplex"`` projects onto the simplex (when the candidates hold every value).
"""

from __future__ import annotations

import numpy as np

from ldpest import DataError, EstimateParts, Estimator, ParameterError
from ldpest.stats.projection import project_simplex
from ldpest.util.validation import check_choice

from .rappor import bloom_bits


class RapporEstimator(Estimator):
    """Frequencies of candidate strings from RAPPOR reports, by least squares (module docstring)."""

    name = "rappor"
    family = "multinomial"
    accepts = ("rappor",)
    finalize_params = ("projection", "candidates")
    parameter_help = {"candidates": "the strings whose frequencies to estimate (RAPPOR's candidate list)",
                      "projection": "none (default) or simplex"}

    def __init__(self, *, candidates=None, projection="none"):
        if candidates is None or isinstance(candidates, str) or len(list(candidates)) == 0:
            raise ParameterError("rappor: give candidates, the strings whose frequencies to estimate (on the command "
                                 "line: --estimator-param 'candidates=[\"a\", \"b\"]')")
        candidates = [str(candidate) for candidate in candidates]
        if len(set(candidates)) != len(candidates):
            raise ParameterError("rappor: the candidates must be distinct")
        self._set_params(candidates=candidates, projection=check_choice("projection", projection, ("none", "simplex")))

    def _aggregate(self, mechanism, values):
        cohorts = values[:, 0].astype(np.intp)
        ones = np.zeros((mechanism.cohorts, mechanism.k), dtype=np.int64)
        np.add.at(ones, cohorts, values[:, 1:].astype(np.int64))
        return {"reports": np.bincount(cohorts, minlength=mechanism.cohorts).astype(np.int64), "ones": ones}

    def _finalize(self, mechanism, arrays, n):
        candidates = self._params["candidates"]
        counts, ones = np.asarray(arrays["reports"], dtype=np.float64), np.asarray(arrays["ones"], dtype=np.float64)
        q_star, p_star = (float(value) for value in mechanism.report_probabilities())
        gap = q_star - p_star
        gram = np.zeros((len(candidates), len(candidates)))
        right = np.zeros(len(candidates))
        middle = np.zeros_like(gram)
        floor = min(p_star * (1 - p_star), q_star * (1 - q_star))
        for cohort in np.flatnonzero(counts):
            design = bloom_bits(np.array(candidates, dtype=object), np.full(len(candidates), cohort), mechanism.k,
                                mechanism.params["num_hashes"]).T.astype(np.float64)
            gram += counts[cohort] * design.T @ design
            right += design.T @ ((ones[cohort] - counts[cohort] * p_star) / gap)
            variance = counts[cohort] * p_star * (1 - p_star) + (1 - p_star - q_star) * (ones[cohort]
                                                                                        - counts[cohort] * p_star)
            middle += design.T @ (np.maximum(variance, counts[cohort] * floor)[:, None] * design)
        if np.linalg.matrix_rank(gram) < len(candidates):
            raise DataError(f"rappor: the {len(candidates)} candidates' Bloom filters are not linearly independent "
                            f"in the cohorts reported ({mechanism.k} bits, {int(np.count_nonzero(counts))} cohorts): "
                            "use fewer candidates, or more bits or cohorts")
        inverse = np.linalg.inv(gram)
        theta = inverse @ right
        covariance = inverse @ middle @ inverse / gap ** 2
        projection = self._params["projection"]
        return EstimateParts(
            variable="probability", estimate=project_simplex(theta) if projection == "simplex" else theta,
            stderr=np.sqrt(np.diag(covariance)), dims=("category",),
            coords={"category": np.array(candidates, dtype=object)}, projection=projection, unprojected=theta,
            attrs={"candidates_total": float(theta.sum())})
