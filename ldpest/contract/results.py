"""Labelled results: every estimator's output becomes one xarray.Dataset schema.

Plugins return plain arrays (:class:`EstimateParts`); only the core builds
the Dataset, so every result has the schema of DESIGN.md ("Results").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..stats.intervals import clopper_pearson, normal_critical
from ..util.errors import DataError, ParameterError
from ..util.version import __version__
from ..util.xarray import xr


@dataclass
class EstimateParts:
    """What an estimator returns: plain arrays, labelled by the core."""

    variable: str  # "probability" or "density"
    estimate: np.ndarray
    stderr: np.ndarray  # analytic standard error of the unprojected estimate
    dims: tuple[str, ...]
    coords: dict[str, np.ndarray]
    projection: str = "none"
    unprojected: np.ndarray | None = None
    bounds: dict[str, np.ndarray] = field(default_factory=dict)  # dim -> (size, 2) edges
    extra: dict[str, tuple[tuple[str, ...], np.ndarray]] = field(default_factory=dict)
    attrs: dict = field(default_factory=dict)
    # Binomial count statistic behind an affine estimate, for exact intervals:
    # unprojected = (count / n - offset) / gap * scale, with count ~ Binomial(n, pi) per entry.
    count: np.ndarray | None = None
    count_map: tuple[float, float, float] | None = None  # (offset, gap, scale)
    # excess kurtosis of the unprojected estimate (noise sums), for the normal interval's correction
    excess_kurtosis: np.ndarray | None = None


LONG_NAMES = {  # CF-style descriptions of every variable a result may hold
    "probability": ("estimated probability of the category", "1"),
    "density": ("estimated probability density", None),
    "mass": ("estimated probability of the cell", "1"),
    "coefficient": ("estimated coefficient of the basis function", "1"),
    "coefficient_stderr": ("standard error of the estimated coefficient", "1"),
    "stderr": ("standard error of the unprojected estimate", None),
    "unprojected": ("unbiased estimate before projection", None),
    "count": ("binomial count statistic behind the estimate", "reports"),
    "excess_kurtosis": ("excess kurtosis of the unprojected estimate", "1"),
    "lower": ("lower end of the confidence interval", None),
    "upper": ("upper end of the confidence interval", None),
}


def density_units(ds: xr.Dataset, name: str) -> tuple[str, str | None]:
    """A density is per unit of its axes: "... per unit of age x income", and CF units such as
    ``1/(year kg)`` when every axis coordinate states its ``units``."""
    axes = list(ds[name].dims)
    long_name = f"estimated probability density per unit of {' x '.join(axes)}"
    units = [ds.variables[dim].attrs.get("units") if dim in ds.coords else None for dim in axes]
    if not axes or any(unit is None for unit in units):
        return long_name, None
    return long_name, f"1/{units[0]}" if len(units) == 1 else f"1/({' '.join(units)})"


def describe(ds: xr.Dataset) -> xr.Dataset:
    """Set ``long_name`` (and ``units`` where known; estimate-scaled variables share the
    estimate's) on every variable of a result."""
    name = ds.attrs.get("estimate_variable")
    scale_units = LONG_NAMES.get(name, (None, None))[1]
    if name == "density" and name in ds:
        ds.variables[name].attrs["long_name"], scale_units = density_units(ds, name)
    for variable in ds.data_vars:
        long_name, units = LONG_NAMES.get(variable, (None, None))
        if variable.endswith("_bounds"):
            long_name, units = f"edges of the {variable[:-7]} cells", ds.variables[variable[:-7]].attrs.get("units")
        if long_name is None:
            continue
        if variable != "density":
            ds.variables[variable].attrs["long_name"] = long_name
        units = units if units is not None else (scale_units if variable in ("density", "stderr", "unprojected",
                                                                             "lower", "upper") else None)
        if units is not None:
            ds.variables[variable].attrs["units"] = units
    return ds


def build_dataset(parts: EstimateParts, *, mechanism, estimator, n: int) -> xr.Dataset:
    data_vars = {
        parts.variable: (parts.dims, np.asarray(parts.estimate, dtype=np.float64)),
        "stderr": (parts.dims, np.asarray(parts.stderr, dtype=np.float64)),
    }
    if parts.unprojected is not None:
        data_vars["unprojected"] = (parts.dims, np.asarray(parts.unprojected, dtype=np.float64))
    for name, (dims, values) in parts.extra.items():
        data_vars[name] = (dims, np.asarray(values))
    if parts.count is not None:
        data_vars["count"] = (parts.dims, np.asarray(parts.count, dtype=np.int64))
    if parts.excess_kurtosis is not None:
        data_vars["excess_kurtosis"] = (parts.dims, np.asarray(parts.excess_kurtosis, dtype=np.float64))
    coords = dict(parts.coords.items())
    for dim, edges in parts.bounds.items():
        data_vars[f"{dim}_bounds"] = ((dim, "bounds"), np.asarray(edges, dtype=np.float64))
    ds = xr.Dataset(data_vars, coords=coords)
    for dim in parts.bounds:
        ds.variables[dim].attrs["bounds"] = f"{dim}_bounds"
    ds.variables[parts.variable].attrs["description"] = (
        f"{parts.variable} estimate" + (f" after {parts.projection} projection" if parts.projection != "none" else "")
    )
    ds.variables["stderr"].attrs["description"] = (
        "analytic standard error of the unbiased (unprojected) estimate, evaluated at the estimate "
        "moved into its feasible range (never 0; docs/privacy.md, 'Standard errors and intervals')")
    if parts.count is not None:
        offset, gap, scale = parts.count_map
        ds.variables["count"].attrs.update({
            "description": "binomial count behind the estimate: unprojected = (count / n - count_offset) / "
                           "count_gap * count_scale; exact (Clopper-Pearson) intervals use it"})
        ds.attrs.update({"count_offset": float(offset), "count_gap": float(gap), "count_scale": float(scale)})
    if parts.excess_kurtosis is not None:
        ds.variables["excess_kurtosis"].attrs["description"] = (
            "excess kurtosis of the unprojected estimate; the normal interval's critical value is corrected for it")
    ds.attrs.update(
        {
            "mechanism": mechanism.name,
            "estimator": estimator.name,
            "epsilon": mechanism.epsilon,
            "n": int(n),
            "projection": parts.projection,
            "mechanism_spec": mechanism.spec_json,
            "estimator_spec": estimator.spec_json,
            "estimate_variable": parts.variable,
            "ldpest_version": __version__,
            **parts.attrs,
        }
    )
    return describe(ds)


def estimate_variable(result: xr.Dataset) -> str:
    name = result.attrs.get("estimate_variable")
    if name in result:
        return name
    for candidate in ("probability", "density"):
        if candidate in result:
            return candidate
    if "reports" in result:
        raise DataError("this is a report file, not a result: run `ldpest estimate` on it first")
    raise DataError("not an ldpest result: it holds neither 'probability' nor 'density'")


def confidence_interval(result: xr.Dataset, level: float = 0.95) -> xr.Dataset:
    """Add ``lower`` and ``upper`` (intervals for the truth at ``level``) to a result.

    * Estimates that are affine in a binomial count (randomized response,
      unary encodings, ``histogram-cdf``; the result holds ``count``): the
      exact Clopper-Pearson interval for the count's probability, mapped
      through the affine debiasing.  Coverage is at least ``level`` for every
      truth and every n, including n = 1 and truths on the boundary.
    * Otherwise (sums with Laplace noise, series): ``estimate +- c * stderr``
      with ``c = max(z, Cornish-Fisher z)`` corrected for the estimate's
      ``excess_kurtosis`` when the result holds it (Laplace noise has heavier
      tails than the normal at small n).

    Intervals are centred on (or mapped from) the unbiased unprojected
    estimate and are not clipped to the feasible range.
    """
    if isinstance(level, bool) or not (isinstance(level, float | int) and 0 < level < 1):
        raise ParameterError(f"level must be in (0, 1), got {level!r}")
    name = estimate_variable(result)
    centre = result["unprojected"] if "unprojected" in result else result[name]
    out = result.copy()
    if "count" in result and {"count_offset", "count_gap", "count_scale"} <= set(result.attrs):
        lower, upper = _count_interval(result, level)
        out["lower"] = centre.copy(data=lower)
        out["upper"] = centre.copy(data=upper)
        method = "exact (Clopper-Pearson on the binomial count)"
    else:
        critical = normal_critical(level, result["excess_kurtosis"] if "excess_kurtosis" in result else None)
        out["lower"] = centre - critical * result["stderr"]
        out["upper"] = centre + critical * result["stderr"]
        method = "normal" + (", kurtosis-corrected" if "excess_kurtosis" in result else "")
    for bound in ("lower", "upper"):
        out[bound].attrs = {"description": f"{bound} end of the {level:.0%} {method} interval of {name}"}
    out.attrs["confidence_level"] = float(level)
    out.attrs["interval_method"] = method
    return describe(out)


def _count_interval(result: xr.Dataset, level: float) -> tuple[np.ndarray, np.ndarray]:
    """The Clopper-Pearson interval of the count's probability, mapped through the affine debiasing."""
    low, high = clopper_pearson(result["count"].values, int(result.attrs["n"]), level)
    offset, gap, scale = (result.attrs[k] for k in ("count_offset", "count_gap", "count_scale"))
    ends = np.stack([(low - offset) / gap * scale, (high - offset) / gap * scale])
    return ends.min(axis=0), ends.max(axis=0)  # a negative gap reverses the map
