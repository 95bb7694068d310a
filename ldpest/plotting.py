"""Pictures of results and studies (matplotlib, the ``plot`` extra).

* multinomial: bars with confidence intervals;
* 1-D density: a line (step for histograms) with a confidence band;
* 2-D density: a heat map over the cells;
* a study (``ldpest simulate``): error against n, one line per epsilon, beside the theoretical slope.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .contract.results import confidence_interval, estimate_variable
from .util.atomic import atomic_path
from .util.errors import ParameterError
from .util.xarray import xr


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise ParameterError("plotting needs matplotlib: pip install 'ldpest[plot]'") from None
    return plt


def _title(result: xr.Dataset) -> str:
    return (f"{result.attrs.get('estimator', '')} from {result.attrs.get('mechanism', '')}, "
            f"epsilon = {result.attrs.get('epsilon')}, n = {result.attrs.get('n')}")


def _picture_path(output) -> Path:
    output = Path(output)
    if output.suffix.lower() not in (".png", ".pdf"):
        raise ParameterError(f"{output}: plots are written as .png or .pdf")
    return output


def _save(fig, output: Path, dpi: int) -> None:
    """Write ``fig`` to ``output`` atomically and close it."""
    try:
        with atomic_path(output) as tmp:
            fig.savefig(tmp, format=output.suffix.lower().lstrip("."), dpi=dpi)
    finally:
        _pyplot().close(fig)


def plot_result(result: xr.Dataset, output, level: float = 0.95) -> None:
    """Draw ``result`` to ``output`` (.png or .pdf), atomically."""
    output = _picture_path(output)
    _save(draw_result(result, level), output, dpi=120)


def _edges(result: xr.Dataset, dim: str):
    bounds = f"{dim}_bounds"
    if bounds not in result:
        return None
    cells = result[bounds].values
    return np.append(cells[:, 0], cells[-1, 1])


def _label(result: xr.Dataset, variable: str) -> str:
    units = result[variable].attrs.get("units")
    return f"{variable} [{units}]" if units and units != "1" else variable


def draw_result(result: xr.Dataset, level: float = 0.95):
    """The figure of a result (returned, for callers who add to it).  Every band or whisker is the
    interval of the estimate it is drawn around, and the legend says which (``lower.attrs``):

    * a single estimate (0-d, e.g. a mean) or a few points (quantiles): points with whiskers;
    * probabilities (labelled categories): bars of the estimate, whiskers on the estimate the
      intervals describe;
    * 1-D densities and CDFs: the estimate as a line (histograms: constant over each cell, from edge
      to edge) and, when the intervals describe another estimate (the unprojected one), that one
      dashed inside its band;
    * 2-D densities: a heat map with the first coordinate on x, beside the standard errors, and
      cells whose interval contains 0 marked.
    """
    plt = _pyplot()
    name = estimate_variable(result)
    with_ci = confidence_interval(result, level)
    dims = result[name].dims
    covers = with_ci["lower"].attrs["estimate"]
    band_label = f"{covers}, {level:.0%} interval ({with_ci['lower'].attrs['method']})"
    projection = result.attrs.get("projection", "none")
    estimate_label = f"{name} ({projection} projection)" if projection != "none" else name
    if len(dims) > 2:
        raise ParameterError(f"cannot plot a {len(dims)}-dimensional result; select a slice first")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5)) if len(dims) == 2 else plt.subplots(figsize=(7, 4.5))
    ax = axes[0] if len(dims) == 2 else axes
    if len(dims) == 2:
        _draw_map(fig, ax, axes[1], with_ci, name, level)
    elif not dims or name == "quantile" or with_ci[name].size == 1 or with_ci[dims[0]].dtype.kind not in "iuf":
        _draw_points(ax, with_ci, name, covers, estimate_label, band_label)
    else:
        _draw_curve(ax, with_ci, name, covers, estimate_label, band_label)
    ax.set_title(_title(result), fontsize=9)
    fig.tight_layout()
    return fig


def _draw_points(ax, ds: xr.Dataset, name: str, covers: str, estimate_label: str, band_label: str) -> None:
    """Bars (categories) or points (a single estimate, quantiles), with whiskers on ``covers``."""
    dims = ds[name].dims
    labels = [str(v) for v in ds[dims[0]].values] if dims else [name]
    at = np.arange(len(labels))
    estimate, centre = np.atleast_1d(ds[name].values), np.atleast_1d(ds[covers].values)
    whiskers = [centre - np.atleast_1d(ds["lower"].values), np.atleast_1d(ds["upper"].values) - centre]
    if name == "probability":
        ax.bar(at, estimate, color="#4878a8", label=estimate_label)
    elif covers != name:
        ax.plot(at, estimate, "s", color="#4878a8", ms=6, label=f"{estimate_label} (no interval of its own)")
    ax.errorbar(at, centre, yerr=whiskers, fmt="o", color="black", ms=4, capsize=5,
                label=band_label if covers != name else f"{estimate_label}; {band_label}")
    ax.set_xticks(at, labels)
    ax.set_xlabel(dims[0] if dims else "")
    ax.set_ylabel(_label(ds, name))
    if not dims:
        ax.set_xlim(-1, 1)
    ax.legend(fontsize=8)


def _draw_curve(ax, ds: xr.Dataset, name: str, covers: str, estimate_label: str, band_label: str) -> None:
    """A line (or steps over cells) of the estimate, and the band of ``covers`` around it."""
    dim = ds[name].dims[0]
    x, edges = ds[dim].values, _edges(ds, dim)
    lower, upper = ds["lower"].values, ds["upper"].values
    if edges is not None:  # a histogram: constant on each cell
        ax.stairs(ds[name].values, edges, baseline=None, color="#4878a8", lw=2, label=estimate_label)
        if covers != name:
            ax.stairs(ds[covers].values, edges, baseline=None, color="black", ls="--", lw=1, label=covers)
        ax.fill_between(edges, np.append(lower, lower[-1]), np.append(upper, upper[-1]), step="post",
                        alpha=0.2, color="black", label=band_label)
    else:
        ax.plot(x, ds[name].values, color="#4878a8", lw=2, label=estimate_label)
        if covers != name:
            ax.plot(x, ds[covers].values, color="black", ls="--", lw=1, label=covers)
        ax.fill_between(x, lower, upper, alpha=0.2, color="black", label=band_label)
    ax.set_xlabel(_label(ds, dim) if "units" in ds[dim].attrs else dim)
    ax.set_ylabel(_label(ds, name))
    ax.legend(fontsize=8)


def _draw_map(fig, ax, ax_err, ds: xr.Dataset, name: str, level: float) -> None:
    """A heat map of a 2-D estimate beside its standard errors; cells whose interval holds 0 marked."""
    xdim, ydim = ds[name].dims  # the first coordinate (first input column) on x
    values = ds[name].transpose(ydim, xdim).values
    errors = ds["stderr"].transpose(ydim, xdim).values
    xe, ye = _edges(ds, xdim), _edges(ds, ydim)
    if xe is None or ye is None:
        xe, ye = ds[xdim].values, ds[ydim].values
    mesh = ax.pcolormesh(xe, ye, values, cmap="viridis")
    fig.colorbar(mesh, ax=ax, label=_label(ds, name))
    touches_zero = (ds["lower"] <= 0).transpose(ydim, xdim).values
    if touches_zero.any() and _edges(ds, xdim) is not None:
        centres_x = (xe[:-1] + xe[1:]) / 2
        centres_y = (ye[:-1] + ye[1:]) / 2
        rows, cols = np.nonzero(touches_zero)
        ax.plot(centres_x[cols], centres_y[rows], "x", color="white", ms=4,
                label=f"{level:.0%} interval of {ds['lower'].attrs['estimate']} contains 0")
        ax.legend(fontsize=7, loc="upper right")
    mesh_err = ax_err.pcolormesh(xe, ye, errors, cmap="magma")
    fig.colorbar(mesh_err, ax=ax_err, label=f"standard error ({ds['stderr'].attrs.get('estimate', name)})")
    for axis in (ax, ax_err):
        axis.set_xlabel(xdim)
        axis.set_ylabel(ydim)
    ax_err.set_title("standard error of each cell", fontsize=9)


def plot_study(study: xr.Dataset, output) -> None:
    """Log-log plot of mean error against n, one line per epsilon, with the theoretical slope."""
    output = _picture_path(output)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ns = study["n"].values.astype(float)
    slope = study.attrs.get("theoretical_slope")
    for epsilon in study["epsilon"].values:
        row = study.sel(epsilon=epsilon)
        line = ax.errorbar(ns, row["mean_error"], yerr=2 * row["stderr_error"], fmt="o-", ms=4, capsize=3,
                           label=f"epsilon = {epsilon:g}: mean over reps, bars +-2 standard errors")
        if slope is not None:
            anchor = float(row["mean_error"][0])
            ax.plot(ns, anchor * (ns / ns[0]) ** slope, "--", color=line[0].get_color(), alpha=0.6)
    if slope is not None:
        ax.plot([], [], "k--", alpha=0.6, label=f"theory: slope {slope:g}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n")
    ax.set_ylabel(study.attrs["metric"])
    ax.set_title(f"{study.attrs['estimator']} from {study.attrs['mechanism']} "
                 f"({study.attrs['simulation']}, {study.attrs['reps']} reps)", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    _save(fig, output, dpi=110)
