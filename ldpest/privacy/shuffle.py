"""Privacy amplification by shuffling: the central ``(epsilon, delta)`` of ``n`` local reports
whose order a trusted shuffler has destroyed (docs/accounting.md).

Three bounds, each for any randomiser ``R`` that is ``epsilon_0``-LDP:

* :func:`closed_form_epsilon` - Feldman, McMillan, Talwar ("Hiding among the clones", FOCS 2021,
  Theorem 3.2 as in their public code): ``log(1 + (1 - e^-e0) / (1 + e^(-e0 - e1)) (a + c))`` with
  ``a = 8 sqrt(e^e0 log(4 / delta) / n)``, ``c = 8 e^e0 / n``, ``e1 = log(1 + a + c)``, valid when
  ``e0 <= log(n / (16 log(2 / delta)))`` (:func:`closed_form_valid`; the public code asks
  ``log(4 / delta)``, which is stricter: both are tested against the numerical bound).  Proven.
* :func:`variation_ratio_epsilon` - Wang et al. (VLDB 2024, "Unified, tight and fast privacy
  amplification in the shuffle model"): a randomiser with the *variation-ratio* parameters
  ``(p, beta, q)`` (every likelihood ratio at most ``p``, every total variation between two
  inputs' laws at most ``beta``, the ratio to any other input's law at most ``q``) is, after
  shuffling, at most as distinguishable as the pair of laws below; their hockey-stick divergence
  is computed here by an exact sum over ``C``.
* :func:`clone_epsilon` - FMT's numerical bound: the same computation with their clone
  parameters (``p = e^e0``, ``alpha = 1 / (e^e0 + 1)``, ``r_0 = r_1 = e^-e0 / 2``).

The pair (``alpha = beta / (p - 1)``, ``r_b = alpha p / q``): each of the ``n - 1`` other users
is a clone of ``x_0`` with probability ``r_0``, of ``x_1`` with ``r_1``, else neither, so the
number ``C`` of clones is ``Binomial(n - 1, r_0 + r_1)`` and the clones of ``x_0`` among them
``A ~ Binomial(C, r_0 / (r_0 + r_1))``; the user who differs outputs "0", "1" or "neither" with
probabilities ``(p alpha, alpha, 1 - alpha - p alpha)`` (from ``x_0``) or ``(alpha, p alpha, .)``
(from ``x_1``).  Given ``C = c`` the most distinguishing event is a threshold on ``A``, so the
divergence given ``c`` is three binomial tails (``_divergence_given``), and
``delta(eps) <= E_C[divergence]``.

Numerics, stated: the sum runs over the ``c`` around ``C``'s mean that hold all of its law but
at most ``delta / 10^4``; the
**upper** divergence adds the exact mass left out (each term is at most 1) and a margin for the
float rounding, so it is an upper bound; the **lower** one subtracts them (each term is at least
``-e^eps``).  Each epsilon comes from a bracket narrower than ``tolerance`` (1e-7), kept by
regula falsi on the divergence, which falls with epsilon: the upper bound is the bracket's top,
where the upper divergence was checked to be at most ``delta``; the lower value its bottom,
where the lower divergence exceeds it.  ``(lower, upper)`` thus encloses the epsilon of the
computed pair; only ``upper`` is a privacy guarantee.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..util.errors import ParameterError

TOLERANCE = 1e-7  # the width, in epsilon, of the bracket each bound is taken from


@dataclass(frozen=True)
class VariationRatio:
    """Wang et al.'s parameters of a randomiser: ``p`` bounds every likelihood ratio, ``beta``
    every total variation distance between two inputs' laws, ``q`` the ratio of an input's law
    to any other input's law (``q = p`` for one-message randomisers)."""

    p: float
    beta: float
    q: float

    def __post_init__(self):
        if not (self.p > 1 and math.isfinite(self.p)):
            raise ParameterError(f"p must be a finite number > 1, got {self.p!r}")
        if not (0 < self.beta <= (self.p - 1) / (self.p + 1) * (1 + 1e-12)):
            raise ParameterError(f"beta must be in (0, (p - 1) / (p + 1)] = (0, {(self.p - 1) / (self.p + 1):.6g}] "
                                 f"(no p-bounded pair of laws is further apart), got {self.beta!r}")
        if not self.q >= 1:
            raise ParameterError(f"q must be >= 1, got {self.q!r}")

    @classmethod
    def generic(cls, epsilon: float) -> VariationRatio:
        """What every ``epsilon``-LDP randomiser has: ``(e^eps, (e^eps - 1) / (e^eps + 1), e^eps)``."""
        p = math.exp(epsilon)
        return cls(p, math.tanh(epsilon / 2), p)


def _divergence_given(epsilon, p, alpha, r0, r1, n, c):
    """``max(P_0(E) - e^eps P_1(E))`` over events ``E`` given ``C = c`` (vectorised over ``c``):
    the threshold on ``A`` where ``P_0 / P_1`` crosses ``e^eps``, with the user who differs adding
    one to the clones of ``x_0``, to those of ``x_1``, or to neither (module docstring)."""
    from scipy import stats  # here, not at the top: 0.5 s that every process loading the registry paid

    e = math.exp(epsilon)
    rate = r0 / (r0 + r1)
    others = (1 - alpha - alpha * p) / (1 - r0 - r1)
    denominator = alpha * (p / r0 - 1 / r1 + e * (p / r1 - 1 / r0))
    with_one = ((e * p - 1) * alpha * (c + 1) / r1 + (e - 1) * others * (n - c - 1)) / denominator
    without = ((e * p - 1) * alpha * c / r1 + (e - 1) * others * (n - c)) / denominator
    with_one, without = np.ceil(with_one), np.ceil(without)
    v0 = stats.binom.sf(with_one - 2, c, rate)  # P(A >= threshold - 1): the user adds to x_0's clones
    v1 = stats.binom.sf(with_one - 1, c, rate)
    v2 = stats.binom.sf(without - 1, c, rate)
    neither = 1 - alpha - alpha * p
    first = p * alpha * v0 + alpha * v1 + neither * v2
    second = alpha * v0 + p * alpha * v1 + neither * v2
    return first - e * second  # a regrouping by C of the optimal event's mass: terms may be < 0


def _clone_counts(n: int, share: float, delta: float) -> tuple[np.ndarray, np.ndarray, float]:
    """The ``c`` around the mean of ``Binomial(n - 1, share)`` whose law holds all but at most
    ``delta / 10^4`` (widened until the exact left-out mass says so), their probabilities, and
    that mass."""
    from scipy import stats

    mean, spread = (n - 1) * share, math.sqrt((n - 1) * share * (1 - share))
    law = stats.binom(n - 1, share)
    z = math.sqrt(2 * math.log(1e4 / delta)) + 1
    while True:
        reach = z * spread + 30
        c = np.arange(max(0, math.floor(mean - reach)), min(n - 1, math.ceil(mean + reach)) + 1, dtype=np.float64)
        left_out = float(law.cdf(c[0] - 1) + law.sf(c[-1]))
        if left_out <= delta * 1e-4 or (c[0] == 0 and c[-1] == n - 1):
            return c, law.pmf(c), left_out
        z *= 1.5


def _divergence(epsilon, p, alpha, r0, r1, n, counts) -> tuple[float, float]:
    """``(lower, upper)`` on ``E_C[divergence given C]``, both directions (the larger): a term
    lies in ``[-e^eps, 1]``, so the left-out mass bounds what the sum misses, and the float
    rounding of the sum (each term's error below 1e-13, for tails accurate to 1e-15) is added."""
    c, mass, left_out = counts
    values = [float(mass @ _divergence_given(epsilon, p, alpha, r0, r1, n, c))]
    if r0 != r1:  # the other direction: the roles of x_0 and x_1 swapped
        values.append(float(mass @ _divergence_given(epsilon, p, alpha, r1, r0, n, c)))
    value = max(values)
    rounding = 1e-13 * math.exp(epsilon)
    return value - left_out * math.exp(epsilon) - rounding, value + left_out + rounding


def _bracket(divergence, log_p: float, delta: float, tolerance: float) -> tuple[float, float]:
    """``(lower, upper)`` epsilons: ``upper`` a point whose upper divergence is at most ``delta``
    (``log p`` if none below it), ``lower`` one whose lower divergence exceeds it (0 if none).
    The bracket is kept by the Illinois variant of regula falsi on ``log`` of the upper
    divergence, which falls with epsilon, until it is narrower than ``tolerance``; its bottom is
    the lower value when the lower divergence there exceeds ``delta`` too (the two differ by
    about 1e-13), else a second search on the lower divergence gives it."""
    def search(which):
        def gap(eps):
            value = divergence(eps)[which]
            return math.log(value / delta) if value > 0 else -math.inf

        low, high = 0.0, log_p
        g_low, g_high = gap(low), gap(high)
        if g_low <= 0:
            return low, low
        if g_high > 0:
            return high, high
        side = 0
        while high - low > tolerance:
            if math.isinf(g_high):
                middle = (low + high) / 2
            else:
                middle = (low * g_high - high * g_low) / (g_high - g_low)
                middle = min(max(middle, low + tolerance / 4), high - tolerance / 4)
            g = gap(middle)
            if g > 0:
                low, g_low = middle, g
                if side == 1:
                    g_high /= 2
                side = 1
            else:
                high, g_high = middle, g
                if side == -1:
                    g_low /= 2
                side = -1
        return low, high

    low, high = search(1)
    if low == high or (low > 0 and divergence(low)[0] > delta):
        return (low if low < high or low == log_p else 0.0), high
    return search(0)[0], high


def _check(n, delta) -> tuple[int, float]:
    if isinstance(n, bool) or not float(n).is_integer() or n < 2:
        raise ParameterError(f"n must be a whole number of reports >= 2, got {n!r}")
    delta = float(delta)
    if not 0 < delta < 1:
        raise ParameterError(f"delta must be in (0, 1), got {delta!r}")
    return int(n), delta


def variation_ratio_epsilon(parameters: VariationRatio, n: int, delta: float, *,
                            tolerance: float = TOLERANCE) -> tuple[float, float]:
    """Wang et al.'s numerical bound for ``n`` shuffled reports: ``(lower, upper)``, the bracket
    of the epsilon at which the pair's divergence equals ``delta`` (module docstring); ``upper``
    is the proven upper bound (``log p``: no amplification shown)."""
    n, delta = _check(n, delta)
    p, beta, q = parameters.p, parameters.beta, parameters.q
    alpha = beta / (p - 1)
    r = alpha * p / q
    counts = _clone_counts(n, 2 * r, delta)
    return _bracket(lambda eps: _divergence(eps, p, alpha, r, r, n, counts), math.log(p), delta, tolerance)


def clone_epsilon(epsilon0: float, n: int, delta: float, *, tolerance: float = TOLERANCE) -> tuple[float, float]:
    """Feldman, McMillan and Talwar's numerical bound for any ``epsilon0``-LDP randomiser:
    ``(lower, upper)`` as :func:`variation_ratio_epsilon`, with their clone parameters."""
    n, delta = _check(n, delta)
    p = math.exp(epsilon0)
    alpha, r = 1 / (p + 1), 1 / (2 * p)
    counts = _clone_counts(n, 2 * r, delta)
    return _bracket(lambda eps: _divergence(eps, p, alpha, r, r, n, counts), epsilon0, delta, tolerance)


def closed_form_valid(epsilon0: float, n: int, delta: float) -> bool:
    """FMT's condition ``epsilon0 <= log(n / (16 log(2 / delta)))`` (the paper's; their public
    code checks ``log(4 / delta)``, which is stricter)."""
    return n > 16 * math.log(2 / delta) and epsilon0 <= math.log(n / (16 * math.log(2 / delta)))


def closed_form_epsilon(epsilon0: float, n: int, delta: float) -> float | None:
    """FMT's closed-form upper bound (module docstring), or None outside its condition."""
    n, delta = _check(n, delta)
    if not closed_form_valid(epsilon0, n, delta):
        return None
    a = 8 * math.sqrt(math.exp(epsilon0) * math.log(4 / delta) / n)
    c = 8 * math.exp(epsilon0) / n
    e1 = math.log(1 + a + c)
    shrink = (1 - math.exp(-epsilon0)) / (1 + math.exp(-epsilon0 - e1))
    return min(epsilon0, math.log1p(shrink * (a + c)))


def pair_epsilon(first: np.ndarray, second: np.ndarray, delta: float) -> float:
    """The smallest epsilon with ``max_E P(E) - e^eps Q(E) <= delta`` both ways, for two laws on
    the same finite outcomes (exact up to float rounding): used for lower bounds, where a
    concrete pair of neighbouring data sets is known."""
    first, second = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    if not (np.all(np.isfinite(first)) and np.all(np.isfinite(second))):
        raise ValueError("pair_epsilon: the laws must be finite numbers")

    def divergence(eps):
        e = math.exp(eps)
        return max(np.maximum(first - e * second, 0).sum(), np.maximum(second - e * first, 0).sum())

    if divergence(0.0) <= delta:
        return 0.0
    both = (first > 0) & (second > 0)
    high = float(np.max(np.abs(np.log(first[both]) - np.log(second[both])), initial=0.0)) + 1.0
    low = 0.0
    while high - low > TOLERANCE:  # bisection: the divergence falls with epsilon
        middle = (low + high) / 2
        if divergence(middle) > delta:
            low = middle
        else:
            high = middle
    return low


def counting_lower_bound(inside: tuple[float, float], others: float, n: int, delta: float) -> float:
    """A lower bound on the shuffled epsilon of any randomiser: data sets that differ in one user
    (``x_0`` or ``x_1``) while the ``n - 1`` others hold one value; the server counts the reports
    in one set ``S``.  ``inside = (P(R(x_0) in S), P(R(x_1) in S))``, ``others`` the others'
    probability; the count is ``Binomial(n - 1, others)`` plus one Bernoulli, and post-processing
    never raises epsilon, so its epsilon is a lower bound on the shuffled reports' epsilon."""
    from scipy import stats

    n, delta = _check(n, delta)
    k = np.arange(n + 1, dtype=np.float64)
    law = stats.binom(n - 1, others)
    base, shifted = law.pmf(k), law.pmf(k - 1)
    first = (1 - inside[0]) * base + inside[0] * shifted
    second = (1 - inside[1]) * base + inside[1] * shifted
    return pair_epsilon(first, second, delta)
