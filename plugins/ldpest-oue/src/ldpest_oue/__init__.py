"""Optimized unary encoding (OUE), a third-party ldpest plugin.

Wang, Blocki, Li & Jha (2017), "Locally differentially private protocols for
frequency estimation".  The one-hot vector of the input is sent with its true
coordinate set to 1 with probability ``p = 1/2`` and every other coordinate
set to 1 with probability ``q = 1 / (e^a + 1)``.  Two inputs differ in two
coordinates, so the worst likelihood ratio is ``(p / q) ((1 - q) / (1 - p))
= (1 - q) / q = e^a``.  Unbiased estimate ``theta_j = (c_j / n - q) / (p - q)``
with variance ``pi_j (1 - pi_j) / (n (p - q)^2)``, ``pi_j = q + (p - q) theta_j``.

This distribution uses ldpest's public API only: it is the template of the
plugin author guide (docs/plugin-author-guide.md).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

import ldpest
from ldpest.validation import check_categories, check_epsilon

_RESOLUTION = 2.0 ** 53  # uniform draws are multiples of 2**-53


class OptimizedUnaryEncoding(ldpest.FrequencyOracle, ldpest.Mechanism):
    name = "optimized-unary-encoding"
    family = "multinomial"
    default_estimator = "frequency"
    report_dims = ("report", "category")

    def __init__(self, *, epsilon, categories):
        self._set_params(epsilon=check_epsilon(epsilon), categories=check_categories(categories))
        # rounded *up* to the uniform's resolution: a larger q lowers (1 - q) / q,
        # so the implemented channel never exceeds e^epsilon
        self._q = math.ceil(_RESOLUTION / (math.exp(self.epsilon) + 1)) / _RESOLUTION
        self._p = 0.5

    @property
    def d(self) -> int:
        return len(self.categories)

    def encode_data(self, data):
        return self.encode_labels(data, "data")

    def _privatize(self, codes, rng):
        n = codes.shape[0]
        out = (rng.random((n, self.d)) < self._q).astype(np.uint8)
        out[np.arange(n), codes] = rng.random(n) < self._p
        return out

    def encode_reports(self, values):
        values = np.asarray(values)
        if values.ndim != 2 or values.shape[1] != self.d:
            raise ldpest.DataError(
                f"reports have shape {values.shape} but mechanism {self.name!r} has {self.d} categories"
            )
        if not np.isin(values, (0, 1)).all():
            raise ldpest.DataError(f"reports of {self.name!r} must be 0/1")
        return values.astype(np.uint8)

    def channel(self):
        outputs = np.array(list(itertools.product((0, 1), repeat=self.d)), dtype=np.uint8)
        probs = np.where(np.eye(self.d, dtype=bool)[:, None, :], self._p, self._q)  # P(z_j = 1 | x)
        matrix = np.where(outputs[None] == 1, probs, 1 - probs).prod(axis=2)
        return ldpest.Channel(self.categories, outputs, matrix)

    def frequency_statistics(self, reports):
        return {"ones": reports.sum(axis=0, dtype=np.int64)}

    def frequency_estimate(self, stats, n):
        pi = stats["ones"] / n
        gap = self._p - self._q
        return (pi - self._q) / gap, np.sqrt(pi * (1 - pi) / n) / gap


@ldpest.hookimpl
def register_mechanisms(register):
    register(OptimizedUnaryEncoding)
