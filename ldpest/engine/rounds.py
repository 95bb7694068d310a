"""Estimates per round and over rounds of a repeated collection (docs/accounting.md, "Repeated
collection").

Each round's reports come from distinct users, so each round has its own unbiased estimate and
standard error.  Over ``T`` rounds the average of the rounds' unbiased estimates is unbiased for the
average of the rounds' truths, but its rounds are correlated (the same users, and with memoisation
the same permanent responses), so its variance is not the sum of theirs over ``T^2``.  Whatever the
correlation, ``Var(mean) <= (mean of the rounds' standard errors)^2`` (Cauchy-Schwarz:
``Cov(a, b) <= sd(a) sd(b)``): that is the standard error reported, an upper bound, attained when
every user's reports repeat exactly (a memoised value that never changes, and no instantaneous
noise).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..contract.reports import Reports
from ..util.errors import DataError
from ..util.xarray import xr
from .api import estimate


def estimate_rounds(rounds, estimator=None):
    """Estimate every round (a sequence of :class:`ldpest.Reports`, or a mapping from round labels
    to them) and their average: an ``xarray.Dataset`` with the per-round result along the dim
    ``round`` and ``over_rounds`` with ``over_rounds_stderr`` (module docstring)."""
    labels, parts = (list(rounds.keys()), list(rounds.values())) if isinstance(rounds, Mapping) else \
        (None, list(rounds))
    if not parts:
        raise DataError("estimate_rounds: no rounds given")
    if not all(isinstance(part, Reports) for part in parts):
        raise DataError("estimate_rounds: every round must be ldpest.Reports")
    specs = {part.spec_json for part in parts}
    if len(specs) > 1:
        raise DataError(f"estimate_rounds: the rounds were made by {len(specs)} different mechanisms; "
                        "an average over rounds needs one")
    results = [estimate(part, estimator) for part in parts]
    unbiased = "unprojected" if "unprojected" in results[0] else results[0].attrs["estimate_variable"]
    combined = xr.concat(results, dim="round", coords="minimal", compat="override", combine_attrs="drop_conflicts")
    combined = combined.assign_coords(round=labels if labels is not None else np.arange(len(parts)))
    combined["n"] = ("round", np.array([result.attrs["n"] for result in results]))
    combined["over_rounds"] = combined[unbiased].mean("round")
    combined["over_rounds_stderr"] = combined["stderr"].mean("round")
    combined["over_rounds"].attrs = {"long_name": f"average over rounds of the {unbiased} estimate"}
    combined["over_rounds_stderr"].attrs = {
        "long_name": "standard error of over_rounds, an upper bound whatever the correlation between rounds",
        "method": "mean of the rounds' standard errors (Cauchy-Schwarz)"}
    combined.attrs["rounds"] = len(parts)
    return combined
