"""True distributions for studies: a scipy.stats distribution named as text, and samples of it on
an interval (``ldpest simulate --truth 'beta(2,2)'``; the families' ``truth`` and ``sample``)."""

from __future__ import annotations

import re

import numpy as np

from ..util.errors import ParameterError


def parse_distribution(text: str):
    """``"beta(2,2)"`` -> ``scipy.stats.beta(2, 2)`` (only scipy.stats names, numeric arguments)."""
    from scipy import stats as scipy_stats

    match = re.fullmatch(r"\s*([a-z_][a-z0-9_]*)\s*\(([^()]*)\)\s*", text or "")
    if not match or not isinstance(getattr(scipy_stats, match.group(1), None), scipy_stats.rv_continuous):
        raise ParameterError(f"truth must look like a scipy.stats distribution, e.g. 'beta(2,2)'; got {text!r}")
    try:
        args = [float(a) for a in match.group(2).split(",") if a.strip()]
        return getattr(scipy_stats, match.group(1))(*args)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"truth {text!r}: {exc}") from None


def distributions(given, dimensions: int) -> list:
    """One distribution per dimension from ``given`` (a text or a list of texts; one text serves
    every dimension); a ParameterError naming what is missing."""
    if given is None or (isinstance(given, (list, tuple)) and not given):
        raise ParameterError("--truth is needed for densities, e.g. --truth 'beta(2,2)'")
    if isinstance(given, (list, tuple)) and not all(isinstance(t, str) for t in given):
        raise ParameterError("--truth gives distributions as text, e.g. --truth 'beta(2,2)'; --theta gives frequencies")
    dists = [parse_distribution(t) for t in given] if isinstance(given, (list, tuple)) else [parse_distribution(given)]
    if len(dists) == 1 and dimensions > 1:
        dists = dists * dimensions
    if len(dists) != dimensions:
        raise ParameterError(f"--truth gives {len(dists)} distribution(s) for {dimensions} dimension(s)")
    return dists


def truncated_sample(dist, n: int, rng, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    """``n`` draws of ``dist`` conditioned on ``[low, high]`` (rejection)."""
    out = np.empty(0)
    while out.size < n:
        draw = dist.rvs(size=2 * (n - out.size) + 16, random_state=rng)
        out = np.concatenate([out, draw[(draw >= low) & (draw <= high)]])
    return out[:n]
