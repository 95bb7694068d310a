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


def draw_result(result: xr.Dataset, level: float = 0.95):
    """The figure of a result (returned, for callers who add to it):

    * probabilities: bars of the (projected) estimate, and the unprojected estimate with its interval;
    * 1-D densities: the estimate as a line (histograms: constant over each cell, from edge to edge)
      and the unprojected estimate dashed inside its interval band, each labelled;
    * 2-D densities: a heat map with the first coordinate on x, beside the standard errors, and
      cells whose interval contains 0 marked.
    """
    plt = _pyplot()
    name = estimate_variable(result)
    with_ci = confidence_interval(result, level)
    dims = result[name].dims
    projection = result.attrs.get("projection", "none")
    centre = with_ci["unprojected"] if "unprojected" in result else with_ci[name]
    band_label = f"unprojected, {level:.0%} interval ({with_ci.attrs.get('interval_method', '')})"
    if len(dims) == 2:
        fig, (ax, ax_err) = plt.subplots(1, 2, figsize=(11, 4.5))
    else:
        fig, ax = plt.subplots(figsize=(7, 4.5))
    if len(dims) == 1 and name == "probability":
        labels = [str(v) for v in result[dims[0]].values]
        ax.bar(labels, with_ci[name].values, color="#4878a8", label=f"{name} ({projection} projection)")
        whiskers = [(centre - with_ci["lower"]).values, (with_ci["upper"] - centre).values]
        ax.errorbar(labels, centre.values, yerr=whiskers,
                    fmt="o", color="black", ms=3, capsize=4, label=band_label)
        ax.set_ylabel("probability")
        ax.set_xlabel(dims[0])
        ax.legend(fontsize=8)
    elif len(dims) == 1:
        x, edges = result[dims[0]].values, _edges(result, dims[0])
        estimate_label = f"{name} ({projection} projection)" if projection != "none" else name
        if edges is not None:  # a histogram: constant on each cell
            ax.stairs(with_ci[name].values, edges, baseline=None, color="#4878a8", lw=2, label=estimate_label)
            ax.stairs(centre.values, edges, baseline=None, color="black", ls="--", lw=1, label="unprojected")
            ax.fill_between(edges, np.append(with_ci["lower"].values, with_ci["lower"].values[-1]),
                            np.append(with_ci["upper"].values, with_ci["upper"].values[-1]), step="post",
                            alpha=0.2, color="black", label=band_label)
        else:
            ax.plot(x, with_ci[name].values, color="#4878a8", lw=2, label=estimate_label)
            ax.plot(x, centre.values, color="black", ls="--", lw=1, label="unprojected")
            ax.fill_between(x, with_ci["lower"].values, with_ci["upper"].values, alpha=0.2, color="black",
                            label=band_label)
        ax.set_xlabel(dims[0])
        ax.set_ylabel(name)
        ax.legend(fontsize=8)
    elif len(dims) == 2:
        xdim, ydim = dims  # the first coordinate (first input column) on x
        values = with_ci[name].transpose(ydim, xdim).values
        errors = with_ci["stderr"].transpose(ydim, xdim).values
        xe, ye = _edges(result, xdim), _edges(result, ydim)
        if xe is None or ye is None:
            xe, ye = result[xdim].values, result[ydim].values
        mesh = ax.pcolormesh(xe, ye, values, cmap="viridis")
        fig.colorbar(mesh, ax=ax, label=name)
        touches_zero = (with_ci["lower"] <= 0).transpose(ydim, xdim).values
        if touches_zero.any() and _edges(result, xdim) is not None:
            centres_x = (xe[:-1] + xe[1:]) / 2
            centres_y = (ye[:-1] + ye[1:]) / 2
            rows, cols = np.nonzero(touches_zero)
            ax.plot(centres_x[cols], centres_y[rows], "x", color="white", ms=4,
                    label=f"{level:.0%} interval contains 0")
            ax.legend(fontsize=7, loc="upper right")
        mesh_err = ax_err.pcolormesh(xe, ye, errors, cmap="magma")
        fig.colorbar(mesh_err, ax=ax_err, label="standard error (unprojected)")
        for axis in (ax, ax_err):
            axis.set_xlabel(xdim)
            axis.set_ylabel(ydim)
        ax_err.set_title("standard error of each cell", fontsize=9)
    else:
        plt.close(fig)
        raise ParameterError(f"cannot plot a {len(dims)}-dimensional result; select a slice first")
    ax.set_title(_title(result), fontsize=9)
    fig.tight_layout()
    return fig


def plot_study(study: xr.Dataset, output) -> None:
    """Log-log plot of mean error against n, one line per epsilon, with the theoretical slope."""
    output = _picture_path(output)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ns = study["n"].values.astype(float)
    slope = study.attrs["theoretical_slope"]
    for epsilon in study["epsilon"].values:
        row = study.sel(epsilon=epsilon)
        line = ax.errorbar(ns, row["mean_error"], yerr=2 * row["stderr_error"], fmt="o-", ms=4, capsize=3,
                           label=f"epsilon = {epsilon:g}: mean over reps, bars +-2 standard errors")
        anchor = float(row["mean_error"][0])
        ax.plot(ns, anchor * (ns / ns[0]) ** slope, "--", color=line[0].get_color(), alpha=0.6)
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
