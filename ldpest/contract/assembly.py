"""Assembling a result ``xarray.Dataset`` without the constructor's merge and alignment.

``xr.Dataset(data_vars, coords=...)`` aligns and merges its arguments (127-285 us for the results
of bench/bench_fixed_cost.py on this machine), which was most of the fixed cost of an estimate on
a few reports (issue 28).  A result has nothing to align: every variable is built here, with the
estimator's dims, and every coordinate is a dimension coordinate.  So the variables and their
default pandas indexes are made as the constructor makes them (``PandasIndex.from_variables`` and
``create_variables``, xarray's public index API) and handed to ``Dataset._construct_direct``.

Anything else (a coordinate that is not one of the dims, a shape that does not match its dims, an
xarray without ``_construct_direct``) goes through the constructor, which also raises its own
errors.  tests/core/test_assembly.py proves both paths give identical results for every
built-in estimator and that the fast one is taken.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import numpy as np

from ..util.xarray import xr

PandasIndex = xr.indexes.PandasIndex

_CONSTRUCT = getattr(xr.Dataset, "_construct_direct", None)
_PLAIN = "biuf"
_INDEXES: dict[tuple, PandasIndex] = {}  # pandas indexes are immutable: one per coordinate seen lately
_INDEXES_KEPT = 64


def _index(name: str, variable: xr.Variable) -> PandasIndex:
    """The default index of a dimension coordinate, as the constructor makes it (40 us), reused
    for the same name and values (the categories of every estimate of one mechanism)."""
    values = variable.values
    if values.dtype.kind not in _PLAIN + "U":
        return PandasIndex.from_variables({name: variable}, options={})
    key = (name, values.dtype.str, values.shape, values.tobytes())
    index = _INDEXES.get(key)
    if index is None:
        if len(_INDEXES) >= _INDEXES_KEPT:
            _INDEXES.pop(next(iter(_INDEXES)))
        index = _INDEXES[key] = PandasIndex.from_variables({name: variable}, options={})
    return index


_CONSTRUCTOR_ONLY = [False]


@contextmanager
def constructor_only() -> Iterator[None]:
    """Inside the block every result is built by ``xr.Dataset(...)`` (for comparisons and
    bench/bench_fixed_cost.py)."""
    _CONSTRUCTOR_ONLY.append(True)
    try:
        yield
    finally:
        _CONSTRUCTOR_ONLY.pop()


def assemble_dataset(data_vars: Mapping[str, tuple], coords: Mapping[str, object]) -> xr.Dataset:
    """``xr.Dataset(data_vars, coords=coords)`` for ``data_vars`` of ``(dims, array)`` and
    ``coords`` of dimension coordinates (an array, or ``(dims, array[, attrs])`` with dims the
    coordinate's own name)."""
    fast = None if _CONSTRUCTOR_ONLY[-1] else _fast(data_vars, coords)
    if fast is None:
        return xr.Dataset(dict(data_vars), coords=dict(coords))
    return fast


def _fast(data_vars, coords) -> xr.Dataset | None:
    if _CONSTRUCT is None:
        return None
    sizes: dict[str, int] = {}
    variables: dict[str, xr.Variable] = {}
    indexes = {}
    for name, value in coords.items():
        parts = value if isinstance(value, tuple) else ((name,), value)
        if isinstance(parts[0], str):
            parts = ((parts[0],), *parts[1:])
        if len(parts) not in (2, 3) or tuple(parts[0]) != (name,) or isinstance(parts[1], (xr.DataArray, xr.Variable)):
            return None
        array = np.asarray(parts[1])
        if array.ndim != 1:
            return None
        variable = xr.Variable((name,), array, dict(parts[2]) if len(parts) == 3 else None)
        index = _index(name, variable)
        variables.update(index.create_variables({name: variable}))
        indexes[name] = index
        sizes[name] = array.shape[0]
    for name, (dims, values) in data_vars.items():
        dims = (dims,) if isinstance(dims, str) else tuple(dims)
        array = np.asarray(values)
        if name in variables or array.ndim != len(dims) or len(set(dims)) != len(dims):
            return None
        for dim, size in zip(dims, array.shape, strict=True):
            if sizes.setdefault(dim, size) != size:
                return None
        # numbers need none of the conversions the constructor's checks make (datetimes, objects)
        variables[name] = xr.Variable(dims, array, fastpath=array.dtype.kind in _PLAIN)
    ordered = {name: variables[name] for name in data_vars} | variables  # the constructor's order: data first
    return _CONSTRUCT(ordered, set(indexes), dims=sizes, attrs={}, indexes=indexes)
