"""What a table of reports (CSV, Parquet) holds: the mechanism that made it (its spec line or
metadata, or the user's options), the columns of one report, how a column's text is parsed and
how category codes are decoded (docs/other-libraries.md), and whether a seeded generator made it."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np

from ..contract.base import Mechanism
from ..contract.registry import mechanism_from_spec
from ..util.errors import DataError, ParameterError
from ..util.labels import labels_from_codes


def column_kind(mechanism: Mechanism, raw: bool, codes: str = "labels") -> str:
    """How a table column is parsed: "string" or "int" for labels (codes and integer categories
    are integers), "int" for integer reports (read exactly, e.g. 63-bit seeds), "float" for
    numbers; raw data (``raw``) or reports."""
    kind = mechanism.data_kind if raw else mechanism.report_kind
    if kind == "label":
        categories = getattr(mechanism, "categories", [])
        coded = codes != "labels" or (categories and all(isinstance(c, int) for c in categories))
        return "int" if coded else "string"
    if codes != "labels":
        raise ParameterError(f"--codes names categories, but {mechanism.name!r} "
                             f"{'data' if raw else 'reports'} are numbers, not single categories")
    return "int" if kind == "integer" else "float"


def decoding(action: Callable, mechanism: Mechanism, codes: str, what: str) -> Callable:
    """``action`` applied to the labels of 0-/1-based category codes (or to the values as they are,
    with a hint when unknown labels look like category positions)."""
    if codes != "labels":
        return lambda values: action(labels_from_codes(values, mechanism.categories, codes, what))

    def labels(values):
        try:
            return action(values)
        except DataError as exc:
            hint = positions_hint(values, len(getattr(mechanism, "categories", [])))
            if hint is None:
                raise
            raise DataError(f"{exc.message}; {hint}", row=exc.row) from None
    return labels


def positions_hint(values, d: int) -> str | None:
    """"add --codes 0-based" when every value is a whole number that could be a position."""
    import pandas as pd

    if d == 0:
        return None
    if isinstance(values, pd.Categorical):
        seen = [str(label).strip() for label in values.categories]
        if not seen or not all(label.isdigit() for label in seen):
            return None
        low, high = min(map(int, seen)), max(map(int, seen))
    else:  # integer columns (integer categories): 0-based codes against labels 1..d
        values = np.asarray(values)
        if values.ndim != 1 or values.size == 0 or values.dtype.kind not in "iu":
            return None
        low, high = int(values.min()), int(values.max())
    for base in (0, 1):
        if base <= low and high < base + d:
            return f"the values look like category positions: add --codes {base}-based"
    return None


def table_mechanism_and_columns(source, mechanism: Mechanism | None, columns, raw: bool):
    """The mechanism (from the options or the file's spec line) and the columns to read."""
    if not raw and source.spec is not None:
        carried = mechanism_from_spec(source.spec)
        if mechanism is not None and mechanism != carried:
            raise ParameterError(
                f"{source.path} carries its own spec {carried.spec_json}, which differs from the options "
                f"({mechanism.spec_json}); drop --mechanism, --epsilon, --categories and --param"
            )
        mechanism = carried
    if mechanism is None and not raw:
        raise ParameterError(f"{source.path}: no #ldpest-spec line; give --mechanism and its parameters")
    if mechanism is None:
        raise ParameterError("--mechanism is needed to privatise raw data")
    if not columns:
        if raw:
            raise ParameterError("--column is needed: which column(s) hold the data?")
        expected = mechanism.report_columns()
        whole = source.spec is None and len(source.columns) in (1, len(expected))  # e.g. bit-vector columns
        columns = source.columns if whole else expected
    if not raw:
        expected = mechanism.report_columns()
        if len(columns) != len(expected):
            raise DataError(
                f"{source.path}: mechanism {mechanism.name!r} reports have {len(expected)} column(s) "
                f"({', '.join(expected[:6])}{', ...' if len(expected) > 6 else ''}), but {len(columns)} were given"
            )
    source.require(list(columns))
    refuse_header_like_data(source, mechanism, list(columns))
    return mechanism, list(columns)


def refuse_header_like_data(source, mechanism: Mechanism, columns: list[str]) -> None:
    """A CSV header row that looks like data (every column used named by a number, or by one of the
    categories) would silently drop the first record: a DataError naming --no-header instead."""
    if not getattr(source, "has_header", False) or source.spec is not None:
        return
    labels = {str(label) for label in getattr(mechanism, "categories", []) or []}
    why = None
    if all(_is_number(name) for name in columns):
        why = "every column is named by a number"
    elif labels and any(name.strip() in labels for name in columns):
        why = "a column is named by one of the categories"
    if why is not None:
        raise DataError(f"{source.path}, line {source.header_line}: the header row ({', '.join(columns[:4])}"
                        f"{', ...' if len(columns) > 4 else ''}) looks like data ({why}): if the file has no header "
                        "row, add --no-header (its columns are then named 1, 2, ...); else rename the column")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


SEEDED = "numpy-seeded"


def warn_if_seeded(path, kind: str | None) -> None:
    """Reports made with a seeded generator protect no one: say so whenever they are estimated."""
    if kind == SEEDED:
        warnings.warn(f"{path} was made with a seeded generator (--seed): anyone who knows the seed can "
                      "recover every true answer; such reports are fit for simulations only", stacklevel=2)
