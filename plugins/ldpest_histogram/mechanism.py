"""The partition the histogram mechanisms share, and ``laplace-histogram`` (MATH.md section 2)."""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from ldpest import DataDroppedWarning, DataError, Mechanism, ParameterError
from ldpest.privacy.noise import LatticeLaplace
from ldpest.stats.partition import CubicPartition
from ldpest.util.validation import (
    check_epsilon,
    check_finite,
    check_positive_int,
    check_positive_real,
    check_report_matrix,
    numeric_data,
)

from . import tuning


def _sequence(name: str, value) -> list[float]:
    values = [value] if isinstance(value, numbers.Real) and not isinstance(value, bool) else value
    try:
        values = [float(v) for v in values]
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number or a list of numbers, got {value!r}") from None
    if not values or not all(math.isfinite(v) for v in values):
        raise ParameterError(f"{name} must be finite numbers, got {value!r}")
    return values


PARTITION_HELP = {"low": "a box partition: the lower corner, one number per dimension",
                  "high": "a box partition: the upper corner, one number per dimension",
                  "bins": "cells per dimension: an integer, a list of d integers, or 'auto' with expected_n",
                  "radius": "a ball partition: the radius of the ball whose cells are kept (with h)",
                  "h": "a ball partition: the side of the cubic cells, or 'auto' with expected_n",
                  "d": "a ball partition: the dimension",
                  "center": "a ball partition: the centre of the ball (default the origin)",
                  "expected_n": "the number of reports an 'auto' size is tuned for",
                  "names": "the names of the dimensions (the input columns), for the result's dims"}


class PartitionMechanism(Mechanism):
    """A mechanism over the cells of a cubic partition (:class:`ldpest.stats.partition.CubicPartition`) of
    a box (``low``, ``high``, ``bins``) or of the cells meeting a ball (``radius``, ``h``, ``d``,
    ``center``); ``names`` the d input names used as result dims.  Subclasses call
    :meth:`_set_partition` and privatise the cell numbers that :meth:`locate_cells` gives."""

    family = "histogram"
    default_estimator = "histogram-cdf"

    def _set_partition(self, params: dict, *, low, high, bins, radius, h, d, center, expected_n, names) -> dict:
        """Validate the partition parameters, build the partition and add them to ``params``."""
        epsilon = params["epsilon"]
        if expected_n is not None:
            params["expected_n"] = expected_n = check_positive_int("expected_n", expected_n)
        box = low is not None or high is not None or bins is not None
        ball = radius is not None or h is not None
        if box == ball:
            raise ParameterError(f"{self.name} needs either low, high and bins (a box) or radius and h (a ball)")
        if box:
            if low is None or high is None or bins is None:
                raise ParameterError("a box partition needs low, high and bins")
            low, high = _sequence("low", low), _sequence("high", high)
            if len(low) != len(high):
                raise ParameterError(f"low and high must have the same length, got {len(low)} and {len(high)}")
            if any(a >= b for a, b in zip(low, high, strict=True)):
                raise ParameterError(f"every low must be below its high, got low={low}, high={high}")
            dim = len(low)
            counts = self._resolve_bins(bins, dim, epsilon, expected_n, low, high)
            params.update(low=low, high=high, bins=bins if isinstance(bins, str) else counts)
            partition = CubicPartition.box(low, high, counts)
        else:
            if radius is None or h is None:
                raise ParameterError("a ball partition needs radius and h")
            radius = check_positive_real("radius", radius)
            if center is not None:
                center = _sequence("center", center)
            dim = len(center) if center is not None else check_positive_int("d", d if d is not None else 1)
            if d is not None and check_positive_int("d", d) != dim:
                raise ParameterError(f"d={d} does not match center of length {dim}")
            if h == "auto":
                if expected_n is None:
                    raise ParameterError('h="auto" needs expected_n')
                side = tuning.gyorfi_kroll_h(expected_n, epsilon, radius, dim)
            else:
                side = check_positive_real("h", h)
            params.update(radius=radius, h=h if h == "auto" else side, d=dim)
            if center is not None:
                params["center"] = center
            partition = CubicPartition.ball(radius, side, dim, center)
        if names is not None:
            if isinstance(names, str) or len(names) != dim or not all(isinstance(n, str) and n for n in names):
                raise ParameterError(f"names must be {dim} non-empty strings, got {names!r}")
            if len(set(names)) != dim:
                raise ParameterError(f"names must be distinct, got {names!r}")
            params["names"] = list(names)
        self._partition = partition
        return params

    @staticmethod
    def _resolve_bins(bins, dim, epsilon, expected_n, low, high) -> list[int]:
        if bins == "auto":
            if expected_n is None:
                raise ParameterError('bins="auto" needs expected_n')
            if dim == 1:
                return [tuning.duchi_bins(expected_n, epsilon)]
            # each axis in its own units: the rule on the unit cube (radius 1/2), so rescaling one
            # axis (metres to millimetres) changes nothing
            side = tuning.gyorfi_kroll_h(expected_n, epsilon, 0.5, dim)
            return [max(1, math.ceil(1.0 / side))] * dim
        if isinstance(bins, numbers.Integral) and not isinstance(bins, bool):
            return [check_positive_int("bins", bins)] * dim
        if isinstance(bins, (list, tuple)) and len(bins) == dim:
            return [check_positive_int("bins", b) for b in bins]
        raise ParameterError(f"bins must be an int, a list of {dim} ints or 'auto', got {bins!r}")

    # -- geometry --------------------------------------------------------------
    @property
    def partition(self) -> CubicPartition:
        return self._partition

    @property
    def d(self) -> int:
        return self._partition.d

    @property
    def dims(self) -> list[str]:
        return self._params.get("names") or [f"x{i + 1}" for i in range(self.d)]

    def locate_cells(self, data) -> np.ndarray:
        """The cell number (0..N-1) of every point of ``data`` ((n, d) numbers, or 1-D when d = 1), -1 for
        points outside every cell; a DataError for anything else."""
        points = numeric_data(data, self.name)
        if points.ndim == 1 and self.d == 1:
            points = points[:, None]
        if points.ndim != 2 or points.shape[1] != self.d:
            width = points.shape[1] if points.ndim == 2 else points.ndim
            raise DataError(f"data has {width} column(s) but the partition is {self.d}-dimensional")
        check_finite("data", points)
        return self._partition.locate(points)

    def cell_probabilities(self, sample: np.ndarray) -> np.ndarray:
        """Empirical cell masses of raw points (length N + 1: the last is outside)."""
        cells = self._partition.locate(np.asarray(sample, dtype=np.float64).reshape(-1, self.d))
        counts = np.bincount(np.where(cells < 0, self._partition.size, cells), minlength=self._partition.size + 1)
        return counts / counts.sum()


class LaplaceHistogram(PartitionMechanism):
    """One-hot indicator of the cell holding ``x``, plus Laplace noise on every cell.

    ``Z_j = 1{x in A_j} + sigma_W zeta_j`` with unit-variance Laplace ``zeta``
    and ``sigma_W = 2^(3/2) / epsilon`` (Laplace scale ``2 / epsilon``), drawn
    on a lattice (:mod:`ldpest.privacy.noise`): exactly epsilon-LDP, since one-hot
    vectors (or the zero vector, for points outside every cell) differ by at
    most 2 in l1.  A point outside every cell sends pure noise; privatise
    warns with their count (:class:`ldpest.DataDroppedWarning`).

    Parameters (keyword-only): ``epsilon``; a box ``low``, ``high`` (length d)
    with ``bins`` (int, d ints, or "auto" with ``expected_n``), or a ball
    ``radius`` with ``h`` (or "auto" with ``expected_n``), ``d`` and optional
    ``center``; ``names``: the d input names used as result dims.
    """

    parameter_help = {"epsilon": "privacy level epsilon > 0 of each report", **PARTITION_HELP}
    name = "laplace-histogram"
    example_params = {"low": [0], "high": [1], "bins": 10}
    report_dims = ("report", "cell")

    def __init__(self, *, epsilon, low=None, high=None, bins=None, radius=None, h=None, d=None,
                 center=None, expected_n=None, names=None):
        params = self._set_partition({"epsilon": check_epsilon(epsilon)}, low=low, high=high, bins=bins,
                                     radius=radius, h=h, d=d, center=center, expected_n=expected_n, names=names)
        try:
            self._set_params(**params)
        except ValueError as exc:
            raise ParameterError(str(exc)) from None
        self._noise = LatticeLaplace(self.epsilon, 2.0, on_lattice=True, one_level=True)

    @property
    def noise(self) -> LatticeLaplace:
        return self._noise

    def report_columns(self) -> list[str]:
        return [f"cell_{j}" for j in range(self._partition.size)]

    # -- client side -----------------------------------------------------------
    def encode_data(self, data) -> np.ndarray:
        cells = self.locate_cells(data)
        outside = int((cells < 0).sum())
        if outside:
            warnings.warn(
                f"{outside} of {len(cells)} points lie outside every cell; their reports carry pure noise "
                "(the estimate is of the mass inside the partition)", DataDroppedWarning, stacklevel=3)
        return cells

    def _privatize(self, cells, rng):
        return self._noise.one_hot(cells, self._partition.size, rng)

    # -- server side -----------------------------------------------------------
    def encode_reports(self, values) -> np.ndarray:
        width = self._partition.size
        values = check_report_matrix(values, width, self.name, f"{width} cells")
        return check_finite("reports", values.astype(np.float64))
