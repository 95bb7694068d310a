"""Means of several bounded numbers per device: ``multidimensional`` (Wang et al. 2019, ICDE,
"Collecting and analyzing multidimensional data with LDP", Algorithm 4; docs/numeric.md).

A device holds ``d`` numbers, ``x_j in [low_j, high_j]``.  It picks ``k`` of the ``d`` attributes
uniformly without replacement (a draw that ignores its numbers) and sends each picked one through
the one-dimensional ``base`` mechanism (``hybrid`` by default) at ``epsilon / k``; the report is
the picked attributes and their codes.  Given the pick the codes are independent, so a report's
likelihood ratio is the product of ``k`` ratios, each at most ``e^(epsilon / k)``: at most
``e^epsilon`` (:meth:`Multidimensional.proven_private` proves the product exactly).

With ``v`` a code's unbiased value, ``Y_j = (d / k) v 1{j picked}`` is unbiased for ``t_j`` (the
attribute picked with probability ``k / d``), so the mean of ``Y_j`` over the n devices is the
estimate; ``Var(Y_j) = (d / k) (V(t_j) + t_j^2) - t_j^2`` and the standard error is the sample
variance of the ``Y_j`` (floored as the one-dimensional ``mean`` floors it, times ``d / k``).
``k = "auto"`` is Wang et al.'s ``max(1, min(d, floor(epsilon / 2.5)))``.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from ldpest import Channel, DataError, Mechanism, ParameterError
from ldpest.privacy.exact import random_words, ratio_within
from ldpest.util.validation import check_choice, check_epsilon, check_finite, check_positive_int, numeric_data

from .bounds import all_within
from .mechanisms import DEFAULT_STEPS, Duchi, Hybrid, Piecewise

BASES = {"hybrid": Hybrid, "piecewise": Piecewise, "duchi": Duchi}
_CHANNEL_CELLS = 1 << 21


_COUNT_ROWS = 1 << 16  # reports indexed at once: 1.8x one index of all at 10^7 (bench/bench_numeric_parts.py)


def wang_k(epsilon: float, d: int) -> int:
    """Wang et al. (2019)'s number of attributes per report: ``max(1, min(d, floor(eps / 2.5)))``."""
    return max(1, min(d, math.floor(epsilon / 2.5)))


class Multidimensional(Mechanism):
    """``k`` of ``d`` bounded numbers per report, each by the ``base`` mechanism at ``epsilon / k``."""

    name = "multidimensional"
    family = "numeric"
    default_estimator = "mean"
    report_dims = ("report", "field")
    data_kind = "number"
    report_kind = "number"
    example_params = {"low": [0, 0], "high": [500, 100]}
    parameter_help = {
        "epsilon": "privacy level epsilon > 0 of each report (split evenly over its k attributes)",
        "low": "each attribute's smallest value, a list of d numbers",
        "high": "each attribute's largest value, a list of d numbers",
        "k": "attributes per report, or 'auto' (Wang et al.: max(1, min(d, floor(epsilon / 2.5))))",
        "base": "the one-dimensional mechanism of each attribute: 'hybrid' (default), 'piecewise', 'duchi'",
        "steps": "grid steps of the base lattice (hybrid, piecewise)",
        "outside": "data outside [low, high]: 'refuse' or 'clip'",
        "units": "each attribute's units, a list of d texts (or null)",
        "names": "each attribute's name, a list of d texts (the CLI gives the columns)",
    }

    def __init__(self, *, epsilon, low, high, k="auto", base="hybrid", steps=DEFAULT_STEPS, outside="refuse",
                 units=None, names=None):
        epsilon = check_epsilon(epsilon)
        try:
            low, high = [float(v) for v in low], [float(v) for v in high]
        except (TypeError, ValueError):
            raise ParameterError(f"low and high must be lists of numbers, got low={low!r}, high={high!r}") from None
        d = len(low)
        if d < 1 or len(high) != d:
            raise ParameterError(f"low and high must be lists of the same length d >= 1, got {d} and {len(high)}")
        k = wang_k(epsilon, d) if k == "auto" else check_positive_int("k", k)
        if k > d:
            raise ParameterError(f"k must be at most d = {d}, got {k}")
        base = check_choice("base", base, tuple(BASES))
        for what, given in (("units", units), ("names", names)):
            if given is not None and (isinstance(given, str) or len(given) != d):
                raise ParameterError(f"{what} must be a list of {d} entries (one per attribute), got {given!r}")
        names = list(names) if names is not None else [f"x{j + 1}" for j in range(d)]
        self._set_params(epsilon=epsilon, low=low, high=high, k=k, base=base, steps=steps, outside=outside,
                         units=None if units is None else list(units), names=names)
        lattice = {} if base == "duchi" else {"steps": steps}
        self._attributes = [BASES[base](epsilon=epsilon / k, low=a, high=b, outside=outside,
                                        units=None if units is None else units[j], names=[names[j]], **lattice)
                            for j, (a, b) in enumerate(zip(low, high, strict=True))]
        # every attribute has the same lattice (one base at epsilon / k), so one mechanism on [0, 1]
        # draws the codes of all picked numbers, each mapped to (x - low_j) / (high_j - low_j)
        self._unit = BASES[base](epsilon=epsilon / k, low=0.0, high=1.0, **lattice)
        self._low, self._high = np.array(low), np.array(high)
        self._width = self._high - self._low

    @property
    def d(self) -> int:
        return len(self._attributes)

    @property
    def k(self) -> int:
        return self._params["k"]

    @property
    def attributes(self) -> list:
        """Each attribute's one-dimensional mechanism (at ``epsilon / k``)."""
        return list(self._attributes)

    @property
    def unit_attribute(self):
        """One attribute's mechanism on ``[0, 1]``: every attribute has its lattice, codes and values."""
        return self._unit

    @property
    def half_widths(self) -> np.ndarray:
        """``(high_j - low_j) / 2`` of each attribute: one unit of ``t`` in its units."""
        return self._width / 2

    @property
    def names(self) -> list[str]:
        return list(self._params["names"])

    def report_columns(self):
        return [f"attribute_{i + 1}" for i in range(self.k)] + [f"code_{i + 1}" for i in range(self.k)]

    def encode_data(self, data) -> np.ndarray:
        x = np.asarray(data)
        if x.ndim == 1 and self.d == 1:
            x = x[:, None]
        if x.ndim != 2 or x.shape[1] != self.d:
            raise DataError(f"data for {self.name!r} must have {self.d} columns (one per attribute), "
                            f"got shape {x.shape}")
        x = numeric_data(x, self.name)
        low, high = self._low, self._high
        if not all_within(x, low, high):
            check_finite("data", x)
            if self._params["outside"] == "clip":
                return np.clip(x, low, high)
            outside = (x < low) | (x > high)
            row, j = (int(i[0]) for i in np.nonzero(outside))
            raise DataError(f"attribute {self.names[j]!r}: {int(outside[:, j].sum())} value(s) outside [low, high] = "
                            f"[{low[j]:g}, {high[j]:g}] (first: {x[row, j]:g}); give outside='clip' to clip them",
                            row=row)
        return x

    def picks(self, n: int, rng) -> np.ndarray:
        """``(n, k)`` attributes, each row ``k`` distinct ones uniformly, in increasing order as in the
        channel: for ``k = 1`` an exactly uniform integer, else the ``k`` smallest of ``d`` random
        words (two equal words, probability below ``d^2 / 2^65``, may favour one attribute; the
        picks ignore the data, so this touches accuracy, never privacy)."""
        if self.k == 1:
            return rng.integers(0, self.d, size=(n, 1))
        if self.k == self.d:
            return np.broadcast_to(np.arange(self.d), (n, self.d)).copy()
        keys = random_words(rng, (n, self.d))
        return np.sort(np.argpartition(keys, self.k - 1, axis=1)[:, :self.k], axis=1)

    def _privatize(self, x, rng):
        """The picks, then every picked number's code in one draw of the shared lattice: the
        number ``x_j`` enters it as ``(x_j - low_j) / (high_j - low_j)`` (module docstring)."""
        n, k = x.shape[0], self.k
        out = np.empty((n, 2 * k), dtype=np.uint32)
        out[:, :k] = picked = self.picks(n, rng)
        unit = np.take_along_axis(x, picked, axis=1)
        unit -= self._low[picked]
        unit /= self._width[picked]
        np.clip(unit, 0.0, 1.0, out=unit)
        out[:, k:] = self._unit.sample_codes(unit.ravel(), rng).reshape(n, k)
        return out

    def encode_reports(self, values):
        values = np.asarray(values)
        if values.ndim != 2 or values.shape[1] != 2 * self.k or values.dtype.kind not in "iuf":
            raise DataError(f"reports of {self.name!r} must be {2 * self.k} integer columns (k = {self.k} attributes, "
                            f"then their codes), got shape {values.shape}")
        if values.dtype.kind == "f" and not np.all(np.isfinite(values) & (values == np.round(values))):
            raise DataError(f"reports of {self.name!r} must be integers")
        values = values.astype(np.int64)
        picked, codes = values[:, :self.k], values[:, self.k:]
        bad = ((picked < 0) | (picked >= self.d)).any(axis=1)
        if self.k > 1:
            ordered = np.sort(picked, axis=1)
            bad |= (np.diff(ordered, axis=1) == 0).any(axis=1)
        if bad.any():
            raise DataError(f"reports of {self.name!r} must name {self.k} distinct attributes in 0..{self.d - 1}",
                            row=int(np.flatnonzero(bad)[0]))
        for j, attribute in enumerate(self._attributes):
            rows, slots = np.nonzero(picked == j)
            wrong = codes[rows, slots] >= attribute.code_count
            if wrong.any():
                raise DataError(f"reports of {self.name!r}: attribute {self.names[j]!r} has codes "
                                f"0..{attribute.code_count - 1}", row=int(rows[np.flatnonzero(wrong)[0]]))
        return values.astype(np.uint32)

    def code_counts(self, values) -> np.ndarray:
        """``(d, codes)``: how often each attribute was sent with each code (additive)."""
        width = max(a.code_count for a in self._attributes)
        flat = np.zeros(self.d * width, dtype=np.int64)
        for start in range(0, values.shape[0], _COUNT_ROWS):  # blocks: the index stays in cache
            block = values[start:start + _COUNT_ROWS]
            index = block[:, :self.k] * np.uint32(width) + block[:, self.k:]  # uint32: d * width < 2^32
            flat += np.bincount(index.ravel(), minlength=self.d * width)
        return flat.reshape(self.d, width)

    def level_ratio(self) -> Fraction:
        """The worst ratio of one attribute's channel (all share ``epsilon / k``), exactly."""
        return max(attribute.base_channel().worst_ratio() for attribute in self._attributes)

    def proven_private(self) -> bool:
        """``(worst attribute ratio)^k <= e^epsilon``, proven."""
        ratio = Fraction(self.level_ratio())
        return ratio_within(ratio.numerator, ratio.denominator, self.epsilon, power=self.k)

    def channel(self) -> Channel:
        """Exact for small settings: inputs every combination of the attributes' grid points,
        outputs every ``(picked attributes, codes)``; ``Q = (1 / C(d, k)) prod Q_j(code_j | x_j)``."""
        channels = [attribute.base_channel() for attribute in self._attributes]
        sizes = [c.shape for c in channels]
        subsets = list(itertools.combinations(range(self.d), self.k))
        outputs_count = sum(math.prod(sizes[j][1] for j in s) for s in subsets)
        inputs_count = math.prod(s[0] for s in sizes)
        if inputs_count * outputs_count > _CHANNEL_CELLS:
            raise ParameterError(f"the channel has {inputs_count} x {outputs_count} entries; enumerate it with "
                                 "base='duchi' or small steps, and prove larger ones by proven_private()")
        dense = [np.asarray(c.dense(), dtype=object) for c in channels]
        share = Fraction(1, len(subsets))
        grid = list(itertools.product(*(range(s[0]) for s in sizes)))
        rows, outputs = [[] for _ in grid], []
        for subset in subsets:
            for codes in itertools.product(*(range(sizes[j][1]) for j in subset)):
                outputs.append([*subset, *(int(channels[j].outputs[c]) for j, c in zip(subset, codes, strict=True))])
                pairs = list(zip(subset, codes, strict=True))
                for i, point in enumerate(grid):
                    rows[i].append(share * math.prod((dense[j][point[j], c] for j, c in pairs), start=Fraction(1)))
        inputs = [tuple(float(channels[j].inputs[p]) for j, p in enumerate(point)) for point in grid]
        return Channel(inputs, np.array(outputs, dtype=np.int64), np.array(rows, dtype=object))

    def channel_mixture(self, x):
        """The product of each attribute's rounding mixture, as rows of :meth:`channel`."""
        parts = [attribute.channel_mixture(float(v)) for attribute, v in zip(self._attributes, x, strict=True)]
        sizes = [len(attribute.grid()) for attribute in self._attributes]
        rows, weights = [], []
        for combo in itertools.product(*(zip(r.tolist(), w.tolist(), strict=True) for r, w in parts)):
            index = 0
            for (row, _), size in zip(combo, sizes, strict=True):
                index = index * size + int(row)
            rows.append(index)
            weights.append(math.prod(w for _, w in combo))
        return np.array(rows), np.array(weights)
