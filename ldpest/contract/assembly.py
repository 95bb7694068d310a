"""Assembling a result ``xarray.Dataset`` without the constructor's merge and alignment.

``xr.Dataset(data_vars, coords=...)`` aligns and merges its arguments (127-285 us for the results
of bench/bench_fixed_cost.py on this machine), which was most of the fixed cost of an estimate on
a few reports (issue 28).  A result has nothing to align: every variable is built here, with the
estimator's dims, and every coordinate is a dimension coordinate.  So the variables and their
default pandas indexes are made as the constructor makes them (``PandasIndex.from_variables`` and
``create_variables``, xarray's public index API) and handed to ``Dataset._construct_direct``.
Numeric variables are filled in slot by slot (``_dims``, ``_data``, ``_attrs``, ``_encoding``:
what ``Variable(dims, array, fastpath=True)`` stores for a numpy array: 0.19 against 0.95 us,
timed with ``timeit`` on a 3-vector, best of 7 x 20000), and a
coordinate's index variable reuses the index's data adapter; both only where a probe at import
shows that xarray's variables still hold exactly those slots.

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
_SLOTS = ("_attrs", "_data", "_dims", "_encoding")
# pandas indexes are immutable: one per coordinate seen lately, with its index variable (whose
# data, the immutable adapter around the pandas index, every result of that coordinate shares)
_INDEXES: dict[tuple, tuple[PandasIndex, xr.IndexVariable]] = {}
_INDEXES_KEPT = 64
_LABELS_KEPT = 4096


def _filled(cls: type, dims: tuple, data, attrs: dict | None, encoding: dict | None) -> xr.Variable:
    variable = cls.__new__(cls)
    variable._dims, variable._data, variable._attrs, variable._encoding = dims, data, attrs, encoding
    return variable


def _slots_hold() -> bool:
    """Whether a variable filled slot by slot is what xarray's constructors make, here."""
    if xr.Variable.__slots__ != _SLOTS or xr.IndexVariable.__slots__ != ():
        return False

    def same(made: xr.Variable, filled: xr.Variable) -> bool:
        return all(getattr(made, slot) is getattr(filled, slot) or getattr(made, slot) == getattr(filled, slot)
                   for slot in _SLOTS)

    made = xr.Variable(("x",), np.arange(2.0), fastpath=True)
    if not same(made, _filled(xr.Variable, ("x",), made._data, None, None)):
        return False
    index_made = PandasIndex.from_variables({"x": made}, options={}).create_variables({"x": made})["x"]
    return same(index_made, _filled(xr.IndexVariable, ("x",), index_made._data, None, {}))


_FILL = _slots_hold()


def _index_key(name: str, values: np.ndarray) -> tuple | None:
    """What identifies a coordinate's index: its dtype and bytes, or for labels held as Python
    strings (object arrays of at most ``_LABELS_KEPT``) the strings themselves; None for others."""
    if values.dtype.kind in _PLAIN + "U":
        return name, values.dtype.str, values.shape, values.tobytes()
    if values.dtype.kind == "O" and values.ndim == 1 and values.size <= _LABELS_KEPT:
        labels = tuple(values.tolist())
        if all(type(label) is str for label in labels):
            return name, "O", labels
    return None


def _index(name: str, array: np.ndarray, attrs: dict | None) -> tuple[PandasIndex, xr.IndexVariable]:
    """The default index of a dimension coordinate and its index variable, as the constructor makes
    them (40 us), reused for the same name and values (the categories of every estimate of one
    mechanism): a new variable with ``attrs`` around the same data each time."""
    key = _index_key(name, array)
    found = _INDEXES.get(key) if key is not None else None
    if found is not None and _FILL:
        index, made = found
        return index, _filled(xr.IndexVariable, made._dims, made._data, dict(attrs) if attrs else None, {})
    variable = xr.Variable((name,), array, attrs)
    index = found[0] if found is not None else PandasIndex.from_variables({name: variable}, options={})
    made = index, index.create_variables({name: variable})[name]
    if key is not None and found is None:
        if len(_INDEXES) >= _INDEXES_KEPT:
            _INDEXES.pop(next(iter(_INDEXES)))
        _INDEXES[key] = made
    return made


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
        indexes[name], variables[name] = _index(name, array, parts[2] if len(parts) == 3 else None)
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
        if _FILL and array.dtype.kind in _PLAIN:
            variables[name] = _filled(xr.Variable, dims, array, None, None)
        else:
            variables[name] = xr.Variable(dims, array, fastpath=array.dtype.kind in _PLAIN)
    ordered = {name: variables[name] for name in data_vars} | variables  # the constructor's order: data first
    return _CONSTRUCT(ordered, set(indexes), dims=sizes, attrs={}, indexes=indexes)
