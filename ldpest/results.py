"""Labelled results: every estimator's output becomes one xarray.Dataset schema.

Plugins return plain arrays (:class:`EstimateParts`); only the core builds
the Dataset, so every result has the schema of DESIGN.md ("Results").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import xarray as xr
from scipy import stats as _stats

from ._version import __version__
from .errors import DataError, ParameterError


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


def build_dataset(parts: EstimateParts, *, mechanism, estimator, n: int) -> xr.Dataset:
    data_vars = {
        parts.variable: (parts.dims, np.asarray(parts.estimate, dtype=np.float64)),
        "stderr": (parts.dims, np.asarray(parts.stderr, dtype=np.float64)),
    }
    if parts.unprojected is not None:
        data_vars["unprojected"] = (parts.dims, np.asarray(parts.unprojected, dtype=np.float64))
    for name, (dims, values) in parts.extra.items():
        data_vars[name] = (dims, np.asarray(values))
    coords = {dim: values for dim, values in parts.coords.items()}
    for dim, edges in parts.bounds.items():
        data_vars[f"{dim}_bounds"] = ((dim, "bounds"), np.asarray(edges, dtype=np.float64))
    ds = xr.Dataset(data_vars, coords=coords)
    for dim in parts.bounds:
        ds[dim].attrs["bounds"] = f"{dim}_bounds"
    ds[parts.variable].attrs["description"] = (
        f"{parts.variable} estimate" + (f" after {parts.projection} projection" if parts.projection != "none" else "")
    )
    ds["stderr"].attrs["description"] = "analytic standard error of the unbiased (unprojected) estimate"
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
    return ds


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
    """Add ``lower`` and ``upper`` (Wald intervals at ``level``) to a result.

    The interval is centred on the unbiased unprojected estimate (projected
    estimates have no simple exact standard error, MATH-DERIVATIONS.md
    section 6) and is not clipped.
    """
    if not (isinstance(level, float | int) and 0 < level < 1):
        raise ParameterError(f"level must be in (0, 1), got {level!r}")
    name = estimate_variable(result)
    centre = result["unprojected"] if "unprojected" in result else result[name]
    z = float(_stats.norm.ppf(0.5 + level / 2))
    out = result.copy()
    out["lower"] = centre - z * result["stderr"]
    out["upper"] = centre + z * result["stderr"]
    for bound in ("lower", "upper"):
        out[bound].attrs = {"description": f"{bound} end of the {level:.0%} Wald interval of {name}"}
    out.attrs["confidence_level"] = float(level)
    return out
