"""RAPPOR: permanent and instantaneous randomised response over a Bloom filter (Erlingsson,
Pihur, Korolova 2014, "RAPPOR: randomized aggregatable privacy-preserving ordinal response";
docs/accounting.md).

A user in cohort ``c`` (one of ``num_cohorts``, drawn once) sets the ``num_hashes`` bits of its
value's Bloom filter ``B`` (``num_bloombits`` bits, hashed with the cohort).  The permanent
response sets each bit to 1 with probability ``f/2``, to 0 with ``f/2``, and keeps it otherwise;
each report then sends every bit of it as 1 with probability ``q`` (if 1) or ``p`` (if 0).  One
report's bits are independent with

    q* = P(S = 1 | B = 1) = f/2 (p + q) + (1 - f) q,   p* = P(S = 1 | B = 0) = f/2 (p + q) + (1 - f) p,

so, as google/rappor's ``ComputePrivacyGuarantees`` states,

    epsilon_1   = h ln( q* (1 - p*) / (p* (1 - q*)) ),
    epsilon_inf = 2 h ln( (1 - f/2) / (f/2) ),

both reached by two values whose Bloom bits differ in all ``2h`` places.  Here ``f/2``, ``p`` and
``q`` are implemented as integer thresholds over ``2^64`` (``f/2 = A / 2^64``, ...), and the
declared epsilons are proven upper bounds of the formulas at those exact values.

Give RAPPOR's own ``prob_p``, ``prob_q``, ``prob_f`` (reproducing a deployment), or ``epsilon``
and ``epsilon_inf``: then ``f`` is the largest with epsilon_inf proven, and ``p = 1 - q`` with the
largest ``q`` that keeps epsilon_1 proven.

Reports are ``num_bloombits + 1`` integers: the cohort, then the bits.  The cohort is the user's
first keyed word modulo ``num_cohorts`` (a bias below ``num_cohorts / 2^64``; it does not depend on
the value, so privacy does not depend on it, and the estimator uses the cohorts' actual counts).
"""

from __future__ import annotations

import hashlib
import math
from fractions import Fraction

import numpy as np

from ldpest import Channel, DataError, Longitudinal, Mechanism, ParameterError
from ldpest.privacy.exact import WORD, largest_threshold, random_words, ratio_within, smallest_threshold
from ldpest.util.labels import smallest_index_dtype
from ldpest.util.validation import check_epsilon, check_positive_int, check_report_matrix

from .exact import check_probability, declared_epsilon, word_threshold
from .permanent import PermanentResponse

MAX_CHANNEL_BITS = 10
MAX_CHANNEL_OUTPUTS = 4096
SCAN_STRINGS = 200_000  # strings tried to realise every Bloom pattern of every cohort


def bloom_bits(values, cohorts, num_bloombits: int, num_hashes: int) -> np.ndarray:
    """The Bloom filter of each (value, cohort): ``num_hashes`` positions from SHA-256 of
    ``"cohort:value"``, two bytes each modulo ``num_bloombits`` (computed once per distinct pair)."""
    values = np.asarray(values, dtype=object)
    cohorts = np.asarray(cohorts, dtype=np.int64)
    labels, codes = np.unique(values.astype(str), return_inverse=True)
    pairs, inverse = np.unique(codes.astype(np.int64) * (int(cohorts.max(initial=0)) + 1) + cohorts,
                               return_inverse=True)
    width = int(cohorts.max(initial=0)) + 1
    filters = np.zeros((len(pairs), num_bloombits), dtype=np.uint8)
    for row, pair in enumerate(pairs.tolist()):
        digest = hashlib.sha256(f"{pair % width}:{labels[pair // width]}".encode()).digest()
        for i in range(num_hashes):
            filters[row, int.from_bytes(digest[2 * i:2 * i + 2], "little") % num_bloombits] = 1
    return filters[inverse.ravel()]


def report_probabilities(half_f: int, tp: int, tq: int) -> tuple[Fraction, Fraction]:
    """``(q*, p*)``: one report's P(bit 1) when the Bloom bit is 1 and 0, exactly, for thresholds
    ``f/2 = half_f / 2^64``, ``p = tp / 2^64``, ``q = tq / 2^64``."""
    a, p, q = Fraction(half_f, WORD), Fraction(tp, WORD), Fraction(tq, WORD)
    return (1 - a) * q + a * p, a * q + (1 - a) * p


def _symmetric_within(half_f: int, tq: int, epsilon: float, h: int) -> bool:
    q_star, p_star = report_probabilities(half_f, WORD - tq, tq)
    return ratio_within(q_star * (1 - p_star), p_star * (1 - q_star), epsilon, h)


class Rappor(Longitudinal, Mechanism):
    """RAPPOR: a Bloom filter, a memoised permanent response (epsilon_inf) and a fresh instantaneous one per
    report (epsilon); module docstring."""

    name = "rappor"
    family = "multinomial"
    default_estimator = "rappor"
    report_dims = ("report", "field")
    data_kind = "label"
    report_kind = "number"
    instantaneous_params = ("prob_p", "prob_q", "epsilon")
    parameter_help = {
        "prob_p": "P(report 1 | permanent bit 0), as in google/rappor (or give epsilon and epsilon_inf)",
        "prob_q": "P(report 1 | permanent bit 1)",
        "prob_f": "the permanent response randomises each bit with probability f (0 < f < 1)",
        "epsilon": "instead of the probabilities: epsilon_1, the guarantee of one report",
        "epsilon_inf": "with epsilon: the guarantee of every report of one value together",
        "num_bloombits": "bits of the Bloom filter (k)", "num_hashes": "hash functions (h, at most 16)",
        "num_cohorts": "cohorts (m, at most 65536): each has its own hash functions"}
    example_params = {"epsilon_inf": 4.0, "num_bloombits": 16, "num_hashes": 2, "num_cohorts": 4}

    def __init__(self, *, num_bloombits=16, num_hashes=2, num_cohorts=1, prob_p=None, prob_q=None, prob_f=None,
                 epsilon=None, epsilon_inf=None):
        sizes = {"num_bloombits": check_positive_int("num_bloombits", num_bloombits, 2),
                 "num_hashes": check_positive_int("num_hashes", num_hashes),
                 "num_cohorts": check_positive_int("num_cohorts", num_cohorts)}
        if sizes["num_hashes"] > 16 or sizes["num_cohorts"] > 1 << 16:
            raise ParameterError(f"{self.name}: at most 16 hashes and 65536 cohorts")
        if epsilon is not None:
            epsilon = check_epsilon(epsilon)
        if epsilon_inf is not None:
            epsilon_inf = check_epsilon(epsilon_inf)
        probabilities = (prob_p, prob_q, prob_f)
        if (epsilon is None) == all(value is None for value in probabilities) or \
                (epsilon is None) != (epsilon_inf is None) or \
                (epsilon is None and any(value is None for value in probabilities)):
            raise ParameterError(f"{self.name}: give prob_p, prob_q and prob_f (RAPPOR's parameters), or epsilon "
                                 "and epsilon_inf, not both")
        h = sizes["num_hashes"]
        if epsilon is None:
            p, q, f = (check_probability(name, value) for name, value in zip(("prob_p", "prob_q", "prob_f"),
                                                                              probabilities, strict=True))
            self._set_params(prob_p=p, prob_q=q, prob_f=f, **sizes)
            self._half_f, self._tp, self._tq = word_threshold(f / 2), word_threshold(p), word_threshold(q)
            if self._tp == self._tq:
                raise ParameterError(f"{self.name}: prob_p and prob_q must differ (else reports carry no information)")
            self._epsilon_inf = declared_epsilon(WORD - self._half_f, self._half_f, 2 * h)
            q_star, p_star = self.report_probabilities()
            high, low = max(q_star * (1 - p_star), p_star * (1 - q_star)), min(q_star * (1 - p_star),
                                                                                 p_star * (1 - q_star))
            self._epsilon = declared_epsilon(high, low, h)
        else:
            if not epsilon < epsilon_inf:
                raise ParameterError(f"{self.name}: epsilon ({epsilon:g}) must be below epsilon_inf ({epsilon_inf:g})")
            self._set_params(epsilon=epsilon, epsilon_inf=epsilon_inf, **sizes)
            self._half_f = smallest_threshold(lambda a: ratio_within(WORD - a, a, epsilon_inf, 2 * h), 1, WORD // 2)
            self._tq = largest_threshold(lambda t: _symmetric_within(self._half_f, t, epsilon, h), WORD // 2 + 1,
                                         WORD - 1)
            self._tp = WORD - self._tq
            self._epsilon, self._epsilon_inf = epsilon, epsilon_inf
        if not 0 < self._half_f < WORD // 2:
            raise ParameterError(f"{self.name}: prob_f must give 0 < f < 1 at 64-bit resolution")

    def report_probabilities(self) -> tuple[Fraction, Fraction]:
        """``(q*, p*)`` of the implemented thresholds, exactly."""
        return report_probabilities(self._half_f, self._tp, self._tq)

    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def epsilon_inf(self) -> float:
        return self._epsilon_inf

    @property
    def probabilities(self) -> dict[str, float]:
        """The implemented ``f``, ``p``, ``q`` and one report's ``q*``, ``p*`` (floats)."""
        q_star, p_star = self.report_probabilities()
        return {"f": 2 * self._half_f / WORD, "p": self._tp / WORD, "q": self._tq / WORD,
                "q_star": float(q_star), "p_star": float(p_star)}

    @property
    def k(self) -> int:
        return self._params["num_bloombits"]

    @property
    def cohorts(self) -> int:
        return self._params["num_cohorts"]

    def report_columns(self):
        return ["cohort", *(f"bit_{i}" for i in range(self.k))]

    @property
    def _dtype(self):
        return smallest_index_dtype(max(self.cohorts, 2))

    def encode_data(self, data):
        values = np.asarray(data, dtype=object)
        if values.ndim != 1:
            raise DataError(f"{self.name}: data must be one value per record")
        missing = np.asarray((values != values) | np.equal(values, None), dtype=bool)  # NaN or None
        if missing.any():
            raise DataError(f"{self.name}: {int(missing.sum())} value(s) are missing (NaN or None)",
                            row=int(np.flatnonzero(missing)[0]))
        return values.astype(str).astype(object)

    def permanent(self):
        return PermanentResponse(of=self)

    def _permanent(self, values, words):
        n = len(values)
        cohorts = (words("cohort", np.full(n, ""), 1)[:, 0] % np.uint64(self.cohorts)).astype(np.int64)
        bits = bloom_bits(values, cohorts, self.k, self._params["num_hashes"])
        drawn = words("response", self.memo_keys(values), self.k)
        half = np.uint64(self._half_f)
        permanent = np.where(drawn < half, 1, np.where(drawn < np.uint64(2 * self._half_f), 0, bits))
        return np.column_stack([cohorts, permanent]).astype(self._dtype)

    def memo_keys(self, values):
        return np.asarray(values, dtype=object)

    def _instantaneous(self, permanent, rng):
        bits = permanent[:, 1:]
        drawn = random_words(rng, bits.shape)
        report = np.where(bits == 1, drawn < np.uint64(self._tq), drawn < np.uint64(self._tp))
        return np.column_stack([permanent[:, 0], report]).astype(self._dtype)

    def encode_reports(self, values):
        values = check_report_matrix(values, self.k + 1, self.name, f"a cohort and {self.k} bits")
        cohort, bits = values[:, 0], values[:, 1:]
        bad = (cohort < 0) | (cohort >= self.cohorts) | (cohort != np.round(cohort))
        if bad.any():
            raise DataError(f"{int(bad.sum())} report(s) name no cohort in 0..{self.cohorts - 1}",
                            row=int(np.flatnonzero(bad)[0]))
        bad = np.any((bits != 0) & (bits != 1), axis=1)
        if bad.any():
            raise DataError(f"reports of {self.name!r} must have 0/1 bits; {int(bad.sum())} do not",
                            row=int(np.flatnonzero(bad)[0]))
        return values.astype(self._dtype)

    # -- the exact channel (docs/accounting.md): every Bloom pattern of every cohort -----------------
    def representatives(self) -> list[str]:
        """Strings whose Bloom filters realise every pattern of 1..h bits in every cohort (each
        string kept only if it adds a pattern): the channel's inputs.  A column of the channel
        then has the same largest and smallest entry over these strings as over all strings, so
        its proof covers every value."""
        k, h, m = self.k, self._params["num_hashes"], self.cohorts
        wanted = m * sum(math.comb(k, size) for size in range(1, min(h, k) + 1))
        seen, kept = set(), []
        for start in range(0, SCAN_STRINGS, 4096):
            strings = np.array([f"v{i}" for i in range(start, start + 4096)], dtype=object)
            for cohort in range(m):
                filters = bloom_bits(strings, np.full(len(strings), cohort), k, h)
                for string, bits in zip(strings.tolist(), filters, strict=True):
                    key = (cohort, bits.tobytes())
                    if key not in seen:
                        seen.add(key)
                        kept.append(string)
            if len(seen) == wanted:
                return list(dict.fromkeys(kept))
        raise ParameterError(f"{self.name}: {wanted - len(seen)} Bloom patterns not realised by {SCAN_STRINGS} strings")

    def _bit_channel(self, one_if_set: Fraction, one_if_clear: Fraction) -> Channel:
        k, m = self.k, self.cohorts
        if k > MAX_CHANNEL_BITS or m * 2 ** k > MAX_CHANNEL_OUTPUTS:
            raise ParameterError(f"the exact channel has {m} x 2^{k} outputs; enumerate it only for k <= "
                                 f"{MAX_CHANNEL_BITS} and at most {MAX_CHANNEL_OUTPUTS} outputs")
        inputs = self.representatives()
        patterns = np.array([[(s >> (k - 1 - i)) & 1 for i in range(k)] for s in range(2 ** k)], dtype=np.int64)
        outputs = np.column_stack([np.repeat(np.arange(m), 2 ** k), np.tile(patterns, (m, 1))])
        levels, index = [], {}
        pattern = np.empty((len(inputs), m * 2 ** k), dtype=np.int64)
        for cohort in range(m):
            filters = bloom_bits(np.array(inputs, dtype=object), np.full(len(inputs), cohort), k,
                                 self._params["num_hashes"]).astype(np.int64)
            ones_on_set = filters @ patterns.T  # (inputs, outputs): reported 1 where the Bloom bit is 1
            ones = patterns.sum(axis=1)[None, :]
            set_bits = filters.sum(axis=1)[:, None]
            for row in range(len(inputs)):
                for column in range(2 ** k):
                    a, b = int(ones_on_set[row, column]), int(set_bits[row, 0])
                    c = int(ones[0, column]) - a
                    key = (a, b, c)
                    if key not in index:
                        index[key] = len(levels)
                        levels.append(one_if_set ** a * (1 - one_if_set) ** (b - a) * one_if_clear ** c
                                      * (1 - one_if_clear) ** (k - b - c) / m)
                    pattern[row, cohort * 2 ** k + column] = index[key]
        return Channel.from_levels(inputs, outputs, levels, pattern)

    def channel(self) -> Channel:
        """One report's implemented channel over every Bloom pattern (:meth:`representatives`)."""
        q_star, p_star = self.report_probabilities()
        return self._bit_channel(q_star, p_star)

    def permanent_channel(self) -> Channel:
        a = Fraction(self._half_f, WORD)
        return self._bit_channel(1 - a, a)
