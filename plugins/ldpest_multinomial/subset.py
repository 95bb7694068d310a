"""Subset selection (Ye and Barg 2018; Wang et al. 2016; docs/frequency-oracles.md).

Each person reports a set ``S`` of ``omega`` categories: with probability
``P_in`` the true category plus ``omega - 1`` others drawn uniformly, otherwise
``omega`` categories drawn uniformly from the ``d - 1`` others.  Every set
holding ``x`` then has probability ``P_in / C(d-1, omega-1)`` and every other set
``(1 - P_in) / C(d-1, omega)``: the likelihood ratio is
``P_in (d - omega) / ((1 - P_in) omega)``, and ``P_in = T / 2^64`` with ``T``
the largest integer for which it is proven ``<= e^a`` (Ye and Barg's
``P_in = omega e^a / (omega e^a + d - omega)``, made exact).

Reports are 0/1 vectors of length ``d`` with ``omega`` ones, or (``report_form="indices"``) the
``omega`` 0-based positions of the set, ascending: multi-freq-ldpy's ``SS_Client`` form, without
its order (it puts the true category first whenever the set holds it, so the order of its
reports reveals it; only the set is private, and only the set is read).  With
``p = P_in`` and ``q = (P_in (omega - 1) + (1 - P_in) omega) / (d - 1)``,
``ones_j ~ Binomial(n, q + (p - q) theta_j)``; ``theta_j = (ones_j / n - q) / (p - q)``
is unbiased with ``n Var = pi_j (1 - pi_j) / (p - q)^2``.  ``omega`` defaults to
the integer next to ``d / (e^a + 1)`` with the smaller worst-case variance.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from functools import lru_cache

import numpy as np

from ldpest import Channel, DataError, ParameterError
from ldpest.privacy.exact import (
    WORD,
    largest_threshold,
    random_words,
    ratio_within,
    require_gap,
    too_small,
    uniform_below,
    words_below,
)
from ldpest.stats.binomial import (
    AffineBinomialOracle,
    affine_binomial_worst_cases,
    cross_covariance_factors,
    cross_covariance_product,
    inclusion_pair_covariance,
)
from ldpest.util.labels import smallest_index_dtype
from ldpest.util.validation import check_positive_int, check_report_matrix

from .mechanisms import _CategoricalMechanism, _row_blocks, bit_reports, weighted_bit_sums

_FLOYD_BLOCK = 1 << 16  # rows per block of Floyd's sampler
_COIN_CELLS = 1 << 25  # cells per block of the coin sampler
_TRIES = 8  # candidate columns per row and round of the coin sampler's corrections
_TABLE_ENTRIES = 1 << 22  # largest table of subsets the table sampler builds (16 MB at d <= 32, 32 MB above)
_TABLE_ROWS = 1 << 15  # rows per block of the table sampler (2^14..2^17 timed: 2^15 best at n = 10^4..10^6)


def _sampler(d: int, omega: int) -> str:
    """``"table"`` where a subset of the other categories fits one word and there are at most 2^22 of the
    two sizes (``d <= 64``); else ``"floyd"`` or ``"coin"``, whichever is cheaper (all three are exact)."""
    if d <= 64 and math.comb(d - 1, omega) + math.comb(d - 1, omega - 1) <= _TABLE_ENTRIES:
        return "table"
    return "floyd" if _floyd_is_cheaper(d, omega) else "coin"


def _subset_masks(m: int, k: int) -> list[np.ndarray]:
    """For j = 0..k, every j-subset of ``0..m-1`` once, as bit masks (uint64): the j-subsets of the first
    i elements, then element i added to the (j-1)-subsets, for i = 0..m-1."""
    by_size = [np.zeros(1, dtype=np.uint64)] + [np.zeros(0, dtype=np.uint64)] * k
    for element in range(m):
        bit = np.uint64(1 << element)
        for j in range(k, 0, -1):
            by_size[j] = np.concatenate([by_size[j], by_size[j - 1] | bit])
    return by_size


@lru_cache(maxsize=2)
def _subset_table(d: int, omega: int) -> np.ndarray:
    """The ``omega - 1``-subsets of the ``d - 1`` other categories, then their ``omega``-subsets, as masks in
    the smallest unsigned dtype that holds ``d`` bits (read-only).  The two latest are kept: at most 2^22
    entries each, 16 MB up to d = 32 and 32 MB above (at d = 20 and epsilon 1, 15,504 entries: 62 kB)."""
    by_size = _subset_masks(d - 1, omega)
    table = np.concatenate(by_size[omega - 1:]).astype(np.uint32 if d <= 32 else np.uint64)
    table.flags.writeable = False
    return table


def _floyd_rows(d: int) -> int:
    """Rows per block of Floyd's sampler: at most 2^16, and at most 2^22 cells (int32 positions)."""
    return max(1, min(_FLOYD_BLOCK, (1 << 22) // d))


def _floyd_is_cheaper(d: int, omega: int) -> bool:
    """Floyd's sampler costs about 30 ns per member and report, the coin sampler about 3.5 ns per
    category (measured on the benchmark machine, n = 10^5..10^6; both are exact)."""
    return omega * 30 < d * 3.5 + 500


def log2_binomial(d: int, k: int) -> float:
    """``log2 C(d, k)``: exactly up to d = 10^4, beyond from log-gamma (``math.comb`` builds a number
    of up to ``d`` bits: 3 s at d = 10^6; log-gamma is within 1e-12 relative)."""
    if d <= 10 ** 4:
        return math.log2(math.comb(d, k))
    return (math.lgamma(d + 1) - math.lgamma(k + 1) - math.lgamma(d - k + 1)) / math.log(2)


def inclusion_threshold(epsilon: float, d: int, omega: int) -> int:
    """The largest ``T`` with ``T (d - omega) / ((2^64 - T) omega) <= e^epsilon`` (proven)."""
    guess = WORD * omega * math.exp(min(epsilon, 700.0)) / (omega * math.exp(min(epsilon, 700.0)) + d - omega)

    def ok(t: int) -> bool:
        return ratio_within(t * (d - omega), (WORD - t) * omega, epsilon)

    if not ok(WORD * omega // d):
        raise too_small(epsilon, "subset-selection")
    threshold = largest_threshold(ok, WORD * omega // d, WORD - 1, guess=min(guess, WORD - 1))
    if threshold * (d - omega) <= (WORD - threshold) * omega:  # sets holding x no likelier than others
        raise too_small(epsilon, "subset-selection")
    return threshold


def _probabilities(epsilon: float, d: int, omega: int) -> tuple[float, float]:
    """Ye and Barg's (p, q) as floats (for choosing omega)."""
    keep = omega * math.exp(min(epsilon, 700.0))
    p = keep / (keep + d - omega)
    return p, (p * (omega - 1) + (1 - p) * omega) / (d - 1)


def default_subset_size(epsilon: float, d: int) -> int:
    """``floor`` or ``ceil`` of ``d / (e^a + 1)`` (in ``1..d-1``), whichever has the smaller worst-case variance."""
    rule = d / (math.exp(min(epsilon, 700.0)) + 1)
    candidates = {min(max(1, k), d - 1) for k in (math.floor(rule), math.ceil(rule))}

    def worst(omega):
        p, q = _probabilities(epsilon, d, omega)
        return affine_binomial_worst_cases(d, q, p - q)[0] if p > q else math.inf

    return min(sorted(candidates), key=worst)


class SubsetSelection(AffineBinomialOracle, _CategoricalMechanism):
    """Report a set of ``omega`` categories that holds the true one with probability ``P_in``.

    ``theta_j = (ones_j / n - q) / (p - q)``, ``n Var = pi_j (1 - pi_j) / (p - q)^2``,
    ``p = P_in``, ``q = (P_in (omega - 1) + (1 - P_in) omega) / (d - 1)`` (module docstring).
    Reports are 0/1 arrays of shape (n, d) with ``omega`` ones per row.
    """

    parameter_help = {"epsilon": "privacy level epsilon > 0 of each report",
                      "categories": "the possible answers (labels), in order",
                      "subset_size": "omega, the categories in each report (default: the optimal d / (e^epsilon + 1))",
                      "report_form": "'bits' (default: d columns of 0/1) or 'indices' (omega columns: the 0-based "
                                     "positions of the set, as multi-freq-ldpy's SS_Client reports it)"}
    name = "subset-selection"
    report_dims = ("report", "category")

    def __init__(self, *, epsilon, categories, subset_size=None, report_form="bits"):
        super().__init__(epsilon=epsilon, categories=categories)
        if report_form not in ("bits", "indices"):
            raise ParameterError(f"report_form must be 'bits' or 'indices', got {report_form!r}")
        self._indices = report_form == "indices"
        d = self.d
        omega = default_subset_size(self.epsilon, d) if subset_size is None else \
            check_positive_int("subset_size", subset_size)
        if omega >= d:
            raise ParameterError(f"subset_size must be between 1 and d - 1 = {d - 1}, got {omega}")
        self._set_params(epsilon=self.epsilon, categories=self.categories, subset_size=omega,
                         **({"report_form": "indices"} if self._indices else {}))
        if self._indices:
            object.__setattr__(self, "report_dims", ("report", "member"))
        self._omega = omega
        self._in = inclusion_threshold(self.epsilon, d, omega)
        p = Fraction(self._in, WORD)
        self._exact = (p, (p * (omega - 1) + (1 - p) * omega) / (d - 1))
        self._p, self._q = float(self._exact[0]), float(self._exact[1])
        require_gap(self._p - self._q, self.epsilon, self.name)

    @property
    def subset_size(self) -> int:
        return self._omega

    @property
    def inclusion_probabilities(self) -> tuple[Fraction, Fraction]:
        """``(p, q)``: P(j in S) when ``x = j`` and when ``x != j``, exactly."""
        return self._exact

    def report_columns(self):
        if self._indices:
            return [f"member_{i + 1}" for i in range(self._omega)]
        return super().report_columns()

    def _privatize(self, codes, rng):
        n, d = codes.shape[0], self.d
        out = np.empty((n, self._omega) if self._indices else (n, d), dtype=self._report_dtype())
        subsets, rows_per_block = {"table": (self._table_subsets, _TABLE_ROWS),
                                   "floyd": (self._floyd_subsets, _floyd_rows(d)),
                                   "coin": (self._coin_subsets, max(1, _COIN_CELLS // d))}[_sampler(d, self._omega)]
        for rows in _row_blocks(n, d, rows_per_block):
            bits = subsets(codes[rows], rng)
            out[rows] = np.nonzero(bits)[1].reshape(-1, self._omega) if self._indices else bits
        return out

    def _table_subsets(self, codes, rng) -> np.ndarray:
        """A uniform rank into the table of the ``omega - 1``-subsets of the other categories if the set holds
        ``x`` (probability ``P_in``), of their ``omega``-subsets if not; every set of the right kind then has
        probability ``1 / C(d-1, k)`` exactly.  Other ``e`` stands for category ``e + (e >= x)``: the mask's
        bits at and above ``x`` move up one, and bit ``x`` is the coin.  0.75 words a report."""
        n, d = codes.shape[0], self.d
        table = _subset_table(d, self._omega)
        with_x = math.comb(d - 1, self._omega - 1)
        holds_x = words_below(rng, n, self._in)
        rank = np.empty(n, dtype=np.int64)
        rows = np.flatnonzero(holds_x)
        rank[rows] = uniform_below(rng, with_x, rows.size)
        rows = np.flatnonzero(~holds_x)
        rank[rows] = uniform_below(rng, table.size - with_x, rows.size) + with_x
        others = table.take(rank)
        one = table.dtype.type(1)
        x = codes.astype(table.dtype)
        below_x = (one << x) - one
        masks = (others & below_x) | ((others & ~below_x) << one) | (holds_x.astype(table.dtype) << x)
        octets = masks.astype(masks.dtype.newbyteorder("<"), copy=False).view(np.uint8).reshape(n, -1)
        return np.unpackbits(octets, axis=1, count=d, bitorder="little")

    def _report_dtype(self):
        return smallest_index_dtype(self.d) if self._indices else np.uint8

    def _floyd_subsets(self, codes, rng) -> np.ndarray:
        """Floyd's algorithm, vectorised over rows: to pick k of 0..D-1, for j = D-k .. D-1 draw
        t uniform on 0..j and add t, or j if t is already chosen; every k-subset then has
        probability 1 / C(D, k) exactly.  Element e stands for category e + (e >= x).  Rows that
        pick omega others start one step earlier (j = D - omega) than rows holding x."""
        n, d = codes.shape[0], self.d
        out = np.zeros((n, d), dtype=np.uint8)
        flat = out.reshape(-1)
        holds_x = random_words(rng, n) < np.uint64(self._in)
        x = codes.astype(np.int32)
        start = np.arange(n, dtype=np.int32) * np.int32(d)  # rows * d < 2^31 (blocks of at most 2^22 cells)
        first = d - 1 - self._omega
        rows = np.flatnonzero(~holds_x)
        position = rng.integers(0, first + 1, size=rows.size, dtype=np.int32)
        position += position >= x[rows]
        flat[position + start[rows]] = 1  # the first pick: nothing is taken yet
        for j in range(first + 1, d - 1):
            position = rng.integers(0, j + 1, size=n, dtype=np.int32)
            position += position >= x
            position += start
            taken = np.flatnonzero(flat[position])
            position[taken] = start[taken] + j + (x[taken] <= j)  # element j's cell instead
            flat[position] = 1
        out[np.arange(n), codes] = holds_x
        return out

    def _coin_subsets(self, codes, rng) -> np.ndarray:
        """Each other category joins on an i.i.d. coin, then uniformly random members leave (or
        uniformly random non-members join) one at a time until the set has its size.  Every step
        treats the other categories alike, so the law of the set is invariant under their
        permutations and, having a fixed size, uniform.  A uniform member (non-member) is found by
        drawing uniform columns until one is (TRIES per round; the first hit is uniform)."""
        n, d = codes.shape[0], self.d
        rows = np.arange(n)
        holds_x = random_words(rng, n) < np.uint64(self._in)
        target = self._omega - holds_x.astype(np.int64)
        coin = np.uint8(min(0xFF, max(1, round(0x100 * self._omega / (d - 1)))))  # any coin is exact here
        octets = random_words(rng, -(-n * d // 8)).view(np.uint8)[: n * d].reshape(n, d)
        out = (octets < coin).view(np.uint8)
        out[rows, codes] = 0
        size = np.count_nonzero(out, axis=1)
        flat = out.reshape(-1)
        active = np.flatnonzero(size != target)
        while active.size:
            column = rng.integers(0, d, size=(active.size, _TRIES))
            cell = active[:, None] * d + column
            leaving = (size[active] > target[active])[:, None]
            usable = np.where(leaving, flat[cell] == 1, (flat[cell] == 0) & (column != codes[active][:, None]))
            first = usable.argmax(axis=1)
            hit = usable[np.arange(active.size), first]
            flat[cell[hit, first[hit]]] ^= 1
            size[active[hit]] += np.where(leaving[hit, 0], -1, 1)
            active = active[size[active] != target[active]]
        out[rows, codes] = holds_x
        return out

    def encode_reports(self, values):
        if self._indices:
            return self._index_reports(values)
        values = bit_reports(values, self)
        sizes = values.sum(axis=1, dtype=np.int64)
        wrong = sizes != self._omega
        if wrong.any():
            raise DataError(f"reports of {self.name!r} must hold subset_size = {self._omega} ones; "
                            f"{int(wrong.sum())} do not", row=int(np.flatnonzero(wrong)[0]))
        return values

    def _index_reports(self, values):
        """``omega`` distinct 0-based positions per report, in any order (stored ascending)."""
        values = np.asarray(values)
        if values.ndim == 1 and self._omega == 1:  # one position per report: one column
            values = values[:, None]
        values = check_report_matrix(values, self._omega, self.name,
                                     f"subset_size = {self._omega} positions (report_form='indices')")
        if values.dtype.kind == "f" and (not np.all(np.isfinite(values)) or np.any(values != np.round(values))):
            raise DataError(f"reports of {self.name!r} must be whole positions 0..{self.d - 1}")
        outside = (values < 0) | (values >= self.d)
        if outside.any():
            raise DataError(f"{int(outside.any(axis=1).sum())} report(s) hold a position outside 0..{self.d - 1}",
                            row=int(np.flatnonzero(outside.any(axis=1))[0]))
        values = np.sort(values.astype(self._report_dtype()), axis=1)
        repeated = (np.diff(values, axis=1) == 0).any(axis=1)
        if repeated.any():
            raise DataError(f"{int(repeated.sum())} report(s) name a category twice (a set holds each once)",
                            row=int(np.flatnonzero(repeated)[0]))
        return values

    def support_ratio(self) -> float:
        """``p (d - k) / ((1 - p) k)``: a given set has probability ``p / C(d-1, k-1)`` from an input inside it
        and ``(1 - p) / C(d-1, k)`` from one outside (k = subset_size, p = P(x in S))."""
        p, k = self._exact[0], self._omega
        return float(p * (self.d - k) / ((1 - p) * k))

    def report_support(self, reports):
        if not self._indices:
            return np.asarray(reports, dtype=np.uint8)
        members = np.zeros((reports.shape[0], self.d), dtype=np.uint8)
        members[np.arange(reports.shape[0])[:, None], reports] = 1
        return members

    def channel(self, max_categories: int = 12) -> Channel:
        """Every set of ``omega`` categories, with the implemented probabilities as fractions."""
        if self.d > max_categories:
            raise ParameterError(f"the channel has C({self.d}, {self._omega}) outputs; "
                                 f"enumerate it for d <= {max_categories}")
        outputs = np.zeros((math.comb(self.d, self._omega), self.d), dtype=np.uint8)
        for row, subset in enumerate(itertools.combinations(range(self.d), self._omega)):
            outputs[row, list(subset)] = 1
        members = outputs.astype(bool)
        p = Fraction(self._in, WORD)
        inside = p / math.comb(self.d - 1, self._omega - 1)
        outside = (1 - p) / math.comb(self.d - 1, self._omega)
        matrix = np.where(members.T, np.array(inside, dtype=object), np.array(outside, dtype=object))
        if self._indices:
            outputs = np.nonzero(members)[1].reshape(-1, self._omega).astype(self._report_dtype())
        return Channel(self.categories, outputs, matrix)

    def bit_column_statistic(self):
        """Bit reports hold ``subset_size`` ones each; reports of positions are not bit columns."""
        return None if self._indices else ("ones", self._omega)

    def frequency_statistics(self, reports):
        if self._indices:
            return {"ones": np.bincount(np.asarray(reports).ravel(), minlength=self.d).astype(np.int64)}
        return {"ones": reports.sum(axis=0, dtype=np.int64)}

    def weighted_support(self, reports, weights) -> np.ndarray:
        """``[sum w_i 1{j in S_i}, sum w_i^2 1{j in S_i}]`` (design weights), from bits or positions."""
        if not self._indices:
            return weighted_bit_sums(reports, weights)
        members = np.asarray(reports, dtype=np.intp).ravel()
        each = np.repeat(weights, self._omega)
        return np.stack([np.bincount(members, weights=each, minlength=self.d),
                         np.bincount(members, weights=each * each, minlength=self.d)])

    count_statistic = "ones"

    def binomial_model(self):
        """ones_j ~ Binomial(n, q + (p - q) theta_j)."""
        return self._q, self._p - self._q

    cross_covariance_columns = True

    def frequency_cross_covariance(self, theta, vector):
        return cross_covariance_product(theta, vector, *self._pair_constants())

    def frequency_cross_covariance_factors(self, theta):
        return cross_covariance_factors(theta, *self._pair_constants())

    def _pair_constants(self) -> tuple[float, float]:
        """``(c0, c1)`` of ``n Cov(theta_hat_i, theta_hat_j)``: sets of ``omega`` categories have ``P(i, j in S |
        x = i) = P_in (omega - 1) / (d - 1)`` and, for ``x`` outside the pair, ``(P_in (omega - 1)(omega - 2) +
        (1 - P_in) omega (omega - 1)) / ((d - 1)(d - 2))`` (:func:`ldpest.stats.binomial.inclusion_pair_covariance`)."""
        d, omega, p_in = self.d, self._omega, self._p
        neither = 0.0 if d < 3 else (p_in * (omega - 1) * (omega - 2) + (1 - p_in) * omega * (omega - 1)) / (
            (d - 1) * (d - 2))
        return inclusion_pair_covariance(self._p, self._q, p_in * (omega - 1) / (d - 1), neither)

    def binomial_top_complement(self):
        """``1 - p`` exactly (positive where ``p`` rounds to 1 in float64)."""
        return float(1 - self._exact[0])

    def report_bits(self):
        return log2_binomial(self.d, self._omega)
