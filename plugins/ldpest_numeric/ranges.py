"""The ``range``, ``cdf`` and ``quantile`` estimators of ``hierarchical-histogram`` and
``haar-histogram`` reports (docs/numeric.md, "Ranges, CDFs and quantiles").

Each is a linear query of the leaf masses (:mod:`ldpest_numeric.treefit`), numbers taken as
uniform within a leaf:

* ``range``: ``P(a <= X <= b)`` for each given ``[a, b]``, with its exact standard error;
  ``projection="clip"`` moves it into ``[0, 1]``;
* ``cdf``: ``F(x)`` at given points (by default every leaf edge, at most 1025 of them);
  ``projection="monotone"`` reports the closest non-decreasing function (pool adjacent
  violators) clipped to ``[0, 1]``;
* ``quantile``: the smallest ``x`` with ``F(x) >= level`` on the monotone CDF, interpolated
  within its leaf.  Its interval inverts the test of ``F(x) = level``: every ``x`` where
  ``|F_hat(x) - level| <= z sd(F_hat(x))``, with ``F_hat`` and its exact variance along each
  leaf (the variance is quadratic in the position within it), from the first accepting point to
  the last.  ``stderr`` is that 95% interval's half width over ``z_0.975``.

``stderr`` and the intervals describe the unbiased linear estimate (``unprojected``).
"""

from __future__ import annotations

import json
import warnings

import numpy as np

from ldpest import EstimateParts, EstimateWarning, Estimator, ParameterError
from ldpest.util.validation import check_choice

from .tree import HaarHistogram, HierarchicalHistogram

MAX_POINTS = 1025
_QUERY_COLUMNS = 256  # queries whose adjoint is computed at once
_WITHIN = 256  # positions examined within a leaf where a quantile interval ends


def _variances(fit, weights, count: int | None = None) -> np.ndarray:
    """``Var`` of each query: ``weights`` a ``(bins, m)`` array, or a function of a column slice
    giving those columns (so that ``bins x m`` never needs to be held at once)."""
    make = weights if callable(weights) else (lambda columns: weights[:, columns])
    count = weights.shape[1] if count is None else count
    return np.concatenate([fit.variance(make(slice(i, min(i + _QUERY_COLUMNS, count))))
                           for i in range(0, count, _QUERY_COLUMNS)])


def _unit_columns(bins: int):
    def make(columns: slice) -> np.ndarray:
        block = np.zeros((bins, columns.stop - columns.start))
        block[np.arange(columns.start, columns.stop), np.arange(block.shape[1])] = 1.0
        return block
    return make


def below_weights(mechanism, points) -> np.ndarray:
    """``(bins, m)``: the share of each leaf below each point."""
    edges = mechanism.edges()
    width = edges[1] - edges[0]
    return np.clip((np.asarray(points, dtype=np.float64)[None, :] - edges[:-1, None]) / width, 0.0, 1.0)


def pool_adjacent_violators(values: np.ndarray) -> np.ndarray:
    """The non-decreasing sequence closest to ``values`` in least squares."""
    blocks: list[list[float]] = []  # [mean, size]
    for value in values.tolist():
        blocks.append([value, 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            mean, size = blocks.pop()
            blocks[-1][0] = (blocks[-1][0] * blocks[-1][1] + mean * size) / (blocks[-1][1] + size)
            blocks[-1][1] += size
    return np.concatenate([np.full(int(size), mean) for mean, size in blocks])


class _TreeEstimator(Estimator):
    family = "numeric"
    accepts = (HierarchicalHistogram, HaarHistogram)

    def _aggregate(self, mechanism, values):
        return mechanism.statistics(values)

    def simulate(self, mechanism, truth, n, rng):
        """An exact draw of the statistics of ``n`` reports from leaf masses ``truth``."""
        from ldpest.stats.sufficient import SufficientStats

        arrays = mechanism.simulate_statistics(truth, n, rng)
        return SufficientStats(self.statistics_spec_json, mechanism.spec_json, int(n), arrays)

    def _fit(self, mechanism, arrays, n):
        fit = mechanism.fit(arrays)
        empty = fit.empty_levels()
        if empty:
            warnings.warn(f"level(s) {empty} of the {mechanism.depth} had no report among {n}: "
                             + ("their nodes split their parent's mass equally, and the stderr does not "
                                "include that error" if isinstance(mechanism, HierarchicalHistogram)
                                else "their coefficients are taken as 0 and the stderr adds a bound on that error"),
                          EstimateWarning, stacklevel=3)
        return fit

    @staticmethod
    def _attrs(mechanism, fit) -> dict:
        return {"low": mechanism.low, "high": mechanism.high, "bins": mechanism.bins,
                "reports_per_level": fit.counts.tolist(), "empty_levels": json.dumps(fit.empty_levels()),
                "leaves": "numbers taken as uniform within each of the bins equal leaves of [low, high]",
                "data_outside_bounds": mechanism.outside_note()}


class RangeEstimator(_TreeEstimator):
    """``P(a <= X <= b)`` for each ``[a, b]`` of ``ranges`` (module docstring)."""

    name = "range"
    parameter_help = {"ranges": "the intervals, e.g. [[0, 100], [100, 250]] (in the data's units)",
                      "projection": "'clip' (into [0, 1]) or 'none' (the unbiased value)"}

    def __init__(self, *, ranges=None, projection="clip"):
        if ranges is None:
            raise ParameterError("range needs ranges=[[a, b], ...], e.g. -q 'ranges=[[0, 100]]'")
        try:
            pairs = np.array(ranges, dtype=np.float64).reshape(-1, 2)
        except (TypeError, ValueError):
            raise ParameterError(f"ranges must be pairs [a, b] of numbers, got {ranges!r}") from None
        if not len(pairs) or not np.all(np.isfinite(pairs)) or np.any(pairs[:, 0] > pairs[:, 1]):
            raise ParameterError(f"ranges must be pairs [a, b] of finite numbers with a <= b, got {ranges!r}")
        self._set_params(ranges=pairs.tolist(), projection=check_choice("projection", projection, ("clip", "none")))

    def _finalize(self, mechanism, arrays, n):
        fit = self._fit(mechanism, arrays, n)
        pairs = np.array(self._params["ranges"])
        weights = below_weights(mechanism, pairs[:, 1]) - below_weights(mechanism, pairs[:, 0])
        unprojected = fit.leaf_masses() @ weights
        stderr = np.sqrt(_variances(fit, weights))
        estimate = unprojected if self._params["projection"] == "none" else np.clip(unprojected, 0.0, 1.0)
        labels = np.array([f"[{a:g}, {b:g}]" for a, b in pairs])
        name = mechanism.variable
        return EstimateParts(
            variable="probability", estimate=estimate, stderr=stderr, dims=("range",),
            coords={"range": labels, "range_low": _axis("range", pairs[:, 0], mechanism),
                    "range_high": _axis("range", pairs[:, 1], mechanism)},
            long_name=f"estimated probability that {name or 'the number'} lies in the range",
            unprojected=unprojected, projection=self._params["projection"], uncertainty_of="unprojected",
            stderr_method="analytic (the oracles' exact variance at the estimate)", units="1",
            attrs=self._attrs(mechanism, fit))


class CdfEstimator(_TreeEstimator):
    """``F(x)`` at ``points`` (module docstring)."""

    name = "cdf"
    finalize_params = ("projection", "points")
    parameter_help = {"points": "where to evaluate the CDF (data units); default every leaf edge (at most 1025)",
                      "projection": "'monotone' (non-decreasing, in [0, 1]) or 'none' (the unbiased values)"}

    def __init__(self, *, points=None, projection="monotone"):
        if points is not None:
            try:
                values = np.array(points, dtype=np.float64).ravel()
            except (TypeError, ValueError):
                raise ParameterError(f"points must be numbers, got {points!r}") from None
            if not len(values) or not np.all(np.isfinite(values)):
                raise ParameterError(f"points must be finite numbers, got {points!r}")
            points = np.sort(values).tolist()
        self._set_params(points=points, projection=check_choice("projection", projection, ("monotone", "none")))

    def points(self, mechanism) -> np.ndarray:
        if self._params["points"] is not None:
            return np.array(self._params["points"])
        if mechanism.bins + 1 <= MAX_POINTS:
            return mechanism.edges()
        return np.linspace(mechanism.low, mechanism.high, MAX_POINTS)

    def _finalize(self, mechanism, arrays, n):
        fit = self._fit(mechanism, arrays, n)
        points = self.points(mechanism)
        unprojected = np.concatenate([fit.leaf_masses() @ below_weights(mechanism, points[i:i + _QUERY_COLUMNS])
                            for i in range(0, len(points), _QUERY_COLUMNS)])
        stderr = np.sqrt(_variances(fit, lambda columns: below_weights(mechanism, points[columns]), len(points)))
        if self._params["projection"] == "monotone":
            estimate = np.clip(pool_adjacent_violators(unprojected), 0.0, 1.0)
        else:
            estimate = unprojected
        dim = mechanism.variable or "x"
        return EstimateParts(
            variable="cdf", estimate=estimate, stderr=stderr, dims=(dim,), coords={dim: _axis(dim, points, mechanism)},
            long_name=None if mechanism.variable is None else f"estimated CDF of {mechanism.variable}",
            unprojected=unprojected, projection=self._params["projection"], uncertainty_of="unprojected",
            stderr_method="analytic (the oracles' exact variance at the estimate)",
            attrs=self._attrs(mechanism, fit))


class QuantileEstimator(_TreeEstimator):
    """Quantiles at ``levels`` with test-inversion intervals (module docstring)."""

    name = "quantile"
    finalize_params = ("levels",)
    parameter_help = {"levels": "the probabilities of the quantiles, e.g. [0.5, 0.9, 0.99]"}

    def __init__(self, *, levels=(0.1, 0.25, 0.5, 0.75, 0.9)):
        try:
            values = np.array(levels, dtype=np.float64).ravel()
        except (TypeError, ValueError):
            raise ParameterError(f"levels must be numbers in (0, 1), got {levels!r}") from None
        if not len(values) or not np.all((values > 0) & (values < 1)):
            raise ParameterError(f"levels must be numbers in (0, 1), got {levels!r}")
        self._set_params(levels=values.tolist())

    def _finalize(self, mechanism, arrays, n):
        fit = self._fit(mechanism, arrays, n)
        edges = mechanism.edges()
        cdf = np.concatenate([[0.0], np.cumsum(fit.leaf_masses())])
        edge_variance = _variances(fit, lambda columns: below_weights(mechanism, edges[columns]), len(edges))
        leaf_variance = _variances(fit, _unit_columns(mechanism.bins), mechanism.bins)
        monotone = np.clip(pool_adjacent_violators(cdf), 0.0, 1.0)
        levels = np.array(self._params["levels"])
        estimate = np.array([_inverse(edges, monotone, q) for q in levels])
        lower, upper = test_inversion(edges, cdf, edge_variance, fit.leaf_masses(), leaf_variance, levels, 0.95)
        from scipy.special import ndtri  # lazily: every registry loads this module

        stderr = (upper - lower) / (2 * ndtri(0.975))
        return EstimateParts(
            variable="quantile", estimate=estimate, stderr=stderr, dims=("level",),
            coords={"level": levels, "edge": _axis("edge", edges, mechanism)},
            long_name=None if mechanism.variable is None else f"estimated quantile of {mechanism.variable}",
            units=mechanism.units, projection="monotone",
            stderr_method="half the 95% test-inversion interval over z_0.975",
            extra={"edge_cdf": (("edge",), cdf), "edge_cdf_variance": (("edge",), edge_variance),
                   "leaf_mass": (("leaf",), fit.leaf_masses()), "leaf_mass_variance": (("leaf",), leaf_variance)},
            attrs=self._attrs(mechanism, fit))

    def interval(self, result, level):
        edges = result["edge"].values
        return (*test_inversion(edges, result["edge_cdf"].values, result["edge_cdf_variance"].values,
                                result["leaf_mass"].values, result["leaf_mass_variance"].values,
                                result["level"].values, level), "test inversion of F(x) = level")


def _axis(dim: str, values, mechanism):
    """A coordinate in the data's units: ``(dim, values, {"units": ...})`` when they are known."""
    return (dim, np.asarray(values), {"units": mechanism.units}) if mechanism.units else (dim, np.asarray(values))


def _inverse(edges: np.ndarray, cdf: np.ndarray, q: float) -> float:
    """The smallest ``x`` with ``cdf(x) >= q`` for a non-decreasing piecewise-linear ``cdf``."""
    k = int(np.searchsorted(cdf, q, side="left"))
    if k == 0:
        return float(edges[0])
    if k >= len(edges):
        return float(edges[-1])
    rise = cdf[k] - cdf[k - 1]
    share = (q - cdf[k - 1]) / rise if rise > 0 else 0.0
    return float(edges[k - 1] + share * (edges[k] - edges[k - 1]))


def test_inversion(edges, cdf, edge_variance, leaf_mass, leaf_variance, levels, confidence):
    """``(lower, upper)`` for each level: the first and last ``x`` where ``|F_hat(x) - q| <= z sd(x)``.

    Within leaf ``k`` at share ``s``, ``F_hat = F_k + s m_k`` and ``Var = V_k + 2 s C_k + s^2 M_k``
    with ``C_k = (V_{k+1} - V_k - M_k) / 2`` (``F_{k+1} = F_k + m_k``): exact along the leaf."""
    from scipy.special import ndtri

    z = ndtri(0.5 + confidence / 2)
    share = np.linspace(0.0, 1.0, _WITHIN + 1)
    covariance = (edge_variance[1:] - edge_variance[:-1] - leaf_variance) / 2
    value = cdf[:-1, None] + share[None, :] * leaf_mass[:, None]
    variance = (edge_variance[:-1, None] + 2 * share[None, :] * covariance[:, None]
                + share[None, :] ** 2 * leaf_variance[:, None])
    sd = np.sqrt(np.maximum(variance, 0.0))
    positions = edges[:-1, None] + share[None, :] * (edges[1] - edges[0])
    lower, upper = [], []
    for q in np.asarray(levels, dtype=np.float64):
        accepted = np.abs(value - q) <= z * sd
        flat = np.flatnonzero(accepted.ravel())
        if flat.size == 0:  # no x is consistent with F(x) = q: the point where F_hat comes closest
            closest = np.argmin(np.abs(value - q) - z * sd)
            lower.append(positions.ravel()[closest])
            upper.append(positions.ravel()[closest])
            continue
        lower.append(positions.ravel()[flat[0]])
        upper.append(positions.ravel()[flat[-1]])
    return np.array(lower), np.array(upper)
