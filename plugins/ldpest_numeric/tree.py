"""Mechanisms for ranges, CDFs and quantiles of bounded numbers (docs/numeric.md, "Ranges, CDFs
and quantiles"): ``hierarchical-histogram`` and ``haar-histogram``.

Both cut ``[low, high]`` into ``bins`` equal leaves (a number's leaf is
``floor((x - low) / (high - low) bins)``, ``high`` in the last) and let each device pick one level
of a tree over the leaves uniformly, by a draw that ignores its number; the report says the
level and privatises one thing about that level, so each report is epsilon-LDP and the level is
public.

* ``hierarchical-histogram`` (Cormode, Kulkarni, Srivastava 2019): a ``branching``-ary tree; the
  ``branching^l`` nodes of level ``l`` (``l = 1 .. h``, ``bins = branching^h``) are the
  categories of a frequency oracle that sends the device's node at that level.  Per level the
  oracle is ``randomized-response`` (k-RR: the node kept with ``p = e^eps / (e^eps + k - 1)``,
  else one of the others uniformly) or ``optimized-unary`` (OUE, Wang et al. 2017: the node's bit
  is 1 with probability 1/2, every other bit with ``q = 1 / (e^eps + 1)``), whichever has the
  smaller variance of a node's frequency at a uniform truth (``oracles="auto"``).  Reports are
  the level and the level's nodes as bits, packed little-endian into bytes: k-RR sets one bit.
* ``haar-histogram`` (the Haar variant, Cormode et al.'s HaarHRR): a binary tree; at level ``l``
  the device's Haar coefficient is its node ``j`` among the ``2^(l-1)`` nodes and the sign ``s``
  (+1 in the left half, -1 in the right); it sends a uniform row ``r`` of the Hadamard matrix of
  order ``2^(l-1)`` and the bit of ``s H[r, j]``, flipped with probability ``1 - p``,
  ``p / (1 - p) <= e^eps``.

Every probability is an integer threshold on uniform 64-bit words (``ldpest.privacy.exact``) and
the level an exact uniform draw, so the channel is exact: :meth:`channel` enumerates it for
small trees, and :meth:`level_ratios` proves each level's worst ratio for any tree.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from ldpest import Channel, DataError, ParameterError
from ldpest.privacy.exact import WORD, keep_threshold, ratio_within, require_gap, select, words_below
from ldpest.stats.transforms import fwht
from ldpest.util.validation import check_positive_int

from .bounds import BoundedMechanism
from .treefit import HaarFit, TreeFit

ORACLES = ("randomized-response", "optimized-unary")
MAX_BINS = 1 << 14
_CHANNEL_OUTPUTS = 1 << 13
_BLOCK_BITS = 1 << 18  # bits drawn per block of OUE rows: 275 against 341 ms at 10^6 records with 2^24 (in cache)
_LANES = np.uint64(0x0101010101010101)  # bit 0 of each byte of a 64-bit word
_LANE_ROWS = 255  # rows whose 0/1 lanes add up without overflowing a byte
_GROUPS = 16  # sums of 255 rows handled at once (a block of 4080 rows stays in cache)


def packed_bit_sums(rows: np.ndarray) -> np.ndarray:
    """The count of 1s in each bit column of ``rows`` (``(m, w)`` uint8, little-endian bits).

    Each row is read as 64-bit words; ``(word >> b) & 0x0101...01`` puts bit ``b`` of its 8 bytes
    in 8 byte lanes, and 255 such words add up with no carry between lanes, so 8 shifts count
    every bit.  At m = 200,000, w = 128: 0.028 s, 5.6x unpacking and summing and 4.4x a histogram
    of the bytes (``bench/bench_numeric_parts.py``)."""
    m, width = rows.shape
    words = np.ascontiguousarray(np.pad(rows, ((0, 0), (0, -width % 8)))).view(np.uint64)
    size = words.shape[1]
    counts = np.zeros((8, size * 8), dtype=np.int64)  # [bit, byte]
    block = _LANE_ROWS * _GROUPS
    whole = m - m % block
    plane = np.empty((block, size), dtype=np.uint64)
    for start in range(0, whole, block):
        for bit in range(8):
            np.right_shift(words[start:start + block], np.uint64(bit), out=plane)
            np.bitwise_and(plane, _LANES, out=plane)
            lanes = plane.reshape(_LANE_ROWS, _GROUPS, size).sum(axis=0, dtype=np.uint64)
            counts[bit] += lanes.view(np.uint8).reshape(_GROUPS, size * 8).sum(axis=0, dtype=np.int64)
    rest = np.unpackbits(words[whole:].view(np.uint8), axis=1, bitorder="little")
    counts += rest.reshape(-1, size * 8, 8).sum(axis=0, dtype=np.int64).T
    return counts.T.ravel()[:width * 8]


def _parities(size: int) -> np.ndarray:
    """``popcount(i) mod 2`` for ``i < size`` (``H[r, j] = (-1)^parity(r & j)``)."""
    index, parity = np.arange(size), np.zeros(size, dtype=np.uint8)
    for bit in range(max(size - 1, 1).bit_length()):
        parity ^= ((index >> bit) & 1).astype(np.uint8)
    return parity


PARITY = _parities(MAX_BINS)


class _LeafMechanism(BoundedMechanism):
    """The common part: leaves, levels and what an estimator needs to know about them."""

    default_estimator = "cdf"
    report_dims = ("report", "field")
    example_params = {"low": 0, "high": 500, "bins": 64}

    @property
    def bins(self) -> int:
        return self._params["bins"]

    @property
    def depth(self) -> int:
        """``h``: the number of levels a device can report."""
        return len(self.level_sizes)

    @property
    def level_sizes(self) -> list[int]:
        """The number of categories at each level ``1 .. h`` (nodes, or Haar coefficients)."""
        raise NotImplementedError

    def edges(self) -> np.ndarray:
        """The ``bins + 1`` leaf edges in the data's units."""
        return self.low + (self.high - self.low) * np.arange(self.bins + 1) / self.bins

    def leaves(self, x) -> np.ndarray:
        """Each number's leaf ``0 .. bins - 1`` (``high`` in the last)."""
        scaled = (np.asarray(x, dtype=np.float64) - self.low) * (self.bins / (self.high - self.low))
        return np.minimum(scaled.astype(np.int64), self.bins - 1)

    def _levels(self, n: int, rng) -> np.ndarray:
        return rng.integers(1, self.depth + 1, size=n).astype(np.int64)

    def channel_mixture(self, x):
        """A number's law is its leaf's row."""
        return np.array([int(self.leaves([float(x)])[0])]), np.array([1.0])

    def _leaf_inputs(self) -> list[float]:
        """One number in each leaf (its centre), the channel's inputs."""
        edges = self.edges()
        return ((edges[:-1] + edges[1:]) / 2).tolist()


def _power_of(bins: int, branching: int) -> int | None:
    depth, size = 0, 1
    while size < bins:
        size *= branching
        depth += 1
    return depth if size == bins and depth >= 1 else None


class LevelOracle:
    """One level's frequency oracle over ``k`` nodes, with the probabilities it implements:
    ``P(bit_j = 1) = q + (p - q) theta_j`` for every node ``j`` (k-RR: the reported node's bit)."""

    def __init__(self, kind: str, k: int, epsilon: float):
        self.kind, self.k = kind, k
        if kind == "randomized-response":
            self.threshold = keep_threshold(epsilon, k - 1)  # keep the node when a word is below it
            p = Fraction(self.threshold, WORD)
            self.exact = (p, (1 - p) / (k - 1))
        else:
            self.threshold = keep_threshold(epsilon)  # another node's bit is 1 when a word is not below it
            self.exact = (Fraction(1, 2), Fraction(WORD - self.threshold, WORD))
        self.p, self.q = (float(v) for v in self.exact)
        require_gap(self.p - self.q, epsilon, f"the {kind} oracle over {k} nodes")

    def node_variance(self) -> float:
        """``n Var(theta_hat_j)`` of one node at the uniform truth ``theta_j = 1 / k``."""
        pi = self.q + (self.p - self.q) / self.k
        return pi * (1 - pi) / (self.p - self.q) ** 2

    def worst_ratio(self) -> Fraction:
        """``max Q(z | x) / Q(z | x')`` over outputs and nodes, exactly."""
        p, q = self.exact
        return p / q if self.kind == "randomized-response" else (1 - q) / q

    def sample_bits(self, nodes: np.ndarray, rng) -> np.ndarray:
        """``(m, k)`` booleans: each row the level's bits for one device's node."""
        m, rows = nodes.shape[0], np.arange(nodes.shape[0])
        if self.kind == "randomized-response":
            keep = words_below(rng, m, self.threshold)
            other = rng.integers(0, self.k - 1, size=m)
            other += other >= nodes  # uniform over the k - 1 other nodes
            reported = select(keep, nodes, other)
            bits = np.zeros((m, self.k), dtype=bool)
            bits[rows, reported] = True
            return bits
        bits = ~words_below(rng, (m, self.k), self.threshold)
        bits[rows, nodes] = words_below(rng, m, WORD // 2)
        return bits

    def level_law(self, node: int) -> tuple[np.ndarray, np.ndarray]:
        """``(bit patterns, probabilities)`` of every output at this level for a device in ``node``
        (for small levels: the channel's enumeration)."""
        p, q = self.exact
        if self.kind == "randomized-response":
            patterns = np.eye(self.k, dtype=bool)
            probs = np.array([p if j == node else q for j in range(self.k)], dtype=object)
            return patterns, probs
        patterns = np.array(list(itertools.product((False, True), repeat=self.k)), dtype=bool)[:, ::-1]
        ones = patterns.sum(axis=1) - patterns[:, node]
        probs = [(p if own else 1 - p) * q ** int(o) * (1 - q) ** (self.k - 1 - int(o))
                 for own, o in zip(patterns[:, node], ones, strict=True)]
        return patterns, np.array(probs, dtype=object)


class HierarchicalHistogram(_LeafMechanism):
    """A ``branching``-ary tree over ``bins`` leaves, one frequency oracle per level (module
    docstring)."""

    name = "hierarchical-histogram"
    parameter_help = {
        **BoundedMechanism.parameter_help,
        "bins": "leaves of the tree: equal cells of [low, high], a power of branching (at most 2^14)",
        "branching": "children of each node (4 by default, the best for range queries at most epsilons)",
        "oracles": "'auto' (per level the oracle with the smaller variance) or one of "
                   "'randomized-response', 'optimized-unary' for each level, top first",
    }

    def __init__(self, *, epsilon, low, high, bins=1024, branching=4, oracles="auto", outside="refuse",
                 units=None, names=None):
        bins = check_positive_int("bins", bins, 2)
        branching = check_positive_int("branching", branching, 2)
        if bins > MAX_BINS:
            raise ParameterError(f"bins must be at most 2^14 = {MAX_BINS}, got {bins}")
        depth = _power_of(bins, branching)
        if depth is None:
            near = branching ** max(round(math.log(bins, branching)), 1)
            raise ParameterError(f"bins must be a power of branching = {branching} (e.g. {near}), got {bins}")
        super().__init__(epsilon=epsilon, low=low, high=high, outside=outside, units=units, names=names,
                         bins=bins, branching=branching)
        sizes = [branching ** level for level in range(1, depth + 1)]
        if oracles == "auto":
            oracles = [min(ORACLES, key=lambda kind, k=k: LevelOracle(kind, k, self.epsilon).node_variance())
                       for k in sizes]
        if isinstance(oracles, str) or len(oracles) != depth or any(o not in ORACLES for o in oracles):
            raise ParameterError(f"oracles must be 'auto' or a list of {depth} names from {list(ORACLES)} "
                                 f"(one per level, top first), got {oracles!r}")
        self._set_params(**self._params, oracles=list(oracles))
        self._oracles = [LevelOracle(kind, k, self.epsilon) for kind, k in zip(oracles, sizes, strict=True)]
        self._bytes = math.ceil(bins / 8)

    @property
    def branching(self) -> int:
        return self._params["branching"]

    @property
    def level_sizes(self):
        return [oracle.k for oracle in self._oracles]

    @property
    def oracles(self) -> list[LevelOracle]:
        return list(self._oracles)

    def report_columns(self):
        return ["level", *(f"byte_{i}" for i in range(self._bytes))]

    def nodes(self, leaves, level: int) -> np.ndarray:
        """The node at ``level`` of each leaf."""
        return np.asarray(leaves) // self.branching ** (self.depth - level)

    def _privatize(self, x, rng):
        leaves, n = self.leaves(x), x.shape[0]
        levels = self._levels(n, rng)
        out = np.zeros((n, 1 + self._bytes), dtype=np.uint8)
        out[:, 0] = levels
        for level, oracle in enumerate(self._oracles, start=1):
            rows = np.flatnonzero(levels == level)
            width = math.ceil(oracle.k / 8)
            step = max(_BLOCK_BITS // oracle.k, 1)
            for start in range(0, rows.size, step):
                block = rows[start:start + step]
                bits = oracle.sample_bits(self.nodes(leaves[block], level), rng)
                out[block, 1:1 + width] = np.packbits(bits, axis=1, bitorder="little")
        return out

    def level_bits(self, values, level: int) -> np.ndarray:
        """The bits of the reports (rows of stored values at ``level``), as ``(m, k)`` booleans."""
        k = self._oracles[level - 1].k
        return np.unpackbits(values[:, 1:1 + math.ceil(k / 8)], axis=1, count=k, bitorder="little").astype(bool)

    def encode_reports(self, values):
        values = np.asarray(values)
        width = 1 + self._bytes
        if values.ndim != 2 or values.shape[1] != width or values.dtype.kind not in "iuf":
            raise DataError(f"reports of {self.name!r} must be {width} integer columns (level, then "
                            f"{self._bytes} bytes of bits), got shape {values.shape}")
        if values.dtype.kind != "u" or values.dtype.itemsize != 1:
            bad = ~np.isin(values, np.arange(256))
            if bad.any():
                raise DataError(f"reports of {self.name!r} hold bytes 0..255, got {values[bad][0]!r}",
                                row=int(np.flatnonzero(bad.any(axis=1))[0]))
        values = values.astype(np.uint8)
        levels = values[:, 0]
        bad = (levels < 1) | (levels > self.depth)
        if bad.any():
            raise DataError(f"reports of {self.name!r} have a level outside 1..{self.depth}: "
                            f"{int(levels[bad][0])}", row=int(np.flatnonzero(bad)[0]))
        for level, oracle in enumerate(self._oracles, start=1):
            rows = np.flatnonzero(levels == level)
            bits = np.unpackbits(values[rows, 1:], axis=1, bitorder="little")
            wrong = bits[:, oracle.k:].any(axis=1)
            if oracle.kind == "randomized-response":
                wrong |= bits[:, :oracle.k].sum(axis=1) != 1
            if wrong.any():
                what = "exactly one node bit" if oracle.kind == "randomized-response" else "no bit past its nodes"
                raise DataError(f"a report at level {level} ({oracle.kind} over {oracle.k} nodes) must have "
                                f"{what}", row=int(rows[np.flatnonzero(wrong)[0]]))
        return values

    def statistics(self, values) -> dict[str, np.ndarray]:
        """Additive: the reports at each level and, per level, the count of 1 bits of each node."""
        levels = np.ascontiguousarray(values[:, 0])  # one strided pass, not one per level
        ones = []
        for level, oracle in enumerate(self._oracles, start=1):
            rows = np.compress(levels == level, values, axis=0)[:, 1:1 + math.ceil(oracle.k / 8)]
            ones.append(packed_bit_sums(rows)[:oracle.k])
        return {"levels": np.bincount(levels, minlength=self.depth + 1)[1:].astype(np.int64),
                "ones": np.concatenate(ones)}

    def simulate_statistics(self, leaf_masses, n: int, rng) -> dict[str, np.ndarray]:
        """An exact draw of :meth:`statistics` for ``n`` devices with leaves drawn from
        ``leaf_masses``: levels ~ Multinomial(n, 1/h), node counts ~ Multinomial(n_l, theta_l), then
        k-RR reports ~ Multinomial(n_l, q + (p - q) theta_l) and OUE ones ~ Bin(c_j, p) + Bin(n_l - c_j, q)."""
        leaf_masses = np.asarray(leaf_masses, dtype=np.float64)
        counts = rng.multinomial(n, np.full(self.depth, 1.0 / self.depth))
        ones = []
        for level, (oracle, n_l) in enumerate(zip(self._oracles, counts, strict=True), start=1):
            theta = np.bincount(self.nodes(np.arange(self.bins), level), weights=leaf_masses, minlength=oracle.k)
            theta = np.clip(theta / theta.sum(), 0.0, 1.0)
            if oracle.kind == "randomized-response":
                law = oracle.q + (oracle.p - oracle.q) * theta
                ones.append(rng.multinomial(n_l, law / law.sum()))
            else:
                c = rng.multinomial(n_l, theta / theta.sum())
                ones.append(rng.binomial(c, oracle.p) + rng.binomial(n_l - c, oracle.q))
        return {"levels": counts.astype(np.int64), "ones": np.concatenate(ones).astype(np.int64)}

    def fit(self, arrays) -> TreeFit:
        return TreeFit(self, arrays["levels"], arrays["ones"])

    def level_ratios(self) -> list[Fraction]:
        """Each level's worst likelihood ratio, exactly (the level draw is the same for every
        number, so a report's ratio is its level's)."""
        return [oracle.worst_ratio() for oracle in self._oracles]

    def proven_private(self) -> bool:
        """Every level's ratio is at most ``e^epsilon``, proven."""
        return all(ratio_within(r.numerator, r.denominator, self.epsilon) for r in self.level_ratios())

    def channel(self) -> Channel:
        """Dense and exact for small trees: outputs ``(level, bytes)``, ``Q = (1 / h) Q_level``."""
        total = sum(oracle.k if oracle.kind == "randomized-response" else 2 ** oracle.k for oracle in self._oracles)
        if total > _CHANNEL_OUTPUTS:
            raise ParameterError(f"the channel has {total} outputs; enumerate it for small trees (bins = 16, "
                                 "branching = 2 or 4) and prove larger ones level by level (level_ratios)")
        outputs, columns = [], []
        share = Fraction(1, self.depth)
        for level, oracle in enumerate(self._oracles, start=1):
            patterns, _ = oracle.level_law(0)
            packed = np.zeros((patterns.shape[0], self._bytes), dtype=np.uint8)
            packed[:, :math.ceil(oracle.k / 8)] = np.packbits(patterns, axis=1, bitorder="little")
            outputs.append(np.column_stack([np.full(patterns.shape[0], level, dtype=np.uint8), packed]))
            column = [share * oracle.level_law(int(node))[1]
                      for node in self.nodes(np.arange(self.bins), level)]
            columns.append(np.array(column, dtype=object))
        return Channel(self._leaf_inputs(), np.concatenate(outputs).astype(np.int64),
                       np.concatenate(columns, axis=1))


class HaarHistogram(_LeafMechanism):
    """The Haar variant: each level's signed coefficient by Hadamard randomized response (module
    docstring).  Reports ``(level, row, bit)``."""

    name = "haar-histogram"
    parameter_help = {
        **BoundedMechanism.parameter_help,
        "bins": "leaves: equal cells of [low, high], a power of 2 (at most 2^14)",
    }

    def __init__(self, *, epsilon, low, high, bins=1024, outside="refuse", units=None, names=None):
        bins = check_positive_int("bins", bins, 2)
        if bins > MAX_BINS or _power_of(bins, 2) is None:
            raise ParameterError(f"bins must be a power of 2 up to 2^14, got {bins}")
        super().__init__(epsilon=epsilon, low=low, high=high, outside=outside, units=units, names=names, bins=bins)
        self._keep = keep_threshold(self.epsilon)
        self._exact = (Fraction(self._keep, WORD), 1 - Fraction(self._keep, WORD))
        require_gap(2 * self.p - 1, self.epsilon, self.name)

    @property
    def exact(self) -> tuple[Fraction, Fraction]:
        """``(p, 1 - p)``: the implemented probabilities of a truthful and a flipped bit."""
        return self._exact

    @property
    def p(self) -> float:
        return float(self._exact[0])

    @property
    def level_sizes(self):
        return [1 << (level - 1) for level in range(1, _power_of(self.bins, 2) + 1)]

    def report_columns(self):
        return ["level", "row", "bit"]

    def report_alphabet_size(self) -> int:
        """``(level, row, bit)``: two bits for each of the ``bins - 1`` coefficients."""
        return 2 * sum(self.level_sizes)

    def coefficient(self, leaves, level: int) -> tuple[np.ndarray, np.ndarray]:
        """The coefficient index (node at ``level``) and the sign bit (1 for +1: the left half)."""
        shift = self.depth - level
        return np.asarray(leaves) >> (shift + 1), ((np.asarray(leaves) >> shift) & 1) == 0

    def _privatize(self, x, rng):
        leaves, n = self.leaves(x), x.shape[0]
        levels = self._levels(n, rng)
        sizes = np.array(self.level_sizes)[levels - 1]
        rows = rng.integers(0, sizes).astype(np.int64)  # uniform on 0 .. 2^(level-1) - 1, exactly
        node, positive = self.coefficient(leaves, levels)
        bit = positive ^ PARITY[rows & node].astype(bool)
        bit ^= ~words_below(rng, n, self._keep)  # flipped with probability 1 - p
        return np.column_stack([levels, rows, bit]).astype(np.uint16)

    def encode_reports(self, values):
        values = np.asarray(values)
        if values.ndim != 2 or values.shape[1] != 3 or values.dtype.kind not in "iuf":
            raise DataError(f"reports of {self.name!r} must be 3 integer columns (level, row, bit), "
                            f"got shape {values.shape}")
        if values.dtype.kind == "f":
            whole = np.all(np.isfinite(values) & (values == np.round(values)), axis=1)
            if not whole.all():
                raise DataError(f"reports of {self.name!r} must be integers", row=int(np.flatnonzero(~whole)[0]))
        values = values.astype(np.int64)
        levels = values[:, 0]
        bad = (levels < 1) | (levels > self.depth)
        if bad.any():
            raise DataError(f"reports of {self.name!r} have a level outside 1..{self.depth}",
                            row=int(np.flatnonzero(bad)[0]))
        sizes = np.array(self.level_sizes)[levels - 1]
        bad = (values[:, 1] < 0) | (values[:, 1] >= sizes) | ((values[:, 2] != 0) & (values[:, 2] != 1))
        if bad.any():
            raise DataError(f"reports of {self.name!r} need a row in 0..2^(level-1) - 1 and a bit 0 or 1",
                            row=int(np.flatnonzero(bad)[0]))
        return values.astype(np.uint16)

    def statistics(self, values) -> dict[str, np.ndarray]:
        """Additive: the reports at each level and the count of each ``(level, row, bit)``."""
        values = values.astype(np.int64)
        offsets = np.concatenate([[0], np.cumsum([2 * size for size in self.level_sizes])])
        index = offsets[values[:, 0] - 1] + 2 * values[:, 1] + values[:, 2]
        return {"levels": np.bincount(values[:, 0], minlength=self.depth + 1)[1:].astype(np.int64),
                "signs": np.bincount(index, minlength=int(offsets[-1])).astype(np.int64)}

    def coefficients(self, leaf_masses) -> list[np.ndarray]:
        """Each level's Haar coefficients ``mass(left half) - mass(right half)`` of ``leaf_masses``."""
        masses, out = np.asarray(leaf_masses, dtype=np.float64), []
        for _ in self.level_sizes:
            out.append(masses[0::2] - masses[1::2])
            masses = masses[0::2] + masses[1::2]
        return out[::-1]

    def simulate_statistics(self, leaf_masses, n: int, rng) -> dict[str, np.ndarray]:
        """An exact draw of :meth:`statistics`: levels ~ Multinomial(n, 1/h), rows uniform, and the
        bits sent with row ``r`` ~ Bin(count_r, (1 - p) + (2p - 1) (1 + (H w)_r) / 2)."""
        counts = rng.multinomial(n, np.full(self.depth, 1.0 / self.depth))
        p = self.p
        signs = []
        for size, n_l, w in zip(self.level_sizes, counts, self.coefficients(leaf_masses), strict=True):
            rows = rng.multinomial(n_l, np.full(size, 1.0 / size))
            plus = np.clip((1 + fwht(w)) / 2, 0.0, 1.0)
            ones = rng.binomial(rows, (1 - p) + (2 * p - 1) * plus)
            signs.append(np.stack([rows - ones, ones], axis=1).ravel())
        return {"levels": counts.astype(np.int64), "signs": np.concatenate(signs).astype(np.int64)}

    def fit(self, arrays) -> HaarFit:
        return HaarFit(self, arrays["levels"], arrays["signs"])

    def level_ratios(self) -> list[Fraction]:
        p, q = self.exact
        return [p / q] * self.depth

    def proven_private(self) -> bool:
        p, q = self.exact
        return ratio_within(p, q, self.epsilon)

    def channel(self) -> Channel:
        """Exact and structured: ``Q(level, r, b | x) = (p or 1 - p) / (h 2^(level - 1))``, two
        levels of probability per tree level (truthful bit or flipped)."""
        outputs = np.array([(level, r, b) for level, size in enumerate(self.level_sizes, start=1)
                            for r in range(size) for b in (0, 1)], dtype=np.int64)
        if len(outputs) > _CHANNEL_OUTPUTS:
            raise ParameterError(f"the channel has {len(outputs)} outputs; enumerate it for bins <= 4096")
        p, q = self.exact
        levels = [Fraction(1, self.depth * size) * prob for size in self.level_sizes for prob in (p, q)]
        leaves = np.arange(self.bins)[:, None]
        node, positive = self.coefficient(leaves, outputs[None, :, 0])
        truthful = outputs[None, :, 2].astype(bool) == (positive ^ PARITY[outputs[None, :, 1] & node].astype(bool))
        pattern = 2 * (outputs[None, :, 0] - 1) + (~truthful).astype(np.int64)
        return Channel.from_levels(self._leaf_inputs(), outputs, levels, pattern)
