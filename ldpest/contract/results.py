"""Labelled results: every estimator's output becomes one xarray.Dataset schema.

Plugins return plain arrays (:class:`EstimateParts`); only the core builds the Dataset, so every
result has the schema of DESIGN.md ("Results"): the estimate (``probability``, ``density``,
``mean``, ``variance``, ``quantile``, ``cdf`` or a plugin's own statistic, 0-d or labelled), its
``stderr``, which says in its attributes which estimate it describes and how it was computed, and
after :func:`confidence_interval` ``lower`` and ``upper``, which say the same.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from ..stats.intervals import clopper_pearson, normal_critical
from ..util.errors import DataError, LdpestError, ParameterError
from ..util.version import __version__
from ..util.xarray import xr
from .assembly import assemble_dataset


@dataclass
class EstimateParts:
    """What an estimator returns: plain arrays, labelled by the core (docs/plugin-author-guide.md,
    "An estimator", has a table of every field)."""

    variable: str  # the statistic: "probability", "density", "mean", "variance", "quantile", "cdf" or a plugin's own
    estimate: np.ndarray  # shape given by dims; a 0-d array (a single mean) has dims ()
    stderr: np.ndarray  # standard error of the estimate named by uncertainty_of
    dims: tuple[str, ...] = ()
    coords: dict[str, np.ndarray] = field(default_factory=dict)
    projection: str = "none"
    unprojected: np.ndarray | None = None  # the linear unbiased estimate, where the estimate is a projection of it
    bounds: dict[str, np.ndarray] = field(default_factory=dict)  # dim -> (size, 2) edges
    extra: dict[str, tuple[tuple[str, ...], np.ndarray]] = field(default_factory=dict)
    attrs: dict = field(default_factory=dict)
    # Binomial count statistic behind an affine estimate, for exact intervals:
    # unprojected = (count / n - offset) / gap * scale, with count ~ Binomial(n, pi) per entry.
    count: np.ndarray | None = None
    count_map: tuple[float, float, float] | None = None  # (offset, gap, scale)
    # excess kurtosis of the unprojected estimate (noise sums), for the normal interval's correction
    excess_kurtosis: np.ndarray | None = None
    long_name: str | None = None  # what the estimate is, e.g. "estimated mean of latency"; a default for known names
    units: str | None = None  # CF units of the estimate, e.g. "ms"; stderr, lower and upper share them
    uncertainty_of: str | None = None  # the variable stderr and the intervals describe: unprojected, else the estimate
    stderr_method: str = "analytic"  # how stderr was computed: analytic, exact, observed information, bootstrap, ...


LONG_NAMES = {  # CF-style descriptions of the variables a result may hold, with their units where fixed
    "probability": ("estimated probability of the category", "1"),
    "density": ("estimated probability density", None),
    "mean": ("estimated mean", None),
    "variance": ("estimated variance", None),
    "quantile": ("estimated quantile", None),
    "cdf": ("estimated cumulative distribution function", "1"),
    "mass": ("estimated probability of the cell", "1"),
    "coefficient": ("estimated coefficient of the basis function", "1"),
    "coefficient_stderr": ("standard error of the estimated coefficient", "1"),
    "unprojected": ("unbiased estimate before projection", None),
    "count": ("binomial count statistic behind the estimate", "reports"),
    "positive_count": ("reports in the category's own symbols (Hadamard response)", "reports"),
    "block_count": ("reports in the category's block of symbols (Hadamard response)", "reports"),
    "excess_kurtosis": ("excess kurtosis of the unprojected estimate", "1"),
}
SCALED = ("stderr", "unprojected", "lower", "upper")  # variables in the estimate's units


def density_units(ds: xr.Dataset, name: str) -> tuple[str, str | None]:
    """A density is per unit of its axes: "... per unit of age x income", and CF units such as
    ``1/(year kg)`` when every axis coordinate states its ``units``."""
    axes = list(ds.variables[name].dims)
    long_name = f"estimated probability density per unit of {' x '.join(axes)}"
    units = [ds.variables[dim].attrs.get("units") if dim in ds.coords else None for dim in axes]
    if not axes or any(unit is None for unit in units):
        return long_name, None
    return long_name, f"1/{units[0]}" if len(units) == 1 else f"1/({' '.join(units)})"


def describe(ds: xr.Dataset) -> xr.Dataset:
    """Set ``long_name`` (and ``units`` where known) on every variable of a result: the estimate's
    from its estimator (or the defaults of :data:`LONG_NAMES`; a density's from its axes), and
    the uncertainty variables in the estimate's units."""
    name = ds.attrs.get("estimate_variable")
    variables = ds.variables  # a new mapping on every access: read once
    estimate_units = None
    if name in ds:
        attrs = variables[name].attrs
        if name == "density":
            attrs["long_name"], estimate_units = density_units(ds, name)
        else:
            attrs.setdefault("long_name", LONG_NAMES.get(name, (f"estimated {name}", None))[0])
            estimate_units = attrs.get("units", LONG_NAMES.get(name, (None, None))[1])
        if estimate_units is not None:
            attrs["units"] = estimate_units
    uncertain = uncertainty_of(ds) if name in ds else None
    for variable in ds.data_vars:
        attrs = variables[variable].attrs
        long_name, units = LONG_NAMES.get(variable, (None, None))
        if variable.endswith("_bounds"):
            long_name, units = f"edges of the {variable[:-7]} cells", variables[variable[:-7]].attrs.get("units")
        elif variable == "stderr":
            long_name = f"standard error of the {uncertain} estimate" if uncertain != name else "standard error"
        elif variable in ("lower", "upper"):
            long_name = f"{variable} end of the confidence interval"
        if variable == name or long_name is None:
            continue
        attrs["long_name"] = long_name
        if variable in SCALED and estimate_units is not None:
            units = estimate_units
        if units is not None:
            attrs["units"] = units
    return ds


def build_dataset(parts: EstimateParts, *, mechanism, estimator, n: int) -> xr.Dataset:
    if parts.uncertainty_of not in (None, parts.variable, "unprojected"):
        raise ParameterError(f"{estimator.name}: uncertainty_of must name the estimate ({parts.variable!r}) or "
                             f"'unprojected', got {parts.uncertainty_of!r}")
    uncertain = parts.uncertainty_of or ("unprojected" if parts.unprojected is not None else parts.variable)
    if uncertain == "unprojected" and parts.unprojected is None:
        raise ParameterError(f"{estimator.name}: stderr describes 'unprojected', but the parts hold no unprojected")
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
    coords = dict(parts.coords)
    for dim, edges in parts.bounds.items():
        data_vars[f"{dim}_bounds"] = ((dim, "bounds"), np.asarray(edges, dtype=np.float64))
    ds = assemble_dataset(data_vars, coords)
    for dim in parts.bounds:
        ds.variables[dim].attrs["bounds"] = f"{dim}_bounds"
    estimate_attrs = ds.variables[parts.variable].attrs
    estimate_attrs["description"] = (
        f"{parts.variable} estimate" + (f" after {parts.projection} projection" if parts.projection != "none" else ""))
    if parts.long_name is not None:
        estimate_attrs["long_name"] = parts.long_name
    if parts.units is not None:
        estimate_attrs["units"] = parts.units
    ds.variables["stderr"].attrs.update({
        "estimate": uncertain, "method": parts.stderr_method,
        "description": f"{parts.stderr_method} standard error of the {uncertain} estimate"
                       + (" (never 0; docs/privacy.md, 'Standard errors and intervals')"
                          if parts.stderr_method == "analytic" else "")})
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
    """The name of a result's estimate (``attrs["estimate_variable"]``)."""
    name = result.attrs.get("estimate_variable")
    if name in result:
        return name
    for candidate in ("probability", "density"):  # results written before the attribute existed
        if candidate in result:
            return candidate
    if "reports" in result:
        raise DataError("this is a report file, not a result: run `ldpest estimate` on it first")
    raise DataError("not an ldpest result: it names no estimate variable (attrs['estimate_variable'])")


def uncertainty_of(result: xr.Dataset) -> str:
    """The variable that ``stderr`` (and ``lower``/``upper``) describe: its ``estimate`` attribute,
    else, in results written before it existed, ``unprojected`` where there is one."""
    stderr = result.variables.get("stderr")
    if stderr is not None and stderr.attrs.get("estimate") in result:
        return stderr.attrs["estimate"]
    return "unprojected" if "unprojected" in result else estimate_variable(result)


def confidence_interval(result: xr.Dataset, level: float = 0.95) -> xr.Dataset:
    """Add ``lower`` and ``upper`` (intervals for the truth at ``level``) to a result.

    The intervals are those of the estimate that ``stderr`` describes (:func:`uncertainty_of`),
    and each says so in its attributes (``estimate``, ``method``, ``level``):

    * the estimator's own, when it provides them (``Estimator.interval``: profile likelihood,
      bootstrap, exact...);
    * else, for estimates affine in a binomial count (randomized response, unary encodings,
      ``histogram-cdf``; the result holds ``count``): the exact Clopper-Pearson interval for the
      count's probability, mapped through the affine debiasing.  Coverage is at least ``level``
      for every truth and every n, including n = 1 and truths on the boundary;
    * else ``estimate +- c * stderr`` with ``c = max(z, Cornish-Fisher z)`` corrected for the
      estimate's ``excess_kurtosis`` when the result holds it (Laplace noise has heavier tails
      than the normal at small n).

    Intervals are not clipped to the feasible range.
    """
    if isinstance(level, bool) or not (isinstance(level, float | int) and 0 < level < 1):
        raise ParameterError(f"level must be in (0, 1), got {level!r}")
    if not isinstance(result, xr.Dataset):
        first = ": estimate the reports first" if hasattr(result, "mechanism") else ""
        raise ParameterError(f"confidence_interval takes a result (the xarray.Dataset of ldpest.estimate), got "
                             f"{type(result).__name__}{first}")
    name = estimate_variable(result)
    target = uncertainty_of(result)
    centre = result[target]
    out = result.drop_vars(["lower", "upper"], errors="ignore")
    own = _estimator_interval(result, level)
    if own is not None:
        lower, upper, method = own
    elif target == "unprojected" and "count" in result and {"count_offset", "count_gap",
                                                             "count_scale"} <= set(result.attrs):
        lower, upper = _count_interval(result, level)
        method = "exact (Clopper-Pearson on the binomial count)"
    else:
        critical = normal_critical(level, result["excess_kurtosis"] if "excess_kurtosis" in result else None)
        lower = (centre - critical * result["stderr"]).values
        upper = (centre + critical * result["stderr"]).values
        method = "normal" + (", kurtosis-corrected" if "excess_kurtosis" in result else "")
    out["lower"] = centre.copy(data=np.asarray(lower, dtype=np.float64))
    out["upper"] = centre.copy(data=np.asarray(upper, dtype=np.float64))
    for bound in ("lower", "upper"):
        out[bound].attrs = {"estimate": target, "method": method, "level": float(level),
                            "description": f"{bound} end of the {level:.0%} {method} interval of {target}"}
    out.attrs["confidence_level"] = float(level)
    out.attrs["interval_method"] = method
    out.attrs["interval_estimate"] = target
    if target != name:
        out.attrs["interval_note"] = f"the intervals are those of {target}, not of the {name} estimate"
    return describe(out)


def _estimator_interval(result: xr.Dataset, level: float):
    """``(lower, upper, method)`` from the result's estimator when it provides its own intervals."""
    spec = result.attrs.get("estimator_spec")
    if not spec:
        return None
    from .registry import estimator_from_spec

    try:
        estimator = estimator_from_spec(json.loads(spec))
    except (LdpestError, ValueError):
        return None  # not installed here: ldpest's default intervals from the stderr it wrote
    return estimator.interval(result, level)


def _count_interval(result: xr.Dataset, level: float) -> tuple[np.ndarray, np.ndarray]:
    """The Clopper-Pearson interval of the count's probability, mapped through the affine debiasing."""
    low, high = clopper_pearson(result["count"].values, int(result.attrs["n"]), level)
    offset, gap, scale = (result.attrs[k] for k in ("count_offset", "count_gap", "count_scale"))
    ends = np.stack([(low - offset) / gap * scale, (high - offset) / gap * scale])
    return ends.min(axis=0), ends.max(axis=0)  # a negative gap reverses the map
