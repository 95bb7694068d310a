"""The ``series`` estimator: orthogonal-series density (MATH.md section 3)."""

from __future__ import annotations

import numbers

import numpy as np

from ldpest import EstimateParts, Estimator, ParameterError
from ldpest.util.validation import check_choice, check_positive_int

from .mechanisms import SeriesMechanism


class SeriesEstimator(Estimator):
    """``theta_hat_j = mean_i Z_ij``, ``f_hat(x) = sum_j theta_hat_j phi_j(x)`` on a grid.

    Standard errors from the per-report covariance ``S = E[Z Z^T] - theta theta^T``
    (plug-in, with ``theta`` clipped to ``[-B0, B0]``, where every true
    coefficient lies, and the eigenvalues of ``S`` raised to the mechanism's
    proven lower bound :meth:`covariance_floor`, so that no error is ever 0):
    coefficients ``sqrt(S_jj / n)`` (for l-infinity sampling
    ``sqrt((B^2 - theta_j^2) / n)``) and pointwise ``sqrt(phi(x)^T S phi(x) / n)``
    (it covers ``E f_hat(x) = sum_{j <= k} theta_j phi_j(x)``).  ``grid``: the
    number of midpoints ``(i + 1/2) / grid`` (default 200) or the points
    themselves, in [0, 1].

    What is known is used: for bases whose first function is the constant 1
    (trigonometric, Walsh), ``theta_1 = int f = 1`` for every density, so it is
    set to 1 with no error instead of estimated from noise; the unprojected
    estimate then integrates to exactly 1.  ``projection="positive"`` (the
    default) returns the density ``max(f, 0) / int max(f, 0)`` (midpoint rule
    on the grid); ``"none"`` the signed series.
    """

    parameter_help = {"projection": "positive (max(f, 0) renormalised) or none",
                      "grid": "the evaluation points of the density, or their number on [0, 1]"}
    name = "series"
    family = "series"
    accepts = (SeriesMechanism,)
    finalize_params = ("projection", "grid")

    def __init__(self, *, projection="positive", grid=200):
        projection = check_choice("projection", projection, ("none", "positive"))
        if isinstance(grid, numbers.Integral) and not isinstance(grid, bool):
            grid = check_positive_int("grid", grid, minimum=2)
        else:
            try:
                points = [float(v) for v in grid]
            except TypeError:
                raise ParameterError(f"grid must be a number of points or a list of points, got {grid!r}") from None
            if len(points) < 1 or not all(0 <= v <= 1 for v in points):
                raise ParameterError("grid points must lie in [0, 1]")
            grid = points
        self._set_params(projection=projection, grid=grid)

    def grid_points(self) -> np.ndarray:
        grid = self._params["grid"]
        if isinstance(grid, int):
            return (np.arange(grid) + 0.5) / grid
        return np.asarray(grid, dtype=np.float64)

    def _aggregate(self, mechanism, values):
        return mechanism.coefficient_statistics(values)

    def _finalize(self, mechanism, arrays, n):
        theta, second = mechanism.coefficient_moments(arrays, n)
        feasible = np.clip(theta, -mechanism.basis.B0, mechanism.basis.B0)
        covariance = _floor_eigenvalues(second - np.outer(feasible, feasible), mechanism.covariance_floor())
        if mechanism.basis.constant_first:  # theta_1 = int f = 1 is known exactly
            theta = theta.copy()
            theta[0] = 1.0
            covariance[0, :] = covariance[:, 0] = 0.0
        x = self.grid_points()
        phi = mechanism.basis.evaluate(x, mechanism.k)
        density = phi @ theta
        quadratic = np.sum((phi @ covariance) * phi, axis=1)  # phi_i' C phi_i, one matrix product (BLAS)
        pointwise = np.sqrt(np.maximum(quadratic, 0.0) / n)
        projection = self._params["projection"]
        estimate = density
        if projection == "positive":
            positive = np.maximum(density, 0.0)
            weights = np.gradient(x) if x.size > 1 else np.ones(1)
            total = float(np.sum(positive * weights))
            estimate = positive / total if total > 0 else np.ones_like(density)
        return EstimateParts(
            variable="density",
            estimate=estimate,
            stderr=pointwise,
            dims=("x",),
            coords={"x": x, "basis_function": np.arange(1, mechanism.k + 1)},
            projection=projection,
            unprojected=density,
            extra={
                "coefficient": (("basis_function",), theta),
                "coefficient_stderr": (("basis_function",), np.sqrt(np.maximum(np.diag(covariance), 0.0) / n)),
            },
            attrs={"basis": mechanism.basis.name, "k": mechanism.k, "basis_ordering": mechanism.basis.ordering},
        )


def _floor_eigenvalues(matrix: np.ndarray, floor: float) -> np.ndarray:
    """The symmetric ``matrix`` with every eigenvalue raised to at least ``floor``."""
    values, vectors = np.linalg.eigh((matrix + matrix.T) / 2)
    return (vectors * np.maximum(values, floor)) @ vectors.T
