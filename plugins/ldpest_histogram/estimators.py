"""The ``histogram-mean`` (Duchi et al. f-hat) and ``histogram-cdf``
(Gyorfi-Kroll f-tilde) estimators (MATH.md section 2), of ``laplace-histogram`` reports and of
``oracle-histogram`` reports, whose cells a frequency oracle estimates (:mod:`.cells`)."""

from __future__ import annotations

import json

import numpy as np

import ldpest
from ldpest import DataError, EstimateParts, Estimator, ExactSum, ParameterError, SufficientStats
from ldpest.stats.binomial import affine_binomial_stderr
from ldpest.stats.intervals import EXACT_NOISE_SUM_METHOD, laplace_mean_kurtosis, one_hot_laplace_interval
from ldpest.stats.projection import project_positive, project_simplex
from ldpest.util.validation import check_choice

from . import cells
from .oracle import OracleHistogram

PROJECTIONS = ("simplex", "positive", "none", "auto", "shrink", "ibu", "mle")
ORACLE_ONLY = ("auto", "shrink", "ibu", "mle")  # the frequency estimator's choices, for oracle-histogram cells


class _HistogramEstimator(Estimator):
    family = "histogram"
    accepts = ("laplace-histogram", "oracle-histogram")
    default_projection = "simplex"

    parameter_help = {"projection": "positive (Gyorfi-Kroll), simplex (Euclidean onto the simplex) or none; "
                                    "for oracle-histogram reports also the frequency estimator's auto (the lowest "
                                    "estimated risk), shrink (toward uniform cells), ibu (the iterative Bayesian "
                                    "update's fixed point) and mle (maximum likelihood, where the oracle's "
                                    "statistics suffice)"}

    def __init__(self, *, projection=None):
        projection = self.default_projection if projection is None else projection
        self._set_params(projection=check_choice("projection", projection, PROJECTIONS))

    def check_accepts(self, mechanism) -> None:
        super().check_accepts(mechanism)
        projection = self._params["projection"]
        if projection in ORACLE_ONLY and not isinstance(mechanism, OracleHistogram):
            raise ParameterError(f"projection={projection!r} chooses among a frequency oracle's estimates: it needs "
                                 f"oracle-histogram reports; {mechanism.name} takes simplex, positive or none")

    def _aggregate(self, mechanism, values):
        if isinstance(mechanism, OracleHistogram):
            return mechanism.oracle.frequency_statistics(values)
        return self._noisy_aggregate(mechanism, values)

    # laplace-histogram: the statistics of a chunk of noisy one-hot reports
    def _noisy_aggregate(self, mechanism, values):
        raise NotImplementedError

    # laplace-histogram: masses mu_j with their standard errors, from the totals
    def _masses(self, mechanism, arrays, n):
        raise NotImplementedError

    def _finalize(self, mechanism, arrays, n):
        if isinstance(mechanism, OracleHistogram):
            return cells.oracle_parts(mechanism, arrays, n, self._params["projection"])
        partition = mechanism.partition
        masses, mass_se = self._masses(mechanism, arrays, n)
        count, count_map, kurtosis = self._interval_parts(mechanism, arrays, masses, n)
        projection = self._params["projection"]
        if projection == "simplex":
            projected = project_simplex(masses)
        elif projection == "positive":
            projected = project_positive(masses)
        else:
            projected = masses
        volume = partition.cell_volume
        dims, coords, bounds, extra = cells.geometry(mechanism)
        extra["mass"] = (dims, partition.to_grid(projected))
        return EstimateParts(
            variable="density",
            estimate=partition.to_grid(projected / volume),
            stderr=partition.to_grid(mass_se / volume),
            dims=dims,
            coords=coords,
            projection=projection,
            unprojected=partition.to_grid(masses / volume),
            bounds=bounds,
            extra=extra,
            attrs={"cell_volume": volume, "cells": partition.size},
            count=None if count is None else partition.to_grid(count, fill=-1).astype(np.int64),
            count_map=None if count_map is None else (*count_map, 1.0 / volume),
            excess_kurtosis=None if kurtosis is None else partition.to_grid(kurtosis),
        )

    def interval(self, result, level):
        """Of the unprojected densities: oracle-histogram reports take their oracle's own intervals
        (:func:`.cells.oracle_interval`); laplace-histogram reports :meth:`_noisy_interval`.  None: the core's
        Clopper-Pearson interval on the result's ``count``, else the normal interval."""
        if result.variables["stderr"].attrs.get("estimate") != "unprojected":
            return None
        mechanism = ldpest.mechanism_from_spec(json.loads(result.attrs["mechanism_spec"]))
        if isinstance(mechanism, OracleHistogram):
            return cells.oracle_interval(mechanism, result, level)
        return self._noisy_interval(mechanism, result, level)

    def _noisy_interval(self, mechanism, result, level):
        return None

    def simulate(self, mechanism, cell_probabilities, n: int, rng) -> SufficientStats:
        """Exact draw of the sufficient statistics of ``n`` reports in O(cells).

        ``cell_probabilities``: length N (or N + 1 with the mass outside every
        cell last).  Raw counts ``c ~ Multinomial(n, mu)``; then the statistic
        is drawn from its exact conditional law given ``c`` (see subclasses).
        """

        self.check_accepts(mechanism)
        mu = np.asarray(cell_probabilities, dtype=np.float64)
        size = mechanism.partition.size
        if mu.size == size:
            mu = np.append(mu, max(0.0, 1.0 - mu.sum()))
        if mu.size != size + 1 or np.any(mu < 0) or abs(mu.sum() - 1) > 1e-9:
            raise DataError(f"cell_probabilities must be {size} (or {size + 1}) non-negative numbers summing to 1")
        if isinstance(mechanism, OracleHistogram):
            arrays = cells.simulate_oracle(mechanism, mu / mu.sum(), n, rng)
        else:
            arrays = self._simulate_arrays(mechanism, rng.multinomial(n, mu / mu.sum())[:size], n, rng)
        return SufficientStats(self.statistics_spec_json, mechanism.spec_json, n, arrays)


class HistogramMean(_HistogramEstimator):
    """f-hat: ``mu_hat_j = mean_i Z_ij``, density ``mu_hat_j / h^d``.

    ``Var(mu_hat_j) = (mu_j (1 - mu_j) + v) / n`` with ``v`` the exact noise
    variance (about ``sigma_W^2 = 8 / a^2``); projection "simplex" (default,
    Duchi et al.), "positive" or "none".
    """

    name = "histogram-mean"

    def _noisy_aggregate(self, mechanism, values):
        return {"sums": ExactSum.of(values, step=mechanism.noise.step)}

    def lattice_column_statistic(self, mechanism):
        """The statistics of Laplace cells are their exact column sums on the noise's lattice (Spark may sum them
        where they are stored); an oracle's cells, whatever the oracle declares."""
        if isinstance(mechanism, OracleHistogram):
            return mechanism.oracle.lattice_column_statistic()
        return "sums", mechanism.noise.step

    def _masses(self, mechanism, arrays, n):
        mu = arrays["sums"].to_float() / n
        clipped = np.clip(mu, 0.0, 1.0)
        return mu, np.sqrt((clipped * (1 - clipped) + mechanism.noise.variance) / n)

    def _interval_parts(self, mechanism, arrays, masses, n):
        return None, None, laplace_mean_kurtosis(masses, mechanism.noise.variance, n)

    def _noisy_interval(self, mechanism, result, level):
        """Exact for n <= 10^4 with n (cells + 1) <= 2^20: each cell's sum is a binomial count plus the sum of n
        lattice noises, whose law is computed exactly
        (:func:`ldpest.stats.intervals.one_hot_laplace_interval`); beyond, None (the normal interval)."""
        n, volume = int(result.attrs["n"]), float(result.attrs["cell_volume"])
        unprojected = result["unprojected"].values
        inside = result["in_partition"].values if "in_partition" in result else np.ones(unprojected.shape, bool)
        ends = one_hot_laplace_interval(mechanism.noise, unprojected[inside] * volume * n, n, level)
        if ends is None:
            return None
        lower, upper = np.zeros(unprojected.shape), np.zeros(unprojected.shape)
        lower[inside], upper[inside] = ends[0] / volume, ends[1] / volume
        return lower, upper, EXACT_NOISE_SUM_METHOD

    def _simulate_arrays(self, mechanism, counts, n, rng):
        # sum_i Z_ij = c_j + g * (sum of n iid lattice noises): exact
        noise = mechanism.noise
        totals = counts + noise.step * noise.sum_of_noise(n, counts.shape, rng)
        return {"sums": ExactSum.of(totals[None, :])}


class HistogramCdf(_HistogramEstimator):
    """f-tilde: from ``F_j = (1/n) #{i : Z_ij <= 1/2}``,
    ``mu_tilde_j = (q0 - F_j) / (q0 - q1)`` where ``q0 = P(Z <= 1/2 | not in A_j)``
    and ``q1 = P(Z <= 1/2 | in A_j)`` under the lattice noise (for continuous
    Laplace ``q0 = H(1/(2 sigma_W)) = 1 - e^(-a/4)/2`` and ``q1 = 1 - q0``).
    ``Var = pi_j (1 - pi_j) / (n (q0 - q1)^2)``, ``pi_j = q0 - mu_j (q0 - q1)``.
    Its sufficient statistic is a count per cell.  Projection "positive"
    (default, Gyorfi-Kroll), "simplex" or "none".
    """

    name = "histogram-cdf"
    default_projection = "positive"

    @staticmethod
    def thresholds(mechanism) -> tuple[float, float]:
        noise = mechanism.noise
        half = round(0.5 / noise.step)  # 1/2 is a lattice point
        return noise.cdf_steps(half), noise.cdf_steps(-half)

    def _noisy_aggregate(self, mechanism, values):
        return {"below_half": (values <= 0.5).sum(axis=0, dtype=np.int64)}

    def threshold_count_statistic(self, mechanism):
        """The statistics of Laplace cells are the counts of values at most 1/2 per cell (Spark may count them
        where they are stored); an oracle's cells have the oracle's statistics."""
        return None if isinstance(mechanism, OracleHistogram) else ("below_half", 0.5)

    def _masses(self, mechanism, arrays, n):
        q0, q1 = self.thresholds(mechanism)
        mu = (q0 - arrays["below_half"] / n) / (q0 - q1)
        return mu, affine_binomial_stderr(mu, q0, q1 - q0, n)

    def _interval_parts(self, mechanism, arrays, masses, n):
        q0, q1 = self.thresholds(mechanism)
        return arrays["below_half"], (q0, q1 - q0), None

    def _simulate_arrays(self, mechanism, counts, n, rng):
        q0, q1 = self.thresholds(mechanism)
        return {"below_half": (rng.binomial(counts, q1) + rng.binomial(n - counts, q0)).astype(np.int64)}
