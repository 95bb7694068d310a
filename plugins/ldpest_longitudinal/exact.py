"""Exact thresholds of the longitudinal mechanisms (docs/accounting.md, "Repeated collection").

Every privacy-relevant coin compares a uniform 64-bit word with an integer threshold, so the
implemented probabilities are integers over ``2^64`` (:mod:`ldpest.privacy.exact`).  A generalised
randomized response over ``d`` values splits the word range into a keep interval of ``keep``
words and ``d - 1`` intervals of exactly ``cell`` words each (``keep + (d - 1) cell = 2^64``), so
every other value has exactly the same probability: no modulo bias enters the channel.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ldpest import ParameterError
from ldpest.privacy.exact import WORD, log_ratio, ratio_within, select, smallest_threshold, too_small


def declared_epsilon(num: int | Fraction, den: int | Fraction, power: int = 1) -> float:
    """The smallest float ``x`` that is proven ``>= power * log(num / den)``: the epsilon a
    mechanism declares for its implemented worst ratio ``(num / den)^power``."""
    x = power * log_ratio(num, den)
    while not ratio_within(num, den, x, power):
        x = math.nextafter(x, math.inf)
    return x


def grr_cell(ok, others: int, epsilon: float, what: str) -> int:
    """The smallest ``cell >= 1`` with ``ok(cell)`` (a ratio proven within its epsilon, false for
    small cells), whose keep interval ``2^64 - others cell`` still favours the truth."""
    high = WORD // (others + 1)
    if not ok(high):
        raise too_small(epsilon, what)
    cell = smallest_threshold(ok, 1, high)
    if WORD - others * cell <= cell:
        raise too_small(epsilon, what)
    return cell


def grr_permanent_cell(epsilon: float, others: int) -> int:
    """The cell of a generalised randomized response with ratio ``keep / cell <= e^epsilon``."""
    return grr_cell(lambda cell: ratio_within(WORD - others * cell, cell, epsilon), others, epsilon,
                    "generalised randomized response")


def grr_sample(codes: np.ndarray, words: np.ndarray, d: int, cell: int) -> np.ndarray:
    """Generalised randomized response of category indices ``codes`` from one uniform word each:
    keep below ``2^64 - (d - 1) cell``, else the ``(word - keep) // cell``-th other category."""
    keep = np.uint64(WORD - (d - 1) * cell)
    other = (words - keep) // np.uint64(cell)  # wraps for kept records: masked below
    other = other.astype(np.int64)
    other += other >= codes
    return select(words < keep, codes, other)


def check_probability(name: str, value) -> float:
    """A probability strictly inside (0, 1)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < float(value) < 1:
        raise ParameterError(f"{name} must be a probability strictly between 0 and 1, got {value!r}")
    return float(value)


def word_threshold(probability: float) -> int:
    """The integer threshold nearest ``probability * 2^64`` (the implemented probability is
    ``threshold / 2^64``, used exactly by the channel and the estimators)."""
    return int(round(Fraction(probability) * WORD))
