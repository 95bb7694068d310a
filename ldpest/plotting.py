"""Pictures of results (matplotlib, the ``plot`` extra).

* multinomial: bars with confidence intervals;
* 1-D density: a line (step for histograms) with a confidence band;
* 2-D density: a heat map over the cells.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr

from .atomic import atomic_path
from .errors import ParameterError
from .results import confidence_interval, estimate_variable


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


def plot_result(result: xr.Dataset, output, level: float = 0.95) -> None:
    """Draw ``result`` to ``output`` (.png or .pdf), atomically."""
    output = Path(output)
    if output.suffix.lower() not in (".png", ".pdf"):
        raise ParameterError(f"{output}: plots are written as .png or .pdf")
    plt = _pyplot()
    name = estimate_variable(result)
    with_ci = confidence_interval(result, level)
    dims = result[name].dims
    fig, ax = plt.subplots(figsize=(7, 4.5))
    if len(dims) == 1 and name == "probability":
        labels = [str(v) for v in result[dims[0]].values]
        centre = with_ci["unprojected"] if "unprojected" in result else with_ci[name]
        ax.bar(labels, with_ci[name].values, color="#4878a8", label=f"{name} ({result.attrs.get('projection')})")
        ax.errorbar(labels, centre.values, yerr=[(centre - with_ci["lower"]).values, (with_ci["upper"] - centre).values],
                    fmt="o", color="black", ms=3, capsize=4, label=f"unprojected, {level:.0%} interval")
        ax.set_ylabel("probability")
        ax.set_xlabel(dims[0])
        ax.legend()
    elif len(dims) == 1:
        x = result[dims[0]].values
        ax.plot(x, with_ci[name].values, color="#4878a8", label=name,
                drawstyle="steps-mid" if f"{dims[0]}_bounds" in result else "default")
        ax.fill_between(x, with_ci["lower"].values, with_ci["upper"].values, alpha=0.25, color="#4878a8",
                        step="mid" if f"{dims[0]}_bounds" in result else None, label=f"{level:.0%} interval")
        ax.set_xlabel(dims[0])
        ax.set_ylabel(name)
        ax.legend()
    elif len(dims) == 2:
        ydim, xdim = dims
        edges = [result[f"{d}_bounds"].values if f"{d}_bounds" in result else None for d in (xdim, ydim)]
        if all(e is not None for e in edges):
            xe = np.append(edges[0][:, 0], edges[0][-1, 1])
            ye = np.append(edges[1][:, 0], edges[1][-1, 1])
            mesh = ax.pcolormesh(xe, ye, result[name].transpose(ydim, xdim).values, cmap="viridis")
        else:
            mesh = ax.pcolormesh(result[xdim].values, result[ydim].values, result[name].values, cmap="viridis")
        fig.colorbar(mesh, ax=ax, label=name)
        ax.set_xlabel(xdim)
        ax.set_ylabel(ydim)
    else:
        plt.close(fig)
        raise ParameterError(f"cannot plot a {len(dims)}-dimensional result; select a slice first")
    ax.set_title(_title(result), fontsize=9)
    fig.tight_layout()
    with atomic_path(output) as tmp:
        fig.savefig(tmp, format=output.suffix.lower().lstrip("."), dpi=120)
    plt.close(fig)
