"""Specs: the JSON that names a mechanism or an estimator and its parameters, and travels with
every report file (DESIGN.md, "The plugin contract")."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .errors import DataError

SPEC_ATTR = "mechanism_spec"  # the attribute of a report array (and of a result) that holds the spec


def canonical_json(spec: Mapping[str, Any]) -> str:
    """The canonical JSON text of a spec (sorted keys), used for equality."""
    return json.dumps(spec, sort_keys=True, separators=(",", ":"))


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
