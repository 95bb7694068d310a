"""Cubic partitions of R^d for histograms (MATH.md section 2).

Two constructions, one interface:

* :meth:`CubicPartition.box`: the box ``[low, high]`` split into
  ``bins[0] x ... x bins[d-1]`` equal cells (the last cell of each axis is
  closed, so ``high`` belongs to the box, as in Duchi et al.'s bins).
* :meth:`CubicPartition.ball`: the cubes ``h * (m + [0, 1)^d)`` of side ``h``
  that meet the closed ball of radius ``r`` around ``center`` (Gyorfi-Kroll).

Cells are numbered row-major over the bounding grid (last axis fastest); a ball
partition uses the subset of grid cells that meet the ball.  :meth:`locate`
maps points to cell numbers, vectorised, with -1 for points outside every cell.

Cell lookup is exact at every edge: each axis keeps its edges as floats (the
box's are ``low``, interior edges, and exactly ``high``), the result's bounds
variables report these same numbers, and :meth:`locate` compares points with
them (``searchsorted``) instead of dividing, so a point equal to an edge lands
in the cell that the reported bounds say holds it, whatever the rounding of
``(x - low) / width`` would be.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..util.errors import ParameterError

MAX_GRID_CELLS = 5_000_000


@dataclass(frozen=True)
class CubicPartition:
    grid_low: np.ndarray  # (d,) lower corner of the bounding grid
    widths: np.ndarray  # (d,) cell side lengths (nominal: volumes, tuning)
    shape: tuple[int, ...]  # cells per axis of the bounding grid
    members: np.ndarray | None  # flat grid indices of the cells (None: every grid cell)
    closed_upper: bool  # True for a box: points on the upper faces belong to the last cells
    edges: tuple[np.ndarray, ...]  # per axis: shape[axis] + 1 increasing edges

    # -- construction -----------------------------------------------------------
    @classmethod
    def box(cls, low, high, bins) -> CubicPartition:
        low = np.asarray(low, dtype=np.float64)
        high = np.asarray(high, dtype=np.float64)
        bins = np.asarray(bins, dtype=np.int64)
        _check_grid_size(bins)
        return cls(low, (high - low) / bins, tuple(int(b) for b in bins), None, True,
                   tuple(_box_edges(a, b, k) for a, b, k in zip(low, high, bins, strict=True)))

    @classmethod
    def ball(cls, radius: float, h: float, d: int, center=None) -> CubicPartition:
        center = np.zeros(d) if center is None else np.asarray(center, dtype=np.float64)
        first = np.floor((center - radius) / h).astype(np.int64)
        last = np.floor((center + radius) / h).astype(np.int64)  # inclusive
        shape = tuple(int(v) for v in last - first + 1)
        _check_grid_size(np.asarray(shape))
        grid_low = first * h
        # a half-open cube [a, a + h) meets the closed ball iff its closure's closest point
        # to the centre is within r, strictly when that point lies on an (excluded) upper face
        axes = [grid_low[i] + h * np.arange(shape[i]) for i in range(d)]
        gaps = [np.maximum(0.0, np.maximum(a - center[i], center[i] - (a + h))) for i, a in enumerate(axes)]
        distance2 = sum(np.meshgrid(*[g ** 2 for g in gaps], indexing="ij"))
        open_face = np.logical_or.reduce(np.meshgrid(*[center[i] >= a + h for i, a in enumerate(axes)], indexing="ij"))
        meets = (distance2 < radius ** 2) | ((distance2 == radius ** 2) & ~open_face)
        members = np.flatnonzero(meets.ravel())
        edges = tuple((first[i] + np.arange(shape[i] + 1)) * float(h) for i in range(d))
        return cls(grid_low, np.full(d, float(h)), shape, members, False, edges)

    # -- geometry ---------------------------------------------------------------
    @property
    def d(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of cells N."""
        return int(np.prod(self.shape)) if self.members is None else int(self.members.size)

    @property
    def cell_volume(self) -> float:
        return float(np.prod(self.widths))

    def axis_edges(self, axis: int) -> np.ndarray:
        """``(shape[axis], 2)`` lower and upper edges of the grid cells along ``axis``."""
        edges = np.asarray(self.edges[axis], dtype=np.float64)
        pairs = np.empty((len(edges) - 1, 2))
        pairs[:, 0], pairs[:, 1] = edges[:-1], edges[1:]
        return pairs

    def axis_centres(self, axis: int) -> np.ndarray:
        edges = np.asarray(self.edges[axis], dtype=np.float64)
        return (edges[:-1] + edges[1:]) / 2  # the mean of each cell's two edges, as np.mean computes it

    def grid_mask(self) -> np.ndarray:
        """Boolean array of the grid shape: which grid cells are cells of the partition."""
        mask = np.zeros(int(np.prod(self.shape)), dtype=bool)
        mask[self.members if self.members is not None else slice(None)] = True
        return mask.reshape(self.shape)

    def to_grid(self, values: np.ndarray, fill=0.0) -> np.ndarray:
        """Per-cell values (N,) laid out on the bounding grid, ``fill`` elsewhere."""
        if self.members is None:
            return np.asarray(values).reshape(self.shape)
        grid = np.full(int(np.prod(self.shape)), fill, dtype=np.float64)
        grid[self.members] = values
        return grid.reshape(self.shape)

    def from_grid(self, grid: np.ndarray) -> np.ndarray:
        """The inverse of :meth:`to_grid`: the (N,) per-cell values of a bounding-grid array."""
        flat = np.asarray(grid).reshape(-1)
        return flat if self.members is None else flat[self.members]

    # -- lookup -------------------------------------------------------------------
    def locate(self, points: np.ndarray) -> np.ndarray:
        """Cell number (0..N-1) of each row of ``points`` (n, d); -1 outside every cell.

        Cell j of an axis is ``[edges[j], edges[j+1])``; for a box the last
        cell also holds its upper edge.  Comparisons only, so exact."""
        points = np.asarray(points, dtype=np.float64)
        index = np.empty(points.shape, dtype=np.int64)
        for axis, edges in enumerate(self.edges):
            index[:, axis] = np.searchsorted(edges, points[:, axis], side="right") - 1
            if self.closed_upper:
                on_top = points[:, axis] == edges[-1]
                index[on_top, axis] = len(edges) - 2
        shape = np.asarray(self.shape)
        inside = np.all((index >= 0) & (index < shape), axis=1)
        flat = np.full(points.shape[0], -1, dtype=np.int64)
        if inside.any():
            grid_flat = np.ravel_multi_index(tuple(index[inside].T), self.shape)
            if self.members is not None:
                lookup = np.full(int(np.prod(self.shape)), -1, dtype=np.int64)
                lookup[self.members] = np.arange(self.members.size)
                grid_flat = lookup[grid_flat]
            flat[inside] = grid_flat
        return flat

    def cell_corners(self) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper corners (N, d) of every cell."""
        grid = np.stack(np.unravel_index(np.arange(int(np.prod(self.shape))), self.shape), axis=1)
        if self.members is not None:
            grid = grid[self.members]
        lower = np.column_stack([self.edges[i][grid[:, i]] for i in range(self.d)])
        upper = np.column_stack([self.edges[i][grid[:, i] + 1] for i in range(self.d)])
        return lower, upper


def _box_edges(low: float, high: float, bins: int) -> np.ndarray:
    """``bins + 1`` increasing edges from exactly ``low`` to exactly ``high``."""
    edges = low + (high - low) * (np.arange(bins + 1) / bins)
    edges[0], edges[-1] = low, high
    if np.any(np.diff(edges) <= 0):
        raise ParameterError(f"[{low}, {high}] cannot be split into {bins} cells of positive float width")
    return edges


def _check_grid_size(shape: np.ndarray) -> None:
    total = int(np.prod(shape.astype(object)))
    if total > MAX_GRID_CELLS:
        raise ParameterError(f"the partition's grid has {total:,} cells; at most {MAX_GRID_CELLS:,} are supported "
                             "(fewer bins per dimension)")
