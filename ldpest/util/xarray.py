"""xarray, imported so that building a labelled array does not import dask.

xarray asks "is this a dask array?" of every array it wraps, and to ask it imports
``dask.array`` (and ``dask``) whenever dask is installed: 0.5-0.6 s, the largest part of
`ldpest estimate` on a small CSV file (issue 12; ``bench/bench_startup.py``).  No dask array
or collection can exist before dask is imported, so until then the answer is "no" without the
import.  The two checks are given to xarray through its cache of duck-array modules and its
``is_dask_collection``; both ask the real dask as soon as it is loaded
(tests/core/test_xarray_lazy_dask.py).  If a future xarray changes either, that one is left
alone and xarray behaves as it always did.
"""

from __future__ import annotations

import sys

import xarray as xr

__all__ = ["xr"]


class _DaskArrayTypes:
    """Stands for xarray's cached ``DuckArrayModule("dask")``, without importing dask.array."""

    available = True

    @property
    def type(self) -> tuple[type, ...]:
        array = getattr(sys.modules.get("dask.array"), "Array", None)
        return (array,) if array is not None else ()

    @property
    def version(self):
        import dask
        from packaging.version import Version

        return Version(dask.__version__)

    @property
    def module(self):
        import dask

        return dask


def _defer_dask_collection_check() -> None:
    try:
        from xarray.namedarray import utils
    except ImportError:  # pragma: no cover
        return
    original = getattr(utils, "is_dask_collection", None)
    if original is None or getattr(original, "ldpest_deferred", False):
        return

    def is_dask_collection(x) -> bool:
        return "dask" in sys.modules and original(x)

    is_dask_collection.ldpest_deferred = True
    utils.is_dask_collection = is_dask_collection


def _defer_dask_array_import() -> None:
    try:
        from xarray.namedarray import pycompat
    except ImportError:  # pragma: no cover - a future xarray without this module
        return
    cache = getattr(pycompat, "_cached_duck_array_modules", None)
    if not isinstance(cache, dict) or "dask" in cache or "dask.array" in sys.modules:
        return
    from importlib.util import find_spec

    if find_spec("dask") is not None:
        cache["dask"] = _DaskArrayTypes()


_defer_dask_array_import()
_defer_dask_collection_check()
