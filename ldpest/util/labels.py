"""Mapping category labels to indices 0..d-1, vectorised over records."""

from __future__ import annotations

import numpy as np

from .errors import DataError, ParameterError

CODES = ("labels", "0-based", "1-based")  # how a column names a category


def contiguous_int_range(categories: list) -> tuple[int, int] | None:
    """``(low, low + d)`` when the categories are the ints ``low .. low + d - 1`` in order, else
    None (labels that are their own offsets: encoding them is a subtraction)."""
    if all(type(c) is int for c in categories):
        low = categories[0]
        if categories == list(range(low, low + len(categories))):
            return low, low + len(categories)
    return None


_UNKNOWN = object()


def encode_labels(values, categories: list, what: str = "data", span=_UNKNOWN) -> np.ndarray:
    """Indices of ``values`` in ``categories``; ``span`` is ``contiguous_int_range(categories)``
    when the caller knows it (a mechanism computes it once: at d = 10^5 a randomized-response
    privatise of 10^4 records took 8.2 ms with the check per call, 0.40 ms without, timed here).

    Raises :class:`DataError` naming how many values are missing (NaN/None) or
    outside the declared categories, which ones, and the first row.
    """
    import pandas as pd  # here, not at import: the contract (and `ldpest plugins`) need no pandas

    if isinstance(values, pd.Categorical):
        return _encode_categorical(values, categories, what)
    array = np.asarray(values)
    if array.ndim != 1:
        raise DataError(f"{what}: expected a 1-D sequence of labels, got shape {array.shape}")
    if span is _UNKNOWN:
        span = contiguous_int_range(categories)
    if span is not None and array.dtype.kind in "iu":
        if array.size and (array.min() < span[0] or array.max() >= span[1]):
            _raise_unknown(what, array, (array < span[0]) | (array >= span[1]), categories)
        codes = array.astype(np.int64, copy=False)
        return codes - span[0] if span[0] else codes
    if array.dtype.kind == "f":
        missing = np.isnan(array)
        if missing.any():
            _raise_missing(what, missing)
        if all(isinstance(c, int) for c in categories) and np.all(array == np.round(array)):
            return encode_labels(array.astype(np.int64), categories, what, span=span)
    codes, uniques = pd.factorize(array, use_na_sentinel=True)
    missing = codes < 0
    if missing.any():
        _raise_missing(what, missing)
    lookup = {_key(c): i for i, c in enumerate(categories)}
    mapped = np.array([lookup.get(_key(u), -1) for u in uniques], dtype=np.int64)
    result = mapped[codes] if len(codes) else np.zeros(0, dtype=np.int64)
    bad = result < 0
    if bad.any():
        _raise_unknown(what, array, bad, categories)
    return result


def _encode_categorical(values, categories: list, what: str) -> np.ndarray:
    codes = np.asarray(values.codes, dtype=np.int64)
    if (codes < 0).any():
        _raise_missing(what, codes < 0)
    lookup = {_key(c): i for i, c in enumerate(categories)}
    mapped = np.array([lookup.get(_key(u), -1) for u in values.categories], dtype=np.int64)
    result = mapped[codes] if codes.size else np.zeros(0, dtype=np.int64)
    if (result < 0).any():
        _raise_unknown(what, np.asarray(values.categories, dtype=object)[codes], result < 0, categories)
    return result


def _key(label):
    if isinstance(label, np.generic):
        label = label.item()
    if isinstance(label, float) and label.is_integer():
        return int(label)
    return label


def _raise_missing(what: str, missing: np.ndarray):
    first = int(np.flatnonzero(missing)[0])
    raise DataError(f"{what}: {int(missing.sum())} value(s) are missing (NaN/None)", row=first)


def short_repr(value, limit: int = 40) -> str:
    """``repr(value)``, cut to ``limit`` characters with the length said (a 100 MB line stays one line)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def _raise_unknown(what: str, array: np.ndarray, bad: np.ndarray, categories: list):
    unknown = list(dict.fromkeys(array[bad].tolist()))
    shown = ", ".join(map(short_repr, unknown[:5])) + (f", ... ({len(unknown)} distinct)" if len(unknown) > 5 else "")
    first = int(np.flatnonzero(bad)[0])
    declared = ", ".join(map(short_repr, categories[:10])) + (", ..." if len(categories) > 10 else "")
    raise DataError(
        f"{what}: {int(bad.sum())} value(s) outside the declared categories [{declared}]: {shown}", row=first
    )


def label_coordinate(categories: list) -> np.ndarray:
    """Category labels as a coordinate array (ints stay ints, otherwise strings: "False", "True")."""
    if all(type(c) is int for c in categories):
        return np.asarray(categories, dtype=np.int64)
    return np.asarray([str(c) for c in categories], dtype=object)


def labels_from_codes(values, categories: list, codes: str = "labels", what: str = "reports"):
    """The category labels of integer ``codes`` counted from 0 or 1 in the order of ``categories``
    (pure-ldp and multi-freq-ldpy report 0-based indices); ``codes="labels"`` returns ``values``.

    Raises :class:`DataError` naming the codes outside ``0..d-1`` (or ``1..d``) and the first row."""
    if codes == "labels":
        return values
    if codes not in CODES:
        raise ParameterError(f"codes must be one of {', '.join(CODES)}; got {codes!r}")
    base = 0 if codes == "0-based" else 1
    indices = encode_labels(values, list(range(base, base + len(categories))), f"{what} ({codes} category codes)")
    return label_coordinate(categories)[indices]


def smallest_index_dtype(size: int) -> np.dtype:
    """The smallest unsigned integer type that holds the indices ``0 .. size - 1`` (int64 beyond 2^32):
    the stored form of single-category reports (uint8 up to 256 categories: 1 byte per report)."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if size <= int(np.iinfo(dtype).max) + 1:
            return np.dtype(dtype)
    return np.dtype(np.int64)
