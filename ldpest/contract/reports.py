"""Reports: privatised values plus the spec of the mechanism that made them.

A :class:`Reports` wraps an :class:`xarray.DataArray` whose first dim is
``"report"`` (numpy- or dask-backed) and whose attrs carry the mechanism spec
as JSON, so a report file alone is enough to estimate from.
"""

from __future__ import annotations

import json
from functools import cached_property

import numpy as np

from ..util.atomic import atomic_directory, atomic_path
from ..util.errors import DataError
from ..util.spec import SPEC_ATTR, canonical_json, spec_of
from ..util.version import __version__
from ..util.xarray import xr


class Reports:
    """Privatised reports of one mechanism (see module docstring)."""

    def __init__(self, data: xr.DataArray, *, _spec_json: str | None = None):
        if _spec_json is not None:  # built by ldpest from a mechanism: already canonical
            self._data, self._spec_json = data, _spec_json
            return
        if not isinstance(data, xr.DataArray):
            raise TypeError("Reports wraps an xarray.DataArray; use Reports.from_array for raw values")
        if not data.dims or data.dims[0] != "report":
            raise DataError(f"reports must have 'report' as first dim, got dims {data.dims}")
        self._data = data
        self._spec_json = canonical_json(spec_of(data.attrs))

    @classmethod
    def trusted(cls, values: np.ndarray, mechanism, rng: str = "external") -> Reports:
        """Reports of ``mechanism`` whose ``values`` are already in stored form and valid: made by
        its sampler, or read and checked by a reader (:meth:`from_array` validates reports
        collected elsewhere).  ``rng`` names the kind of generator that made them."""
        spec = mechanism.spec_json
        data = xr.DataArray(
            values,
            dims=mechanism.report_dims,
            name="reports",
            attrs={
                "mechanism": mechanism.name,
                SPEC_ATTR: spec,
                "epsilon": mechanism.epsilon,
                "rng": rng,
                "ldpest_version": __version__,
            },
        )
        reports = cls(data, _spec_json=spec)
        reports.__dict__["mechanism"] = mechanism  # the cached_property: no rebuild from the spec
        return reports

    @classmethod
    def from_array(cls, values, mechanism, codes: str = "labels") -> Reports:
        """Wrap reports collected elsewhere, validated against ``mechanism``.

        ``codes="0-based"`` (or ``"1-based"``) reads single-category reports as positions in
        ``mechanism.categories``, as pure-ldp and multi-freq-ldpy report them
        (docs/other-libraries.md)."""
        if codes != "labels":
            from ..util.labels import labels_from_codes

            if mechanism.report_kind != "label":
                raise DataError(f"codes name categories, but {mechanism.name!r} reports are not single categories")
            values = labels_from_codes(values, mechanism.categories, codes)
        try:
            encoded = mechanism.encode_reports(values)
        except DataError as exc:
            hint = _positions_hint(values, mechanism) if codes == "labels" else None
            if hint is None:
                raise
            raise DataError(f"{exc.message}; {hint}", row=exc.row) from None
        return cls.trusted(encoded, mechanism, rng="external")

    # -- views ---------------------------------------------------------------
    @property
    def data(self) -> xr.DataArray:
        return self._data

    @property
    def values(self) -> np.ndarray:
        return np.asarray(self._data.values)

    @property
    def n(self) -> int:
        return int(self._data.sizes["report"])

    def __len__(self) -> int:
        return self.n

    @property
    def spec(self) -> dict:
        return json.loads(self._spec_json)

    @property
    def spec_json(self) -> str:
        return self._spec_json

    @cached_property
    def mechanism(self):
        from .registry import mechanism_from_spec_json

        return mechanism_from_spec_json(self._spec_json)

    @property
    def epsilon(self) -> float:
        return self.mechanism.epsilon

    def __getitem__(self, index) -> Reports:
        if not isinstance(index, slice):
            raise TypeError("Reports can be sliced along 'report' only (reports[a:b])")
        part = Reports(self._data.isel(report=index), _spec_json=self._spec_json)
        if "mechanism" in self.__dict__:
            part.__dict__["mechanism"] = self.__dict__["mechanism"]
        return part

    @property
    def lazy(self) -> bool:
        """True when the values are not in memory (a dask-backed array, e.g. ``read_reports(path,
        chunks=...)``): they are read, and validated, block by block when estimated."""
        if isinstance(self._data.data, np.ndarray):  # the common case, without xarray's protocol checks
            return False
        return self._data.chunks is not None

    def blocks(self):
        """The reports block by block, each in memory and validated against the mechanism: one
        block per chunk of a lazy array along ``report`` (memory: one block), or, in memory, the
        reports themselves."""
        if not self.lazy:
            yield self
            return
        mechanism, rng = self.mechanism, str(self._data.attrs.get("rng", "external"))
        start = 0
        for size in self._data.chunks[0]:
            block = np.asarray(self._data.isel(report=slice(start, start + size)).values)
            try:
                checked = mechanism.check_encoded_reports(block)
            except DataError as exc:
                raise DataError(exc.message, row=None if exc.row is None else start + exc.row) from None
            yield Reports.trusted(checked, mechanism, rng=rng)
            start += size

    def chunks(self, size: int):
        """Iterate over consecutive chunks of at most ``size`` reports."""
        for start in range(0, self.n, size):
            yield self[start:start + size]

    def labels(self) -> np.ndarray:
        """Reported category labels, for mechanisms whose reports are category indices."""
        if self._data.ndim != 1 or not hasattr(self.mechanism, "categories"):
            raise TypeError(f"reports of {self.mechanism.name!r} are not single category labels")
        return np.asarray(self.mechanism.categories, dtype=object)[self.values]

    def to_netcdf(self, path) -> None:
        """Write to NetCDF atomically; :func:`read_reports` gets the same reports back."""
        with atomic_path(path) as tmp:
            self._data.to_netcdf(tmp, engine="netcdf4")

    def to_zarr(self, path) -> None:
        """Write a Zarr store atomically (dask-backed reports are written block by block)."""
        with atomic_directory(path) as tmp:
            self._data.to_dataset().to_zarr(tmp, mode="w", consolidated=False)

    def __repr__(self) -> str:
        return f"<ldpest.Reports n={self.n} mechanism={self.spec_json} dims={self._data.dims}>"


def _positions_hint(values, mechanism) -> str | None:
    """'pass codes="0-based"' when refused single-category reports are whole numbers that could be
    positions in the categories (pure-ldp and multi-freq-ldpy report them so)."""
    if mechanism.report_kind != "label":
        return None
    array = np.asarray(values)
    if array.ndim != 1 or array.size == 0 or array.dtype.kind not in "iu":
        return None
    low, high, d = int(array.min()), int(array.max()), len(mechanism.categories)
    for base in (0, 1):
        if base <= low and high < base + d:
            return f'the values look like category positions: pass codes="{base}-based"'
    return None
