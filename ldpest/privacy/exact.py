"""Exact randomness and exact privacy arithmetic (docs/privacy.md).

A privacy claim is only as good as the law the code *implements*.  ldpest
therefore draws every privacy-relevant Bernoulli by comparing a uniformly
random 64-bit word ``W`` with an integer threshold ``T``: ``P(W < T) = T / 2^64``
exactly, whatever ``T``.  Thresholds are chosen once per mechanism with exact
integer and decimal arithmetic so that the implemented likelihood ratio is at
most ``e^epsilon`` - never the float formula, which rounds to 1.0 at large
epsilon and to 0 at small probabilities.

The tools here are public so that third-party mechanisms get the same
exactness (the example plugin ``ldpest-oue`` uses them):

* :func:`random_words` - uniform 64-bit words from any generator ldpest accepts;
* :func:`ratio_within` - a rigorous test of ``num / den <= e^x``;
* :func:`largest_threshold` / :func:`smallest_threshold` - the extreme integer
  threshold whose implemented ratio still satisfies such a test;
* :func:`log_ratio` - ``log(num / den)`` of an exact ratio, for reports;
* :func:`select` - ``np.where`` on integers without a branch per element (random masks).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal, localcontext
from fractions import Fraction
from functools import lru_cache

import numpy as np

WORD = 1 << 64  #: 2^64, the number of values of one random word

# bit generators whose raw output is one uniform 64-bit word (MT19937's is 32 bits)
_RAW_64 = (np.random.PCG64, np.random.PCG64DXSM, np.random.Philox, np.random.SFC64)

_DIGITS = 80  # decimal working precision: |error of ln| < 1e-75, far below the guard even times 2^41
_GUARD = Decimal("1e-45")  # results this close to the boundary count as "not proven"


def random_words(rng, size) -> np.ndarray:
    """``size`` independent uniform 64-bit words (``numpy.uint64``) from ``rng``.

    ``rng``: a :class:`numpy.random.Generator` or :class:`ldpest.SecureGenerator`
    (anything with ``words(size)`` or numpy's ``integers``).
    """
    words = getattr(rng, "words", None)
    if words is not None:
        return words(size)
    shape = (size,) if np.ndim(size) == 0 else tuple(size)
    count = math.prod(shape)
    bits = getattr(rng, "bit_generator", None)
    if type(bits) in _RAW_64:
        # the same words as the full-range integers below, without their dispatch: 2.35 against 2.72 ns a word
        # (2^14 at a time, .venv/bin/python bench/bench_words.py)
        return bits.random_raw(count).reshape(shape)
    # the full uint64 range is the bit generator's raw output, uniform with no rejection: 3.7-4.1 ns a
    # word against 8.0-8.3 ns for two 32-bit halves (numpy 2.4.6 here: .venv/bin/python bench/bench_words.py)
    return rng.integers(0, 0xFFFFFFFFFFFFFFFF, size=count, dtype=np.uint64, endpoint=True).reshape(shape)


def uniform_below(rng, span: int, size: int, dtype=np.int64) -> np.ndarray:
    """``size`` independent integers exactly uniform on ``0..span-1`` (``dtype``, a signed integer type
    that holds ``span - 1``: int64 by default; ``1 <= span <= 2^32``).

    Where ``span`` is at least 63/64 of ``2^b``, ``b = bit_length(span - 1)``: the top ``b`` bits of 32-bit
    halves of :func:`random_words`, each value at or above ``span`` drawn again.  Half a word a value: at
    ``span = 2^31 - 2`` 2.4-3.4 ns a value against 9.8-12.1 for numpy's bounded integers, which draw everything
    else (there the redraws cost more than they save: 8.9-9.5 against 3.6-4.4 ns at ``span = 3``; two runs of
    .venv/bin/python bench/bench_words.py)."""
    if not 1 <= span <= 1 << 32:
        raise ValueError(f"uniform_below: span must be in 1..2^32, got {span}")
    if span - 1 > np.iinfo(dtype).max:
        raise ValueError(f"uniform_below: {np.dtype(dtype)} does not hold {span - 1}")
    bits = max(1, (span - 1).bit_length())
    if span * 64 < 63 << bits:
        return rng.integers(0, span, size=size, dtype=dtype)
    return _top_bits_redrawn(rng, span, size, dtype)


def _top_bits_redrawn(rng, span: int, size: int, dtype=np.int64) -> np.ndarray:
    """:func:`uniform_below`'s own path, at any span up to 2^32."""
    shift = np.uint32(32 - max(1, (span - 1).bit_length()))
    values = (random_words(rng, -(-size // 2)).view(np.uint32)[:size] >> shift).astype(dtype)
    again = np.flatnonzero(values >= span)
    while again.size:
        values[again] = random_words(rng, -(-again.size // 2)).view(np.uint32)[:again.size] >> shift
        again = again[values[again] >= span]
    return values


_HEAD_BITS = 16
_TAIL_BITS = 64 - _HEAD_BITS


def words_below(rng, size, threshold: int) -> np.ndarray:
    """Booleans with exactly the law of ``random_words(rng, size) < threshold``, drawing 16 bits
    per word and the other 48 only where the first 16 tie with the threshold's (probability
    2^-16 per word): four times fewer random bytes for the same coins.

    A uniform word is ``head * 2^48 + tail`` with independent uniform ``head`` (16 bits) and
    ``tail`` (48 bits), so ``P(word < T) = P(head < T_head) + P(head = T_head) P(tail < T_tail)``
    with ``T = T_head * 2^48 + T_tail``; the heads are the 16-bit quarters of uniform words.
    """
    if not 0 <= threshold <= WORD:
        raise ValueError(f"threshold must be in [0, 2^64], got {threshold}")
    shape = (size,) if np.ndim(size) == 0 else tuple(size)
    count = int(np.prod(shape, dtype=np.int64))
    if threshold == WORD:
        return np.ones(shape, dtype=bool)
    head, tail = threshold >> _TAIL_BITS, threshold & ((1 << _TAIL_BITS) - 1)
    heads = random_words(rng, -(-count // 4)).view(np.uint16)[:count]
    below = heads < np.uint16(head)
    ties = np.flatnonzero(heads == np.uint16(head))
    if ties.size:
        below[ties] = (random_words(rng, ties.size) >> np.uint64(_HEAD_BITS)) < np.uint64(tail)
    return below.reshape(shape)


def _ln(value: int | Fraction) -> Decimal:
    value = Fraction(value)
    return Decimal(value.numerator).ln() - Decimal(value.denominator).ln()


def ratio_within(num: int | Fraction, den: int | Fraction, x: float, power: int = 1) -> bool:
    """True only if ``(num / den)^power <= e^x`` is proven (``num, den >= 0``; ``x`` a float).

    Uses correctly rounded decimal logarithms at 60 digits; a ratio within
    1e-45 of ``e^x`` in log scale is reported as not proven (the safe answer).
    """
    num, den = Fraction(num), Fraction(den)
    if num < 0 or den < 0:
        raise ValueError("ratio_within: num and den must be non-negative")
    if num == 0:
        return True
    if den == 0:
        return False
    with localcontext() as context:
        context.prec = _DIGITS
        return power * (_ln(num) - _ln(den)) <= Decimal(x) - _GUARD


def log_ratio(num: int | Fraction, den: int | Fraction) -> float:
    """``log(num / den)`` rounded to float (``inf`` when ``den`` is 0)."""
    num, den = Fraction(num), Fraction(den)
    if den == 0:
        return math.inf
    if num == 0:
        return -math.inf
    with localcontext() as context:
        context.prec = _DIGITS
        return float(_ln(num) - _ln(den))


def largest_threshold(ok: Callable[[int], bool], low: int, high: int, guess: int | None = None) -> int:
    """The largest integer ``T`` in ``[low, high]`` with ``ok(T)``, for ``ok`` true up to a point.

    ``ok`` must be monotone (true, then false); ``ok(low)`` must hold.  A
    float ``guess`` makes the search a few exact evaluations only.
    """
    if not ok(low):
        raise ValueError("largest_threshold: the condition fails even at the lower end")
    guess = low if guess is None else min(max(int(guess), low), high)
    step = 1
    if ok(guess):  # gallop up from a good guess
        good, bad = guess, None
        while bad is None:
            probe = good + step
            if probe > high:
                probe = high
                if ok(probe):
                    return high
                bad = probe
            elif ok(probe):
                good, step = probe, step * 2
            else:
                bad = probe
    else:  # gallop down
        bad, good = guess, None
        while good is None:
            probe = max(low, bad - step)
            if ok(probe):
                good = probe
            else:
                bad, step = probe, step * 2
    while bad - good > 1:
        middle = (good + bad) // 2
        if ok(middle):
            good = middle
        else:
            bad = middle
    return good


def smallest_threshold(ok: Callable[[int], bool], low: int, high: int, guess: int | None = None) -> int:
    """The smallest integer ``T`` in ``[low, high]`` with ``ok(T)``, for ``ok`` false up to a point
    (mirror of :func:`largest_threshold`; ``ok(high)`` must hold)."""
    flipped = largest_threshold(lambda t: ok(high + low - t), low, high,
                                None if guess is None else high + low - int(guess))
    return high + low - flipped


@lru_cache(maxsize=1024)  # a pure function; mechanisms rebuilt from specs reuse the proof
def keep_threshold(epsilon: float, others: int = 1) -> int:
    """The largest ``T < 2^64`` with ``T * others / (2^64 - T) <= e^epsilon``.

    Keep the true value when ``W < T`` (probability ``p = T / 2^64``) and
    report one of ``others`` alternatives uniformly otherwise: the
    implemented ratio ``p / ((1 - p) / others)`` is at most ``e^epsilon``.
    For large epsilon ``T`` stops at ``2^64 - 1``: every output keeps a
    positive probability and the channel is then *more* private than asked.
    """
    def ok(t: int) -> bool:
        return ratio_within(t * others, WORD - t, epsilon)

    guess = WORD / (1.0 + others * math.exp(-min(epsilon, 700.0)))
    threshold = largest_threshold(ok, 0, WORD - 1, guess=min(guess, WORD - 1))
    if threshold * others <= WORD - threshold:  # the truth no likelier than an alternative
        raise too_small(epsilon, "a 64-bit keep threshold")
    return threshold


def shared_keep_threshold(epsilon: float, others: int) -> tuple[int, int]:
    """``(keep, share)``: :func:`keep_threshold` lowered by less than ``others`` so that the words it leaves
    split evenly, ``2^64 - keep = others * share``.  Lowering the keep probability only lowers the ratio
    ``keep / share``, so the proof stands; :func:`keep_or_other` draws from it with one word a report."""
    share = -(-(WORD - keep_threshold(epsilon, others)) // others)
    return WORD - share * others, share


def keep_or_other(truth: np.ndarray, words: np.ndarray, keep: int, share: int) -> np.ndarray:
    """k-ary randomized response from one word a report: ``truth`` where the word is below ``keep``, else
    the ``((word - keep) // share)``-th of the other values ``0..k-1`` (``truth`` skipped), each of them
    exactly ``share`` words (``keep, share`` from :func:`shared_keep_threshold`).  In ``truth``'s dtype;
    ``words`` (uint64) is overwritten."""
    kept = words < np.uint64(keep)
    words -= np.uint64(keep)  # wraps where kept: those reports take the truth below
    words //= np.uint64(share)
    other = words.astype(truth.dtype)
    other += other >= truth
    return select(kept, truth, other)


def select(mask: np.ndarray, if_true, otherwise) -> np.ndarray:
    """``np.where(mask, if_true, otherwise)`` for integers, without a branch per element:
    ``otherwise + mask (if_true - otherwise)`` in the integers' common dtype, whose wrapping
    arithmetic is exact modulo 2^bits.  On a random mask numpy's ``where`` mispredicts about every
    other element: 4.2 ns an element in int8 against 0.10-0.13 ns for this (2^16 elements, session 25)."""
    dtype = np.result_type(if_true, otherwise)
    if dtype.kind not in "iu":
        raise TypeError(f"select blends integers, not {dtype}")
    out = np.subtract(if_true, otherwise, dtype=dtype)
    out *= mask
    out += otherwise
    return out


def too_small(epsilon: float, what: str):
    """The error for an epsilon below what 64-bit thresholds and float64 estimates resolve: there,
    the largest threshold with a proven ratio <= e^epsilon no longer favours the true value (the
    channel would ignore the input, or even invert it and break the bound the other way)."""
    from ..util.errors import ParameterError

    return ParameterError(f"epsilon = {epsilon:g} is too small for {what}: at 64-bit resolution the channel "
                          "cannot favour the true value while keeping the likelihood ratio proven <= e^epsilon; "
                          "use a larger epsilon (1e-12 or more)")


def require_gap(gap: float, epsilon: float, what: str) -> None:
    """Refuse a channel whose implemented favour of the truth (``p - q`` in float64) is not positive:
    its estimate would divide by zero."""
    if not gap > 0:
        raise too_small(epsilon, what)


# -- continuous inputs (docs/privacy.md, "Continuous mechanisms") ------------------------------------
@lru_cache(maxsize=1024)
def window_threshold(epsilon: float, inside: int, outside: int) -> int:
    """The largest ``T < 2^64`` with ``(T / inside) / ((2^64 - T) / outside) <= e^epsilon`` (proven).

    A lattice output of ``inside + outside`` points that falls inside the input's window when
    ``W < T`` (then uniformly on its ``inside`` points) and outside otherwise (uniformly on the
    ``outside`` others) gives every output the probability ``T / (2^64 inside)`` or
    ``(2^64 - T) / (2^64 outside)``: a two-level channel whose likelihood ratio is at most
    e^epsilon between any two inputs whose windows have the same sizes.  ``keep_threshold`` is
    the case ``inside = 1``.
    """
    if inside < 1 or outside < 1:
        raise ValueError("window_threshold: a window and its outside need at least one point each")

    def ok(t: int) -> bool:
        return ratio_within(t * outside, (WORD - t) * inside, epsilon)

    share = inside * math.exp(min(epsilon, 700.0))
    guess = WORD * share / (share + outside)
    threshold = largest_threshold(ok, 0, WORD - 1, guess=min(guess, WORD - 1))
    if threshold * outside <= (WORD - threshold) * inside:  # the window no denser than the outside
        raise too_small(epsilon, "a 64-bit window threshold")
    return threshold


def randomized_rounding(values, low: float, high: float, steps: int, rng) -> np.ndarray:
    """Unbiased randomised rounding of numbers in ``[low, high]`` to the grid ``low + i (high - low) /
    steps``, ``i = 0..steps``: ``i = floor(t)`` or ``floor(t) + 1`` with ``t = (x - low) steps /
    (high - low)``, up with probability ``t - floor(t)``, so ``E[i] = t``.

    The coin may be a float (``rng.random``, 53 bits): it decides only which channel row a record
    uses, and any mixture of epsilon-private rows is epsilon-private; its float rounding costs
    unbiasedness at most 2^-53 of a grid step, never privacy (:func:`rounding_mixture` gives the
    mixture the kit checks)."""
    scaled = np.subtract(values, low, dtype=np.float64)
    scaled *= steps / (high - low)
    lower = np.floor(scaled)
    np.clip(lower, 0, steps, out=lower)
    scaled -= lower  # the fraction: the probability of rounding up
    index = lower.astype(np.int64)
    index += rng.random(scaled.shape) < scaled
    return np.minimum(index, steps, out=index)


def rounding_mixture(value: float, low: float, high: float, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """The grid points and weights that :func:`randomized_rounding` mixes for one ``value``: the
    ``channel_mixture(x)`` of a mechanism that rounds its input this way."""
    scaled = (float(value) - low) * (steps / (high - low))
    lower = min(max(math.floor(scaled), 0), steps)
    up = min(max(scaled - lower, 0.0), 1.0)
    if lower == steps or up == 0.0:
        return np.array([lower]), np.array([1.0])
    return np.array([lower, lower + 1]), np.array([1.0 - up, up])
