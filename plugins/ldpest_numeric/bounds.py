"""What every mechanism for bounded numbers shares: ``low`` and ``high``, what happens to data
outside them (``outside``), the data's ``units`` and name (``names``), and the check of raw data
(docs/numeric.md)."""

from __future__ import annotations

import numpy as np

from ldpest import DataError, Mechanism, ParameterError
from ldpest.util.validation import check_choice, check_epsilon, check_finite, check_interval, numeric_data

OUTSIDE = ("refuse", "clip")


def all_within(x: np.ndarray, low, high) -> bool:
    """Whether every number is finite and in ``[low, high]`` (each column of a 2-D ``x`` against
    its own bounds): one ``min`` and one ``max`` per column, which a NaN turns into NaN (a failed
    comparison); the callers look for what failed only when this is False."""
    if x.shape[0] == 0:
        return True
    columns = x.T if x.ndim == 2 else [x]
    lows, highs = np.broadcast_to(low, len(columns)), np.broadcast_to(high, len(columns))
    return all(bool(column.min() >= a) and bool(column.max() <= b)
               for column, a, b in zip(columns, lows, highs, strict=True))


class BoundedMechanism(Mechanism):
    """A mechanism whose data are numbers in ``[low, high]``."""

    family = "numeric"
    data_kind = "number"
    report_kind = "number"
    example_params = {"low": 0, "high": 500}
    parameter_help = {
        "epsilon": "privacy level epsilon > 0 of each report",
        "low": "smallest value the data can take",
        "high": "largest value the data can take",
        "outside": "data outside [low, high]: 'refuse' (an error naming the first record) or 'clip' to the bounds",
        "units": "units of the data, e.g. 'ms': the estimates, their stderr and intervals are in them",
        "names": "the data's name in a list, e.g. ['latency'] (the CLI gives the column): results say it",
    }

    def __init__(self, *, epsilon, low, high, outside="refuse", units=None, names=None, **more):
        low, high = check_interval(low, high)
        if units is not None and not isinstance(units, str):
            raise ParameterError(f"units must be text, e.g. 'ms', got {units!r}")
        if names is not None:
            if isinstance(names, str) or len(names) != 1 or not (isinstance(names[0], str) and names[0]):
                raise ParameterError(f"names must be one non-empty string in a list, e.g. ['latency'], got {names!r}")
            more["names"] = [names[0]]
        self._set_params(epsilon=check_epsilon(epsilon), low=low, high=high,
                         outside=check_choice("outside", outside, OUTSIDE), units=units, **more)

    @property
    def variable(self) -> str | None:
        """The data's name (``names``, the CLI's column), for the result's descriptions and dims."""
        return (self._params.get("names") or [None])[0]

    @property
    def low(self) -> float:
        return self._params["low"]

    @property
    def high(self) -> float:
        return self._params["high"]

    @property
    def units(self) -> str | None:
        return self._params["units"]

    @property
    def half_width(self) -> float:
        """``(high - low) / 2``: one unit of ``t in [-1, 1]`` in the data's units."""
        return (self.high - self.low) / 2

    def to_data_units(self, t):
        return self.low + (np.asarray(t, dtype=np.float64) + 1) * self.half_width

    def outside_note(self) -> str:
        """What the result says about data outside the bounds."""
        if self._params["outside"] == "clip":
            return "clipped to [low, high] on the device"
        return "refused on the device (the data lay in [low, high])"

    def encode_data(self, data) -> np.ndarray:
        x = numeric_data(data, self.name)
        if x.ndim == 2 and x.shape[1] == 1:
            x = x[:, 0]
        if x.ndim != 1:
            raise DataError(f"data for {self.name!r} must be one column of numbers, got shape {x.shape}")
        if all_within(x, self.low, self.high):
            return x
        check_finite("data", x)
        outside = (x < self.low) | (x > self.high)
        if outside.any():
            if self._params["outside"] == "clip":
                return np.clip(x, self.low, self.high)
            raise DataError(f"data: {int(outside.sum())} value(s) outside [low, high] = [{self.low:g}, "
                            f"{self.high:g}] (first: {x[outside][0]:g}); give outside='clip' to clip them",
                            row=int(np.flatnonzero(outside)[0]))
        return x
