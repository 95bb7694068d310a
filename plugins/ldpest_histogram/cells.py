"""Densities from a frequency oracle's estimate of the cells of ``oracle-histogram`` reports.

The oracle estimates the frequencies of the categories ``0..N``: the N cells, then "outside every
cell".  The ``frequency`` estimator's finalisation (its projections, ``"auto"`` and ``"mle"``
included) gives them; here they become densities ``mass / h^d`` on the partition's grid, as
``laplace-histogram`` results have them, and the outside category's entries become ``outside_*``
attributes (``outside_mass`` its estimate).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

import ldpest
from ldpest import EstimateParts, FrequencyOracle


def geometry(mechanism) -> tuple[tuple[str, ...], dict, dict, dict]:
    """``(dims, coords, bounds, extra)`` of a histogram result: the axes' centres and edges, and the
    ``in_partition`` mask of a ball partition."""
    partition = mechanism.partition
    dims = tuple(mechanism.dims)
    coords = {dim: partition.axis_centres(i) for i, dim in enumerate(dims)}
    bounds = {dim: partition.axis_edges(i) for i, dim in enumerate(dims)}
    extra = {} if partition.members is None else {"in_partition": (dims, partition.grid_mask())}
    return dims, coords, bounds, extra


def _on_grid(partition, values, fill=0.0) -> np.ndarray:
    """The first N entries (the cells) of per-category ``values`` on the bounding grid; integers stay integers."""
    values = np.asarray(values)
    grid = partition.to_grid(values[:partition.size], fill)
    return grid.astype(values.dtype) if values.dtype.kind in "iu" else grid


def oracle_parts(mechanism, arrays, n: int, projection: str) -> EstimateParts:
    """The density of every cell from the oracle's statistics: the ``frequency`` estimator's parts at
    ``projection`` (docs/frequency-oracles.md), divided by the cell volume.  The outside category takes
    part in the projection, so the cells' masses sum to one minus ``outside_mass``."""
    frequency = ldpest.estimator("frequency", projection=projection)
    return density_parts(mechanism, frequency.parts(mechanism.oracle, arrays, n))


def density_parts(mechanism, parts: EstimateParts) -> EstimateParts:
    """A frequency result's ``parts`` over the oracle's categories (the cells, then outside) as densities on
    the partition's grid, the outside category's entries as ``outside_*`` attributes."""
    partition, size = mechanism.partition, mechanism.partition.size
    volume = partition.cell_volume
    dims, coords, bounds, extra = geometry(mechanism)
    extra["mass"] = (dims, _on_grid(partition, parts.estimate))
    outside = {"outside_mass": float(parts.estimate[size]), "outside_unprojected": float(parts.unprojected[size]),
               "outside_stderr": float(parts.stderr[size])}
    for name, (_, values) in parts.extra.items():
        extra[name] = (dims, _on_grid(partition, values, fill=-1))
        outside[f"outside_{name}"] = np.asarray(values)[size].item()
    count = None
    if parts.count is not None:
        count = _on_grid(partition, np.asarray(parts.count, dtype=np.int64), fill=-1)
        outside["outside_count"] = int(parts.count[size])
    kurtosis = parts.excess_kurtosis
    return EstimateParts(
        variable="density",
        estimate=_on_grid(partition, parts.estimate) / volume,
        stderr=_on_grid(partition, parts.stderr) / volume,
        dims=dims,
        coords=coords,
        projection=parts.projection,
        unprojected=_on_grid(partition, parts.unprojected) / volume,
        bounds=bounds,
        extra=extra,
        attrs={**parts.attrs, "cell_volume": volume, "cells": size, "oracle": mechanism.oracle.name, **outside},
        count=count,
        count_map=None if parts.count_map is None else (*parts.count_map[:2], parts.count_map[2] / volume),
        excess_kurtosis=None if kurtosis is None else _on_grid(partition, kurtosis),
        stderr_method=parts.stderr_method,
    )


def oracle_interval(mechanism, result, level: float):
    """The oracle's own intervals (:meth:`ldpest.FrequencyOracle.frequency_interval`: Hadamard response's
    exact ones, one-hot Laplace's exact noise sums) for the unprojected densities of ``result``, from a
    view of it over the oracle's categories; None where the oracle has none (then the core's
    Clopper-Pearson interval on ``count``, or the normal interval)."""
    oracle = mechanism.oracle
    if type(oracle).frequency_interval is FrequencyOracle.frequency_interval:
        return None
    partition, volume = mechanism.partition, float(result.attrs["cell_volume"])
    view = xr.Dataset(attrs=dict(result.attrs))
    for key in result.attrs:
        name = key.removeprefix("outside_")
        if key.startswith("outside_") and name in result.data_vars:
            scale = volume if name in ("unprojected", "stderr") else 1
            cells = partition.from_grid(result[name].values) * scale
            view[name] = ("category", np.append(cells, result.attrs[key]))
    found = oracle.frequency_interval(view, level)
    if found is None:
        return None
    lower, upper, method = found
    return _on_grid(partition, lower) / volume, _on_grid(partition, upper) / volume, method


def simulate_oracle(mechanism, masses, n: int, rng) -> dict:
    """Exact statistics of ``n`` reports whose points fall in the cells (then outside) with ``masses``."""
    simulate = getattr(mechanism.oracle, "simulate_frequency_statistics", None)
    if simulate is None:
        raise NotImplementedError(f"oracle {mechanism.oracle.name!r} has no exact aggregate simulation")
    return simulate(masses, n, rng)
