"""Optimized local hashing (OLH; Wang, Blocki, Li and Jha 2017; docs/frequency-oracles.md).

Each person draws a hash function ``h_s`` from a public family, hashes the true
category into ``g`` values and reports ``(s, y)``, where ``y`` is ``g``-ary
randomized response of ``h_s(x)``: ``y = h_s(x)`` with probability ``p``,
otherwise uniform over the ``g - 1`` other values.  The seed is independent
of ``x``, so every likelihood ratio is at most ``p (g - 1) / (1 - p) <= e^a``
whatever the hash family; ``p = T / 2^64`` with ``T`` from
:func:`ldpest.privacy.exact.shared_keep_threshold` (the randomized-response threshold at
``d = g``, lowered by less than ``g - 1`` so that one word also picks the other value).

The hash family, chosen so that the estimate is *exactly* unbiased and fast
to decode: with the prime ``P`` (default ``2^31 - 1``), seeds ``s = (a, c)``,
``a`` uniform on ``1..P-1`` and ``c`` on ``0..P-1``,

    h_s(x) = floor(g * ((a x + c) mod P) / P).

For ``x != j < P`` the pair ``((a x + c) mod P, (a j + c) mod P)`` is uniform
over the ordered pairs of distinct residues, so the collision probability is
the same for every pair, ``kappa = sum_k n_k (n_k - 1) / (P (P - 1))`` with
``n_k`` the number of residues hashed to ``k``.  Hence a report *supports*
``j`` (``h_s(j) = y``) with probability ``p`` if ``x = j`` and
``q* = kappa p + (1 - kappa) (1 - p) / (g - 1)`` otherwise, independently over
reports: ``support_j ~ Binomial(n, q* + (p - q*) theta_j)``, the unbiased
estimate is ``theta_j = (support_j / n - q*) / (p - q*)`` and
``n Var = pi_j (1 - pi_j) / (p - q*)^2`` exactly.  (Wang et al.'s
``q* = 1 / g`` is the limit ``kappa -> 1 / g``.)

Decoding costs O(n d) but only four uint32 operations and a count per (report,
category): the preimage of ``y`` is an interval of residues, so ``h_s(j) = y`` iff
``(a j + c - L_y) mod P`` is below the interval's width, and that shifted residue
advances by ``a`` (mod P) per category (0.43-0.47 ns per pair at d = 10^4 on the
benchmark machine: 4.6 s for n = 10^6; docs/frequency-oracles.md).

``hash_family="xxh32"`` is the family of pure-ldp's ``LHClient`` and multi-freq-ldpy's
``LH_Client``, so that their reports ``(y, seed)`` are estimated as they are and ldpest's reports
are read by their servers: ``h_s(j) = xxh32(str(j), seed = s mod 2^32) mod g`` with ``j`` the
0-based position of the category and ``s`` uniform over 32 bits (the peers draw 63 bits; xxh32
reads the low 32).  Privacy does not depend on the hash (given ``s``, ``y`` is g-ary randomized
response of ``h_s(x)``).  The estimator takes the collision probability of this family to be
``1 / g``, as the peers' estimators do (``q* = 1 / g``, exactly their estimate); xxh32 is not a
universal family, so this is a measured fact rather than a theorem: over 2^20 seeds per pair the
collision frequencies of 200 pairs of categories agree with ``1 / g`` within binomial error
(tests/plugins/test_xxh32.py).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ldpest import Channel, DataError, ParameterError, VariationRatio
from ldpest.privacy.exact import (
    WORD,
    keep_or_other,
    random_words,
    require_gap,
    shared_keep_threshold,
    uniform_below,
)
from ldpest.stats.binomial import (
    AffineBinomialOracle,
    cross_covariance_factors,
    cross_covariance_product,
    inclusion_pair_covariance,
)
from ldpest.util.validation import check_positive_int, check_report_matrix

from .mechanisms import _CategoricalMechanism, _row_blocks
from .xxh32 import xxh32_decimal

MERSENNE_31 = (1 << 31) - 1  #: the default prime: residues and sums of two fit in uint32
MAX_HASH_RANGE = 1 << 20
_DECODE_ROWS = 1 << 15  # rows per decoding block: its six arrays (0.7 MB) stay in L2 (bench/bench_olh_decode.py)
_CHANNEL_LIMIT = 200_000
_TRIPLE_LIMIT = 1 << 26  # seeds x categories^3 x hash values: the triple collisions are enumerated below
_PRIVATIZE_ROWS = 1 << 14  # rows per privatise block: its temporaries stay in cache
HASH_FAMILIES = ("universal", "xxh32")
_SEED_MASK = (1 << 32) - 1


def is_prime(n: int) -> bool:
    """Deterministic Miller-Rabin for ``n < 3.3 * 10^24`` (these bases suffice)."""
    if n < 2:
        return False
    small = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
    if n in small:
        return True
    if any(n % p == 0 for p in small):
        return False
    d, r = n - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for base in small:
        x = pow(base, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def default_hash_range(epsilon: float) -> int:
    """Wang et al.'s optimum ``g = round(e^a + 1)``, kept in ``[2, 2^20]``."""
    return int(min(max(2, round(math.exp(min(epsilon, 30.0)) + 1)), MAX_HASH_RANGE))


class LocalHashing(AffineBinomialOracle, _CategoricalMechanism):
    """Optimized local hashing: report ``(a, c, y)``, ``y`` g-ary randomized response of
    ``h_{a,c}(x) = floor(g ((a x + c) mod P) / P)``.

    ``theta_j = (support_j / n - q*) / (p - q*)``, ``n Var = pi_j (1 - pi_j) / (p - q*)^2``
    with ``pi_j = q* + (p - q*) theta_j`` (module docstring; docs/frequency-oracles.md).
    Parameters: ``hash_range`` g (default ``round(e^a + 1)``), ``prime`` P (default
    ``2^31 - 1``; any prime with ``d <= P <= 2^31 - 1``; a small one makes the channel
    enumerable for tests); ``hash_family`` ``"universal"`` (the above) or ``"xxh32"``, the
    peers' hash, reports ``(value, seed)`` (module docstring).
    """

    parameter_help = {"epsilon": "privacy level epsilon > 0 of each report",
                      "categories": "the possible answers (labels), in order",
                      "hash_range": "g, the number of hash values (default: the optimal round(e^epsilon) + 1)",
                      "prime": "the prime of the universal hash family (a, c, y) -> ((a x + c) mod prime) mod g",
                      "hash_family": "'universal' (default; reports hash_a, hash_c, value) or 'xxh32' (pure-ldp's and "
                                     "multi-freq-ldpy's hash of str(position); reports value, seed)"}
    name = "local-hashing"
    report_dims = ("report", "field")

    def __init__(self, *, epsilon, categories, hash_range=None, prime=None, hash_family="universal"):
        super().__init__(epsilon=epsilon, categories=categories)
        g = default_hash_range(self.epsilon) if hash_range is None else check_positive_int("hash_range", hash_range, 2)
        if g > MAX_HASH_RANGE:
            raise ParameterError(f"hash_range must be at most 2^20, got {g}")
        if hash_family not in HASH_FAMILIES:
            raise ParameterError(f"hash_family must be one of {', '.join(HASH_FAMILIES)}, got {hash_family!r}")
        self._xxh32 = hash_family == "xxh32"
        if self._xxh32:
            object.__setattr__(self, "report_kind", "integer")  # 63-bit seeds: read exactly, not as float64
        self._g = g  # P(y = h(x)) = keep / 2^64 exactly, and each other value's share / 2^64
        self._keep, self._share = shared_keep_threshold(self.epsilon, g - 1)
        if self._xxh32:
            if prime is not None:
                raise ParameterError("prime belongs to the universal hash family; hash_family='xxh32' has none")
            self._set_params(epsilon=self.epsilon, categories=self.categories, hash_range=g, hash_family="xxh32")
            self._prime = None
            self._kappa = Fraction(1, g)  # the peers' model of xxh32 (module docstring)
        else:
            prime = check_positive_int("prime", MERSENNE_31 if prime is None else prime, 2)
            if not is_prime(prime) or prime > MERSENNE_31 or prime < max(self.d, g):
                raise ParameterError(f"prime must be a prime with max(d, hash_range) <= prime <= 2^31 - 1, got {prime}")
            self._set_params(epsilon=self.epsilon, categories=self.categories, hash_range=g, prime=prime)
            self._prime = prime
            self._lower = -(-np.arange(g + 1, dtype=np.int64) * prime // g)  # ceil(k P / g), < 2^51
            sizes = np.diff(self._lower)
            self._kappa = Fraction(int((sizes * (sizes - 1)).sum()), prime * (prime - 1))
        p = Fraction(self._keep, WORD)
        self._support = (p, self._kappa * p + (1 - self._kappa) * (1 - p) / (g - 1))
        self._p, self._q = float(self._support[0]), float(self._support[1])
        require_gap(self._p - self._q, self.epsilon, self.name)

    @property
    def hash_range(self) -> int:
        return self._g

    @property
    def collision_probability(self) -> Fraction:
        """``P(h_s(x) = h_s(j))`` for ``x != j``, exactly."""
        return self._kappa

    @property
    def support_probabilities(self) -> tuple[Fraction, Fraction]:
        """``(p, q*)``: P(a report supports j) when ``x = j`` and when ``x != j``, exactly."""
        return self._support

    @property
    def hash_family(self) -> str:
        return "xxh32" if self._xxh32 else "universal"

    def report_columns(self):
        return ["value", "seed"] if self._xxh32 else ["hash_a", "hash_c", "value"]

    def xxh32_hash(self, seed, x) -> np.ndarray:
        """``h_s(x) = xxh32(str(x), seed = s mod 2^32) mod g``, elementwise (``hash_family='xxh32'``)."""
        return (xxh32_decimal(x, seed) % np.uint32(self._g)).astype(np.int64)

    def hash(self, a, c, x) -> np.ndarray:
        """``h_{a,c}(x) = floor(g ((a x + c) mod P) / P)``, elementwise.

        Exact in float64: ``g r < 2^51`` is exact, and ``g r / P`` (not an integer for ``r > 0``,
        P being a prime above g and r) lies at least ``1 / P > 2^-31`` from an integer, while
        the two roundings of ``g r * (1 / P)`` move it by less than ``2^-32``."""
        a, c, x = (np.asarray(v, dtype=np.uint64) for v in (a, c, x))
        residue = (a * x + c) % np.uint64(self._prime)
        return self._bucket(residue)

    def _bucket(self, residue) -> np.ndarray:
        scaled = residue.astype(np.float64)
        scaled *= self._g
        scaled *= 1.0 / self._prime
        return scaled.astype(np.int64)  # truncation = floor (non-negative)

    def _privatize(self, codes, rng):
        """``(a, c, y)`` per report, block by block (the temporaries are one block)."""
        out = np.empty((codes.shape[0], len(self.report_columns())), dtype=np.int64)
        for rows in _row_blocks(codes.shape[0], 1, _PRIVATIZE_ROWS):
            out[rows] = self._privatize_block(codes[rows], rng)
        return out

    def _privatize_block(self, codes, rng):
        n = codes.shape[0]
        if self._xxh32:
            seeds = random_words(rng, n) >> np.uint64(32)  # uniform over 32 bits
            hashed = self.xxh32_hash(seeds, codes)
            return np.stack([self._respond(hashed, rng), seeds.astype(np.int64)], axis=1)
        out = np.empty((n, 3), dtype=np.int64)
        a = uniform_below(rng, self._prime - 1, n) + 1  # P < 2^31: half a word each
        c = uniform_below(rng, self._prime, n)
        out[:, 0], out[:, 1] = a, c
        residue = a.astype(np.uint64)
        residue *= codes.astype(np.uint64)
        residue += c.astype(np.uint64)
        residue %= np.uint64(self._prime)
        out[:, 2] = self._respond(self._bucket(residue), rng)
        return out

    def _respond(self, hashed, rng):
        """g-ary randomized response of the hashed values from one word each: kept below the threshold,
        else uniform over the g - 1 others (:func:`ldpest.privacy.exact.keep_or_other`)."""
        return keep_or_other(hashed, random_words(rng, hashed.shape[0]), self._keep, self._share)

    def encode_reports(self, values):
        if self._xxh32:
            return self._encode_seeded_reports(values)
        values = check_report_matrix(values, 3, self.name, "3 fields (hash_a, hash_c, value)")
        if values.dtype.kind == "f":
            if not np.all(np.isfinite(values)) or np.any(values != np.round(values)):
                raise DataError(f"reports of {self.name!r} must be integers")
        values = values.astype(np.int64)
        for column, low, high in ((0, 1, self._prime), (1, 0, self._prime), (2, 0, self._g)):
            bad = (values[:, column] < low) | (values[:, column] >= high)
            if bad.any():
                raise DataError(f"{int(bad.sum())} report(s) have {self.report_columns()[column]} outside "
                                f"{low}..{high - 1}", row=int(np.flatnonzero(bad)[0]))
        return values

    def _encode_seeded_reports(self, values):
        """``(value, seed)`` rows; seeds are any integers in 0..2^63 - 1 (the peers' draw), of which
        xxh32 reads the low 32 bits."""
        values = check_report_matrix(values, 2, self.name, "2 fields (value, seed), as pure-ldp's and "
                                     "multi-freq-ldpy's local hashing report them")
        if values.dtype.kind == "f":
            if not np.all(np.isfinite(values)) or np.any(values != np.round(values)) or np.any(values >= 2.0 ** 63):
                raise DataError(f"reports of {self.name!r} must be integers (value, seed)")
        values = values.astype(np.int64)
        for column, low, high in ((0, 0, self._g - 1), (1, 0, (1 << 63) - 1)):
            bad = (values[:, column] < low) | (values[:, column] > high)
            if bad.any():
                raise DataError(f"{int(bad.sum())} report(s) have {self.report_columns()[column]} outside "
                                f"{low}..{high}", row=int(np.flatnonzero(bad)[0]))
        return values

    def variation_ratio(self) -> VariationRatio:
        """Given the hash, ``y`` is g-ary randomized response of ``h(x)``: ``p = P(keep) / P(one
        other)``; two inputs' laws differ only when their hashes differ (probability ``1 -
        kappa``, the same for every pair), so ``beta = (1 - kappa) (P(keep) - P(one other))``.
        Wang et al.'s table takes ``kappa = 0`` (``beta = (e^eps - 1) / (e^eps + g - 1)``), larger."""
        keep = Fraction(self._keep, WORD)
        other = (1 - keep) / (self._g - 1)
        ratio = float(keep / other) * (1 + 1e-14)
        return VariationRatio(ratio, float((1 - self._kappa) * (keep - other)) * (1 + 1e-12), ratio)

    def channel(self) -> Channel:
        """The exact channel of ``(a, c, y)`` over every seed; enumerable for small primes only."""
        if self._xxh32:
            raise ParameterError(f"the channel of hash_family='xxh32' has g 2^32 = {self._g << 32} outputs; given "
                                 f"the seed it is {self._g}-ary randomized response of the hash "
                                 f"(seeded_channel(seed) enumerates one seed)")
        size = (self._prime - 1) * self._prime * self._g
        if size > _CHANNEL_LIMIT:
            raise ParameterError(f"the channel has {size} outputs; enumerate it with a prime of a few dozen")
        a, c, y = np.meshgrid(np.arange(1, self._prime), np.arange(self._prime), np.arange(self._g), indexing="ij")
        outputs = np.stack([a.ravel(), c.ravel(), y.ravel()], axis=1)
        seed = Fraction(1, (self._prime - 1) * self._prime)
        p = Fraction(self._keep, WORD)
        hit, miss = seed * p, seed * (1 - p) / (self._g - 1)
        rows = [np.where(outputs[:, 2] == self.hash(outputs[:, 0], outputs[:, 1], x), hit, miss)
                for x in range(self.d)]
        return Channel(self.categories, outputs, np.array(rows, dtype=object))

    def seeded_channel(self, seed: int) -> Channel:
        """``P(y | x, seed)`` exactly, over the g values (``hash_family='xxh32'``): the law of a report
        whose seed is ``seed``; the seed itself is drawn independently of ``x``."""
        keep = Fraction(self._keep, WORD)
        other = (1 - keep) / (self._g - 1)
        hashed = self.xxh32_hash(np.full(self.d, seed, dtype=np.uint64), np.arange(self.d))
        rows = [[keep if y == hashed[x] else other for y in range(self._g)] for x in range(self.d)]
        return Channel(self.categories, np.arange(self._g), np.array(rows, dtype=object))

    def frequency_statistics(self, reports):
        return {"support": self.support_counts(reports)}

    def support_counts(self, reports) -> np.ndarray:
        """``support_j = #{i : h_{s_i}(j) = y_i}`` for every category j (:meth:`_supports`)."""
        support = np.zeros(self.d, dtype=np.int64)
        for _, j, inside in self._supports(reports):
            support[j] += np.count_nonzero(inside)
        return support

    def weighted_support(self, reports, weights) -> np.ndarray:
        """``[sum w_i 1{h_{s_i}(j) = y_i}, sum w_i^2 1{...}]`` over categories j (design weights)."""
        out = np.zeros((2, self.d), dtype=np.float64)
        squares = weights * weights
        for rows, j, inside in self._supports(reports):
            out[0, j] += weights[rows] @ inside
            out[1, j] += squares[rows] @ inside
        return out

    def linear_hash_statistic(self):
        """The universal family's supports, from ``(hash_a, hash_c, value)`` (module docstring); the xxh32 family
        declares :meth:`decimal_xxh32_statistic` instead."""
        return None if self._xxh32 else ("support", self._prime, self._g)

    def decimal_xxh32_statistic(self):
        """The xxh32 family's supports, from ``(value, seed)`` (module docstring); the universal family declares
        :meth:`linear_hash_statistic` instead."""
        return ("support", self._g) if self._xxh32 else None

    def support_ratio(self) -> float:
        """``p (g - 1) / (1 - p)``: given its hash, a report says the input's hashed value with probability
        ``p`` and each of the ``g - 1`` others with ``(1 - p) / (g - 1)``."""
        p = self._support[0]
        return float(p * (self._g - 1) / (1 - p))

    def report_support(self, reports):
        """Whether ``h_{s_i}(j) = y_i``, for every report and category (:meth:`_supports`): a column-major
        (n, d) array, so that each category's column is one contiguous write (a row-major column is a
        write every d bytes: 2.4x slower at d = 1000)."""
        members = np.empty((self.d, reports.shape[0]), dtype=np.uint8)
        for _ in self._supports(reports, members.view(bool)):
            pass
        return members.T

    def _supports(self, reports, out=None):
        """``(rows, j, inside)``: for each block of reports and category j, whether each report
        supports j, in O(n d) integer steps; ``inside`` is ``out[j, rows]`` where ``out`` (a (d, n) bool
        array) is given.  Universal family: ``h(j) = y`` iff the residue ``(a j + c) mod P`` lies in
        ``[L_y, L_{y+1})``, ``L_k = ceil(k P / g)``, that is iff ``s_j = (a j + c - L_y) mod P`` is below
        ``L_{y+1} - L_y``; ``s_j`` advances by ``a`` per category (mod P): three uint32 steps and the test.
        xxh32: one vectorised hash per (report, category)."""
        prime, g = (None if self._prime is None else np.uint32(self._prime)), np.uint32(self._g)
        for start in range(0, reports.shape[0], _DECODE_ROWS):
            block = reports[start:start + _DECODE_ROWS]
            rows = slice(start, start + block.shape[0])
            inside = np.empty(block.shape[0], dtype=bool) if out is None else None
            if self._xxh32:
                seeds = (block[:, 1].astype(np.uint64) & np.uint64(_SEED_MASK)).astype(np.uint32)
                values = block[:, 0].astype(np.uint32)
                for j in range(self.d):
                    found = inside if out is None else out[j, rows]
                    np.equal(xxh32_decimal(j, seeds) % g, values, out=found)
                    yield rows, j, found
                continue
            step = block[:, 0].astype(np.uint32)
            low = self._lower[block[:, 2]].astype(np.uint32)
            width = (self._lower[block[:, 2] + 1] - self._lower[block[:, 2]]).astype(np.uint32)
            shifted = block[:, 1].astype(np.uint32) + (prime - low)  # c + P - L_y < 2P < 2^32
            wrapped = shifted - prime
            np.minimum(shifted, wrapped, out=shifted)  # s_0 = (c - L_y) mod P
            for j in range(self.d):
                found = inside if out is None else out[j, rows]
                np.less(shifted, width, out=found)
                yield rows, j, found
                shifted += step  # < 2P < 2^32
                np.subtract(shifted, prime, out=wrapped)
                np.minimum(shifted, wrapped, out=shifted)  # mod P: the subtraction wraps when shifted < P

    cross_covariance_columns = True

    def frequency_cross_covariance(self, theta, vector):
        """A report supports both ``i`` and ``l`` with probability ``p kappa`` when ``x`` is one of them, and
        ``kappa o + (p - o) tau`` otherwise (``o = (1 - p) / (g - 1)``, ``tau = P(h(x) = h(i) = h(l))``)
        (:func:`ldpest.stats.binomial.inclusion_pair_covariance`).  A pairwise-uniform family leaves ``tau``
        depending on the triple; it is enumerated over every seed where that is cheap (small primes) and
        taken as ``kappa^2`` otherwise, its mean over triples, which makes ``q* kappa`` the second
        probability: an approximation of order ``1 / P`` for the default prime (and assumed for xxh32)."""
        constants = self._pair_constants()
        if constants is not None:
            return cross_covariance_product(theta, vector, *constants)
        keep, support = float(self._support[0]), float(self._support[1])
        kappa = float(self._kappa)
        theta, vector = np.asarray(theta, dtype=np.float64), np.asarray(vector, dtype=np.float64)
        other = (1 - keep) / (self._g - 1)
        both = kappa * other + (keep - other) * self._triple_collisions()  # [x, i, l], used for x outside {i, l}
        pi = support + (keep - support) * theta
        pairs = keep * kappa * (theta[:, None] + theta[None, :]) + np.einsum("x,xil->il", theta, both)
        index = np.arange(self.d)
        pairs -= theta[:, None] * both[index, index, :] + theta[None, :] * both[index, :, index].T  # x = i, x = l
        covariance = (pairs - np.outer(pi, pi)) / (keep - support) ** 2
        np.fill_diagonal(covariance, 0.0)
        return covariance @ vector

    def frequency_cross_covariance_factors(self, theta):
        """Rank 2 where the triples are taken as ``kappa^2`` (:meth:`frequency_cross_covariance`), else None."""
        constants = self._pair_constants()
        return None if constants is None else cross_covariance_factors(theta, *constants)

    def _pair_constants(self) -> tuple[float, float] | None:
        """``(c0, c1)`` of ``n Cov(theta_hat_i, theta_hat_j)`` where the triples are not enumerated, else None."""
        if not (self._xxh32 or self._prime ** 2 * self.d ** 3 * self._g > _TRIPLE_LIMIT):
            return None
        keep, support, kappa = float(self._support[0]), float(self._support[1]), float(self._kappa)
        return inclusion_pair_covariance(keep, support, keep * kappa, kappa * support)

    def _triple_collisions(self) -> np.ndarray:
        """``P(h(x) = h(i) = h(l))`` over every seed ``(a, c)``, for every triple of categories."""
        a, c = np.meshgrid(np.arange(1, self._prime), np.arange(self._prime), indexing="ij")
        hashed = self.hash(a.ravel()[:, None], c.ravel()[:, None], np.arange(self.d)[None, :])
        tau = np.zeros((self.d,) * 3)
        for value in range(self._g):
            hit = (hashed == value).astype(np.float64)
            tau += np.einsum("sx,si,sl->xil", hit, hit, hit)
        return tau / hashed.shape[0]

    count_statistic = "support"

    def binomial_model(self):
        """support_j ~ Binomial(n, q* + (p - q*) theta_j)."""
        return self._q, self._p - self._q

    def binomial_top_complement(self):
        """``1 - p`` exactly (positive where ``p`` rounds to 1 in float64)."""
        return float(1 - self._support[0])

    def report_bits(self):
        if self._xxh32:
            return 32 + math.log2(self._g)
        return 2 * math.log2(self._prime) + math.log2(self._g)
