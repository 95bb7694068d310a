"""Reports: privatised values plus the spec of the mechanism that made them.

A :class:`Reports` wraps an :class:`xarray.DataArray` whose first dim is
``"report"`` (numpy- or dask-backed) and whose attrs carry the mechanism spec
as JSON, so a report file alone is enough to estimate from.
"""

from __future__ import annotations

import json
from functools import cached_property

import numpy as np
from ._xarray import xr

from ._version import __version__
from .atomic import atomic_path
from .contract import Mechanism, canonical_json
from .errors import DataError

SPEC_ATTR = "mechanism_spec"


def spec_of(attrs, where: str = "reports") -> dict:
    """The mechanism spec in a report array's attributes; a DataError naming what is wrong."""
    if SPEC_ATTR not in attrs:
        raise DataError(f"{where} carry no {SPEC_ATTR!r} attribute: cannot tell which mechanism made them")
    try:
        spec = json.loads(attrs[SPEC_ATTR])
    except (TypeError, ValueError):
        raise DataError(f"{where}' {SPEC_ATTR!r} attribute is not valid JSON") from None
    if not isinstance(spec, dict):
        raise DataError(f"{where}' {SPEC_ATTR!r} attribute is not a JSON object")
    return spec


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
    def _wrap(cls, values: np.ndarray, mechanism: Mechanism, rng: str) -> "Reports":
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
    def from_array(cls, values, mechanism: Mechanism, codes: str = "labels") -> "Reports":
        """Wrap reports collected elsewhere, validated against ``mechanism``.

        ``codes="0-based"`` (or ``"1-based"``) reads single-category reports as positions in
        ``mechanism.categories``, as pure-ldp and multi-freq-ldpy report them
        (docs/other-libraries.md)."""
        if codes != "labels":
            from .labels import labels_from_codes

            if mechanism.report_kind != "label":
                raise DataError(f"codes name categories, but {mechanism.name!r} reports are not single categories")
            values = labels_from_codes(values, mechanism.categories, codes)
        encoded = mechanism.encode_reports(values)
        return cls._wrap(encoded, mechanism, rng="external")

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
    def mechanism(self) -> Mechanism:
        from .registry import mechanism_from_spec_json

        return mechanism_from_spec_json(self._spec_json)

    @property
    def epsilon(self) -> float:
        return self.mechanism.epsilon

    def __getitem__(self, index) -> "Reports":
        if not isinstance(index, slice):
            raise TypeError("Reports can be sliced along 'report' only (reports[a:b])")
        part = Reports(self._data.isel(report=index), _spec_json=self._spec_json)
        if "mechanism" in self.__dict__:
            part.__dict__["mechanism"] = self.__dict__["mechanism"]
        return part

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
        from .atomic import atomic_directory

        with atomic_directory(path) as tmp:
            self._data.to_dataset().to_zarr(tmp, mode="w", consolidated=False)

    def __repr__(self) -> str:
        return f"<ldpest.Reports n={self.n} mechanism={self.spec_json} dims={self._data.dims}>"


def read_reports(path, chunks=None) -> Reports:
    """Read reports written by :meth:`Reports.to_netcdf` or :meth:`Reports.to_zarr`,
    validated against their mechanism.

    ``chunks`` (e.g. ``{"report": 10**6}``) opens the file lazily with Dask
    (validated block by block when estimated).
    """
    from pathlib import Path

    if Path(path).suffix.lower() == ".zarr":
        if not Path(path).is_dir():
            raise DataError(f"{path}: no such Zarr store")
        try:
            data = xr.open_zarr(path, chunks=chunks if chunks is not None else {}, consolidated=False)["reports"]
        except (OSError, ValueError, KeyError) as exc:
            raise DataError(f"{path}: not a readable Zarr report store ({exc})") from None
    else:
        try:
            data = xr.open_dataarray(path, engine="netcdf4", chunks=chunks)
        except FileNotFoundError:
            raise DataError(f"{path}: no such file") from None
        except (OSError, ValueError) as exc:
            raise DataError(f"{path}: not a readable NetCDF report file ({exc})") from None
    if chunks is None:
        data = data.load()
        data.close()
    reports = Reports(data)
    if chunks is None:
        checked = reports.mechanism.check_encoded_reports(reports.values)
        reports = Reports(data.copy(data=checked))
    return reports
