"""dBitFlipPM: d sampled buckets, one randomised bit each, memoised (Ding, Kulkarni, Yekhanin
2017, "Collecting telemetry data privately"; docs/accounting.md).

A counter is bucketised into ``k`` buckets (the ``categories``).  Each user samples ``d`` distinct
buckets ``j_1..j_d`` once, and reports for each a bit that is 1 with probability ``p`` if its value
lies in that bucket and ``1 - p`` otherwise, ``p / (1 - p) <= e^{epsilon / 2}`` proven (two values
differ in at most two of the bits: one report is epsilon-LDP).  The response depends only on the
user's *state* (which sampled bucket holds the value, or none), and is memoised per state: while
the value stays in one state every report is the same, so ``epsilon_inf = epsilon`` (there is no
instantaneous randomisation); a value that moves to another state draws that state's response.

Unbiased frequencies (``frequency`` estimator): ``theta_v = k / (n d) sum_i 1[v in J_i] (b_i - q) /
(p - q)``, ``q = 1 - p``, with ``n Var = (k / d) (pi (1 - q)^2 + (1 - pi) q^2) / (p - q)^2 - theta_v^2``,
``pi = q + (p - q) theta_v``, which is ``(k / d) p q / (p - q)^2 + theta_v (k / d - theta_v)`` (the value of
each report drawn from theta, as for every oracle; the form before 2026-12 had ``- theta_v`` for
``- theta_v^2``, the variance given the values, too small by ``theta_v (1 - theta_v)``).
The buckets are sampled by sequential selection from a word each
(the r-th unsampled bucket, ``r`` = word modulo the buckets left: a bias below ``k / 2^64`` that does
not depend on the value, so privacy does not depend on it); the channel uses their exact law.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

from ldpest import Channel, DataError, FrequencyOracle, Longitudinal, Mechanism, ParameterError
from ldpest.privacy.exact import WORD, keep_threshold
from ldpest.util.labels import label_coordinate
from ldpest.util.validation import (
    check_categories,
    check_epsilon,
    check_finite,
    check_interval,
    check_positive_int,
    check_report_matrix,
)

from .permanent import PermanentResponse

MAX_CHANNEL_OUTPUTS = 1 << 14


def sample_buckets(words: np.ndarray, k: int) -> np.ndarray:
    """Distinct buckets, one per column of ``words`` (n, d): the ``r``-th bucket not yet sampled,
    ``r = word mod (k - t)`` (vectorised over records, a loop over the d columns)."""
    n, d = words.shape
    picked = np.empty((n, d), dtype=np.int64)
    for t in range(d):
        rank = (words[:, t] % np.uint64(k - t)).astype(np.int64)
        earlier = np.sort(picked[:, :t], axis=1)
        for s in range(t):  # skip the buckets already sampled, in increasing order
            rank += rank >= earlier[:, s]
        picked[:, t] = rank
    return picked


def _rank_probability(r: int, size: int) -> Fraction:
    """P(word mod size = r), exactly."""
    return Fraction(WORD // size + (1 if r < WORD % size else 0), WORD)


class DBitFlip(Longitudinal, FrequencyOracle, Mechanism):
    """dBitFlipPM: d sampled buckets, one memoised randomised bit each, for counters (module docstring)."""

    name = "dbitflip"
    family = "multinomial"
    default_estimator = "frequency"
    report_dims = ("report", "field")
    instantaneous_params = ()  # the response is all permanent
    parameter_help = {"epsilon": "the guarantee of one report, and of all reports while the value's state stays",
                      "categories": "the k buckets (labels), in order (or low, high and buckets)",
                      "d": "buckets each user samples and reports a bit for (1..k)",
                      "low": "a counter's smallest value", "high": "a counter's largest value",
                      "buckets": "equal buckets [low, high] is cut into"}
    example_params = {"categories": [0, 1, 2, 3], "d": 2}

    def __init__(self, *, epsilon, categories=None, d=1, low=None, high=None, buckets=None):
        counter = (low, high, buckets) != (None, None, None)
        if counter == (categories is not None) or (counter and None in (low, high, buckets)):
            raise ParameterError(f"{self.name}: give categories (the buckets' labels), or low, high and buckets "
                                 "(a counter in [low, high] cut into equal buckets), not both")
        if counter:
            buckets = check_positive_int("buckets", buckets, 2)
            low, high = check_interval(low, high)
            edges = np.linspace(low, high, buckets + 1)
            categories = [f"[{edges[i]:g}, {edges[i + 1]:g}{']' if i == buckets - 1 else ')'}" for i in range(buckets)]
        categories = check_categories(categories)
        d = check_positive_int("d", d)
        if d > len(categories):
            raise ParameterError(f"{self.name}: d = {d} exceeds the {len(categories)} buckets")
        bounds = {"low": low, "high": high, "buckets": buckets} if counter else {}
        self._set_params(epsilon=check_epsilon(epsilon), **({} if counter else {"categories": categories}), d=d,
                         **bounds)
        self._categories = categories
        if counter:
            object.__setattr__(self, "data_kind", "number")
        self._keep = keep_threshold(self.epsilon / 2, 1)
        self._p = Fraction(self._keep, WORD)

    @property
    def categories(self) -> list:
        return list(self._categories)

    @property
    def category_coordinate(self) -> np.ndarray:
        return label_coordinate(self._categories)

    @property
    def epsilon_inf(self) -> float:
        return self.epsilon

    @property
    def d(self) -> int:
        return self._params["d"]

    def report_columns(self):
        return [*(f"bucket_{t}" for t in range(self.d)), *(f"bit_{t}" for t in range(self.d))]

    def encode_data(self, data):
        """Labels of the buckets, or (a counter) numbers in ``[low, high]``: bucket
        ``floor((x - low) / (high - low) * buckets)``, the top edge in the last bucket."""
        if "buckets" not in self._params:
            return self.encode_labels(data, "data")
        low, high, k = self._params["low"], self._params["high"], self._params["buckets"]
        values = check_finite("data", np.asarray(data, dtype=np.float64).ravel())
        outside = (values < low) | (values > high)
        if outside.any():
            raise DataError(f"{int(outside.sum())} value(s) outside [{low:g}, {high:g}]",
                            row=int(np.flatnonzero(outside)[0]))
        codes = np.floor((values - low) / (high - low) * k).astype(np.int64)
        return np.minimum(codes, k - 1).astype(self.index_dtype)

    def channel_mixture(self, record):
        """A counter's number is its bucket's row of the channel, with weight 1."""
        return np.array([int(self.encode_data([record])[0])]), np.array([1.0])

    def permanent(self):
        return PermanentResponse(of=self)

    def _permanent(self, codes, words):
        k, d, n = len(self.categories), self.d, len(codes)
        buckets = sample_buckets(words("buckets", np.full(n, ""), d), k)
        match = buckets == codes[:, None].astype(np.int64)
        state = np.where(match.any(axis=1), match.argmax(axis=1), d)
        drawn = words("response", state.astype(str), d)
        bits = np.where(match, drawn < np.uint64(self._keep), drawn >= np.uint64(self._keep))
        return np.column_stack([buckets, bits]).astype(self.index_dtype)

    def _instantaneous(self, permanent, rng):
        return permanent

    def encode_reports(self, values):
        k, d = len(self.categories), self.d
        values = check_report_matrix(values, 2 * d, self.name, f"{d} buckets and {d} bits")
        buckets, bits = values[:, :d], values[:, d:]
        bad = np.any((buckets < 0) | (buckets >= k) | (buckets != np.round(buckets)), axis=1)
        if d > 1:
            ordered = np.sort(buckets, axis=1)
            bad |= np.any(ordered[:, 1:] == ordered[:, :-1], axis=1)
        bad |= np.any((bits != 0) & (bits != 1), axis=1)
        if bad.any():
            raise DataError(f"{int(bad.sum())} report(s) of {self.name!r} are not {d} distinct buckets in 0..{k - 1} "
                            "and 0/1 bits", row=int(np.flatnonzero(bad)[0]))
        return values.astype(self.index_dtype)

    def channel(self) -> Channel:
        """The implemented channel: ordered bucket tuples with their exact law, times the bits."""
        k, d = len(self.categories), self.d
        tuples = list(itertools.permutations(range(k), d))
        if len(tuples) * 2 ** d > MAX_CHANNEL_OUTPUTS:
            raise ParameterError(f"the exact channel has {len(tuples) * 2 ** d} outputs; enumerate it only up to "
                                 f"{MAX_CHANNEL_OUTPUTS}")
        outputs, law = [], []
        for buckets in tuples:
            weight = Fraction(1)
            for t, bucket in enumerate(buckets):
                weight *= _rank_probability(bucket - sum(b < bucket for b in buckets[:t]), k - t)
            for bits in itertools.product((0, 1), repeat=d):
                outputs.append([*buckets, *bits])
                law.append(weight)
        outputs = np.array(outputs, dtype=np.int64)
        matrix = np.empty((k, len(outputs)), dtype=object)
        for value in range(k):
            for column, (row, weight) in enumerate(zip(outputs, law, strict=True)):
                probability = weight
                for t in range(d):
                    one = self._p if row[t] == value else 1 - self._p
                    probability *= one if row[d + t] == 1 else 1 - one
                matrix[value, column] = probability
        return Channel(self.categories, outputs, matrix)

    def permanent_channel(self) -> Channel:
        return self.channel()

    def frequency_statistics(self, reports):
        k, d = len(self.categories), self.d
        buckets, bits = reports[:, :d].astype(np.intp), reports[:, d:]
        return {"sampled": np.bincount(buckets.ravel(), minlength=k).astype(np.int64),
                "ones": np.bincount(buckets[bits == 1], minlength=k).astype(np.int64)}

    def frequency_estimate(self, stats, n):
        k, d = len(self.categories), self.d
        p, q = float(self._p), float(1 - self._p)
        theta = (k / (n * d)) * (np.asarray(stats["ones"]) - q * np.asarray(stats["sampled"])) / (p - q)
        return theta, np.sqrt(self.frequency_variance(np.clip(theta, 0, 1)) / n)

    def frequency_variance(self, theta):
        """``n Var(theta_hat_v) = (k / d) p q / (p - q)^2 + theta_v (k / d - theta_v)`` (the module
        docstring's form with ``q = 1 - p``, free of cancellation: positive even where ``p`` rounds to 1),
        from the implemented ``p`` and its exact complement."""
        k, d = len(self.categories), self.d
        p, q = float(self._p), float(1 - self._p)
        theta = np.asarray(theta, dtype=np.float64)
        return (k / d) * p * q / (p - q) ** 2 + theta * (k / d - theta)

    def worst_case_variance(self):
        k = len(self.categories)
        return float(self.frequency_variance(np.full(k, 1 / k)).sum())

    def worst_case_category_variance(self):
        return float(max(self.frequency_variance(0.0), self.frequency_variance(1.0)))

    def report_bits(self):
        return float(self.d * (1 + np.log2(len(self.categories))))


