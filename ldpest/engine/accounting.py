"""What a deployment's reports give after a shuffler: :func:`shuffle_epsilon` and
:func:`plan_shuffle` (docs/accounting.md; the bounds in :mod:`ldpest.privacy.shuffle`).

Every bound here is an upper bound on the central epsilon of ``n`` shuffled reports at the given
``delta`` (the smallest of them is reported), and the lower bound, when one is known, is the
epsilon of two concrete neighbouring data sets, so the true value lies between them.  The model:
each user sends one report; a trusted shuffler removes who sent which and in what order; the
server and the other users do not collude with the shuffler.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..contract.base import Mechanism
from ..contract.registry import mechanism as registered_mechanism
from ..privacy import shuffle
from ..privacy.shuffle import VariationRatio
from ..stats.binomial import AffineBinomialOracle
from ..util.errors import ParameterError
from ..util.validation import check_epsilon

_LOWER_CHANNEL_CELLS = 1 << 22  # inputs^2 x outputs for the channel's most distinct pair

BOUND_NOTES = {
    "variation-ratio": "Wang et al. 2024 with this mechanism's (p, beta, q): proven theorem, evaluated "
                       "numerically with the left-out mass and rounding added (an upper bound)",
    "variation-ratio, generic": "Wang et al. 2024 for any epsilon0-LDP randomiser: proven theorem, evaluated "
                                "numerically (an upper bound)",
    "clones, numerical": "Feldman, McMillan, Talwar 2023 for any epsilon0-LDP randomiser: proven theorem, "
                         "evaluated numerically (an upper bound)",
    "clones, closed form": "Feldman, McMillan, Talwar 2023, Theorem 3.2: proven closed form, valid when "
                           "epsilon0 <= log(n / (16 log(2 / delta)))",
    "no amplification": "epsilon0 itself: shuffling never hurts",
}


@dataclass(frozen=True)
class ShuffleBound:
    """The central ``(epsilon, delta)`` of ``n`` shuffled reports.

    ``epsilon`` is the smallest proven upper bound (``method`` names it); ``lower`` a lower bound
    on the true epsilon (``lower_method`` says how), or None; ``bounds`` every bound computed, as
    ``name -> (lower end, upper end)`` of its numerical bracket (the upper end is the bound; a
    closed form has no bracket; None where it does not apply); ``parameters`` the mechanism's
    ``(p, beta, q)``."""

    epsilon: float
    delta: float
    n: int
    epsilon0: float
    method: str
    lower: float | None
    lower_method: str
    parameters: VariationRatio
    bounds: dict = field(default_factory=dict)
    mechanism: str = "any epsilon0-LDP randomiser"

    def to_dict(self) -> dict:
        return {"epsilon": self.epsilon, "delta": self.delta, "n": self.n, "epsilon0": self.epsilon0,
                "method": self.method, "lower": self.lower, "lower_method": self.lower_method,
                "mechanism": self.mechanism,
                "parameters": {"p": self.parameters.p, "beta": self.parameters.beta, "q": self.parameters.q},
                "bounds": {name: {"lower": pair[0], "upper": pair[1], "note": BOUND_NOTES[name]}
                           for name, pair in self.bounds.items()}}

    def __str__(self) -> str:
        lines = [f"{self.n:,} shuffled reports of {self.mechanism} (epsilon0 = {self.epsilon0:g}) are "
                 f"({self.epsilon:.6g}, {self.delta:g})-DP: {self.method}"]
        if self.lower is not None:
            lines.append(f"  and no better than epsilon {self.lower:.6g} ({self.lower_method})")
        for name, (low, high) in self.bounds.items():
            if high is None:
                shown = "does not apply"
            elif low is None:
                shown = f"{high:.6g}"
            else:
                shown = f"{high:.6g}  (numerical bracket [{low:.6g}, {high:.6g}])"
            lines.append(f"  {name:26} {shown}")
        return "\n".join(lines)


def _as_mechanism(mechanism) -> tuple[Mechanism | None, float]:
    if isinstance(mechanism, Mechanism):
        return mechanism, mechanism.epsilon
    if isinstance(mechanism, bool) or not isinstance(mechanism, (int, float, np.floating, np.integer)):
        raise ParameterError("shuffle_epsilon takes a mechanism (ldpest.mechanism(...)) or a local epsilon0 "
                             f"(any epsilon0-LDP randomiser), got {type(mechanism).__name__}")
    return None, check_epsilon(mechanism)


def shuffle_epsilon(mechanism, n: int, delta: float) -> ShuffleBound:
    """The central ``(epsilon, delta)`` after a trusted shuffler mixes ``n`` reports of
    ``mechanism`` (an ``ldpest.mechanism(...)``), or of any randomiser with local ``epsilon0``
    (a number).  Takes at most a few seconds for ``n <= 10^6`` (docs/accounting.md)."""
    built, epsilon0 = _as_mechanism(mechanism)
    n, delta = _check_n(n), _check_delta(delta)
    generic = VariationRatio.generic(epsilon0)
    parameters = generic if built is None else built.variation_ratio()
    bounds = {}
    if built is not None:
        bounds["variation-ratio"] = shuffle.variation_ratio_epsilon(parameters, n, delta)
    bounds["variation-ratio, generic"] = shuffle.variation_ratio_epsilon(generic, n, delta)
    bounds["clones, numerical"] = shuffle.clone_epsilon(epsilon0, n, delta)
    bounds["clones, closed form"] = (None, shuffle.closed_form_epsilon(epsilon0, n, delta))
    bounds["no amplification"] = (None, epsilon0)
    method, (_, best) = min(((name, pair) for name, pair in bounds.items() if pair[1] is not None),
                            key=lambda item: item[1][1])
    lower, lower_method = _lower_bound(built, parameters, bounds, n, delta)
    return ShuffleBound(epsilon=float(best), delta=delta, n=n, epsilon0=epsilon0, method=method,
                        lower=lower, lower_method=lower_method, parameters=parameters, bounds=bounds,
                        mechanism="any epsilon0-LDP randomiser" if built is None else built.name)


def _lower_bound(built, parameters, bounds, n, delta) -> tuple[float | None, str]:
    """The largest lower bound known here: the variation-ratio pair itself where the mechanism
    realises it (``shuffle_pair_is_attained``), and counting the reports in one set when two
    inputs differ and the others hold one value (post-processing: never above the true epsilon)."""
    if built is None:
        return None, "none known for an arbitrary randomiser"
    found = []
    if getattr(built, "shuffle_pair_is_attained", False):
        found.append((bounds["variation-ratio"][0], "the variation-ratio pair, which two data sets of this "
                                                     "mechanism realise (the others hold a third category)"))
    counting = _counting_probabilities(built)
    if counting is not None:
        inside, others = counting
        found.append((shuffle.counting_lower_bound(inside, others, n, delta),
                      "counting the reports in one set when one user changes and the others hold one value"))
    if not found:
        return None, "none known for this mechanism"
    return max(found)


def _counting_probabilities(built) -> tuple[tuple[float, float], float] | None:
    """``((P(S | x_0), P(S | x_1)), P(S | others))`` of a set of reports that tells two inputs apart."""
    if isinstance(built, AffineBinomialOracle):  # S: the reports that support category 0
        offset, gap = built.binomial_model()
        return (offset + gap, offset), offset
    try:
        channel = built.channel()
    except ParameterError:
        return None
    if channel is None or channel.shape[0] ** 2 * channel.shape[1] > _LOWER_CHANNEL_CELLS:
        return None
    rows = np.array([channel.row(i) for i in range(channel.shape[0])])
    distance = np.array([np.maximum(row - rows, 0).sum(axis=1) for row in rows])
    first, second = np.unravel_index(int(np.argmax(distance)), distance.shape)
    chosen = rows[first] > rows[second]
    return (float(rows[first][chosen].sum()), float(rows[second][chosen].sum())), float(rows[second][chosen].sum())


def _check_n(n) -> int:
    try:
        value = float(n)
    except (TypeError, ValueError):
        raise ParameterError(f"n must be a whole number of reports >= 2, got {n!r}") from None
    if isinstance(n, bool) or not math.isfinite(value) or not value.is_integer() or value < 2:
        raise ParameterError(f"n must be a whole number of reports >= 2, got {n!r}")
    return int(value)


def _check_delta(delta) -> float:
    try:
        value = float(delta)
    except (TypeError, ValueError):
        raise ParameterError(f"delta must be a number in (0, 1), got {delta!r}") from None
    if not 0 < value < 1:
        raise ParameterError(f"delta must be in (0, 1), got {delta!r}")
    return value


def plan_shuffle(target: float, delta: float, *, n=None, epsilon=None, mechanism: str | None = None,
                 **params) -> dict:
    """What a target central ``epsilon`` after shuffling needs: give ``epsilon`` (the local
    epsilon0) to get the smallest ``n``, or ``n`` to get the largest ``epsilon0``.  ``mechanism``
    (a registered name, with its ``params``, e.g. ``categories``) uses that mechanism's own
    bound; without it, any epsilon0-LDP randomiser.  Returns the plan and the bound it rests on."""
    target, delta = check_epsilon(target), _check_delta(delta)
    if (n is None) == (epsilon is None):
        raise ParameterError("give epsilon (the local epsilon0, to solve for n) or n (to solve for epsilon0), "
                             "not both and not neither")

    def bound(eps, count) -> ShuffleBound:
        local = eps if mechanism is None else registered_mechanism(mechanism, epsilon=eps, **params)
        return shuffle_epsilon(local, count, delta)

    if epsilon is not None:
        epsilon = check_epsilon(epsilon)
        if epsilon <= target:
            return _plan_row(bound(epsilon, 2), "n", target)
        count = _smallest_n(lambda m: bound(epsilon, m).epsilon <= target, target, epsilon)
        return _plan_row(bound(epsilon, count), "n", target)
    n = _check_n(n)
    low, high = target, _EPSILON0_MAX
    if bound(high, n).epsilon <= target:
        return _plan_row(bound(high, n), "epsilon0", target)
    for _ in range(30):  # bisection on epsilon0: the bound grows with it
        middle = (low + high) / 2
        if bound(middle, n).epsilon <= target:
            low = middle
        else:
            high = middle
        if high - low < 1e-4 * low:
            break
    return _plan_row(bound(low, n), "epsilon0", target)


_EPSILON0_MAX = 30.0
_N_MAX = 10 ** 12


def _smallest_n(enough, target, epsilon0) -> int:
    """The smallest ``n`` where ``enough(n)``, by doubling then bisection (the bounds fall with n)."""
    high = max(2, int(16 * math.exp(epsilon0) / target ** 2))
    while not enough(high):
        if high >= _N_MAX:
            raise ParameterError(f"no n up to {_N_MAX:.0e} brings epsilon0 = {epsilon0:g} to {target:g}")
        high = min(high * 4, _N_MAX)
    low = high // 4 if high > 2 else 1
    while high - low > max(1, low // 1000):  # to 0.1% of n
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle
    return high


def _plan_row(result: ShuffleBound, solved: str, target: float) -> dict:
    return {"solved_for": solved, "target_epsilon": target, "n": result.n, "epsilon0": result.epsilon0,
            "central_epsilon": result.epsilon, "delta": result.delta, "method": result.method,
            "mechanism": result.mechanism, "lower": result.lower}
