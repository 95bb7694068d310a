"""Parameter and data checks shared by all plugins.

Each check raises :class:`~ldpest.ParameterError` or
:class:`~ldpest.DataError` with a message that names the parameter (or
the data) and the offending value, and returns the normalised value.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .errors import DataError, ParameterError


def check_epsilon(epsilon) -> float:
    """Privacy level: a finite real number > 0 (there is deliberately no default)."""
    return check_positive_real("epsilon", epsilon)


def check_positive_int(name: str, value, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if int(value) < minimum:
        raise ParameterError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_positive_real(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(f"{name} must be a positive number, got {value!r}")
    number = float(value)
    if not math.isfinite(number) or number <= 0:
        raise ParameterError(f"{name} must be a finite number > 0, got {value!r}")
    return number


def check_interval(low, high) -> tuple[float, float]:
    """``(low, high)`` as finite floats with ``low < high``."""
    try:
        low, high = float(low), float(high)
    except (TypeError, ValueError):
        raise ParameterError(f"low and high must be numbers, got low={low!r}, high={high!r}") from None
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise ParameterError(f"low < high must be finite numbers, got low={low!r}, high={high!r}")
    return low, high


def check_choice(name: str, value, choices) -> str:
    if value not in choices:
        raise ParameterError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def _plain_label(label):
    if isinstance(label, np.generic):
        label = label.item()
    if isinstance(label, bool) or not isinstance(label, (str, numbers.Integral)):
        raise ParameterError(f"categories: labels must be strings or integers (or all booleans), got {label!r}")
    return label if isinstance(label, str) else int(label)


def check_categories(categories, minimum: int = 2) -> list:
    """A list of at least ``minimum`` distinct labels (strings, integers, or booleans only)."""
    if isinstance(categories, (str, bytes)) or not hasattr(categories, "__iter__"):
        raise ParameterError(f"categories must be a list of labels, got {categories!r}")
    labels = list(categories)
    if all(type(c) is str for c in labels) or all(type(c) is int for c in labels):
        pass
    elif labels and all(isinstance(c, bool | np.bool_) for c in labels):
        labels = [bool(c) for c in labels]  # booleans (OpenDP's boolean randomized response), never mixed with ints
    else:
        labels = [_plain_label(c) for c in labels]  # slow path: numpy scalars, mixed, invalid
    if len(labels) < minimum:
        raise ParameterError(f"categories must hold at least {minimum} labels, got {len(labels)}")
    if len(set(labels)) != len(labels):
        seen, repeated = set(), []
        for label in labels:
            if label in seen and label not in repeated:
                repeated.append(label)
            seen.add(label)
        raise ParameterError(f"categories must be distinct; repeated: {repeated}")
    return labels


def check_finite(name: str, values: np.ndarray) -> np.ndarray:
    """Reject NaN and infinities, naming how many and the first position."""
    bad = ~np.isfinite(values)
    if bad.any():
        raise DataError(f"{name}: {int(bad.sum())} value(s) are NaN or infinite", row=np.argwhere(bad)[0][0])
    return values


def numeric_data(data, mechanism: str) -> np.ndarray:
    """Data as float64 numbers, whatever their shape: an object array of numbers (e.g. a channel's inputs)
    is converted; anything else that is not integers or floats is a DataError naming ``mechanism``."""
    values = np.asarray(data)
    if values.dtype == object:
        try:
            values = values.astype(np.float64)
        except (TypeError, ValueError):
            raise DataError(f"data for {mechanism!r} must be numbers") from None
    if values.dtype.kind not in "iuf":
        raise DataError(f"data for {mechanism!r} must be numbers, got dtype {values.dtype}")
    return values.astype(np.float64, copy=False)


def check_nonempty(name: str, count: int) -> None:
    if count == 0:
        raise DataError(f"{name} is empty: at least one record is needed")


def check_report_matrix(values, width: int, mechanism: str, what: str) -> np.ndarray:
    """Reports as an (n, width) numeric array; ``what`` names the width (e.g. "3 categories")."""
    values = np.asarray(values)
    if values.ndim != 2 or values.shape[1] != width:
        got = f"width {values.shape[1]}" if values.ndim == 2 else \
            ("one column" if values.ndim == 1 else f"shape {values.shape}")
        raise DataError(f"reports have {got} but mechanism {mechanism!r} has {what}")
    if values.dtype.kind not in "iufb":
        raise DataError(f"reports of {mechanism!r} must be numbers, got dtype {values.dtype}")
    return values
