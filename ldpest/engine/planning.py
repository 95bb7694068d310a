"""Choosing a frequency oracle and planning a survey's accuracy (docs/frequency-oracles.md).

Every registered :class:`~ldpest.FrequencyOracle` that declares its variance
(:meth:`~ldpest.FrequencyOracle.worst_case_variance`; third-party ones too)
takes part:

* :func:`choose_mechanism` - ``ldpest.mechanism("auto", epsilon=..., categories=...)``:
  the oracle with the smallest worst-case summed variance
  ``max_theta sum_j n Var(theta_hat_j)`` at this ``(d, epsilon)``; ties go to
  the smaller report.  The returned mechanism's spec names the choice and its
  tuned parameters, so reports record it.
* :func:`plan` - ``ldpest plan``: for given two of (epsilon, n, stderr) the
  third, where ``stderr`` is the worst-case standard error of one category's
  frequency, ``sqrt(max_{theta, j} n Var(theta_hat_j) / n)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ..contract.base import FrequencyOracle, Mechanism
from ..contract.registry import get_registry
from ..contract.registry import mechanism as registered_mechanism
from ..util.errors import ParameterError
from ..util.validation import (
    check_categories,
    check_epsilon,
    check_positive_int,
    check_positive_real,
)

_EPSILON_RANGE = (1e-3, 30.0)  # where plan() searches for the epsilon a target needs


def frequency_oracle_names() -> list[str]:
    """Registered mechanisms that are frequency oracles declaring their variance, for one collection
    (mechanisms for repeated collection, :class:`ldpest.Longitudinal`, are chosen for their memoisation,
    not by variance: they are left out)."""
    from ..contract.longitudinal import Longitudinal

    registry = get_registry()
    names = []
    for info in registry.infos():
        if info.kind != "mechanism":
            continue
        cls = registry.get("mechanism", info.name)
        if issubclass(cls, FrequencyOracle) and cls.declares_variance() and not issubclass(cls, Longitudinal):
            names.append(info.name)
    return names


def _build(name: str, epsilon: float, categories: list) -> Mechanism | None:
    try:
        return registered_mechanism(name, epsilon=epsilon, categories=categories)
    except ParameterError:  # outside the oracle's range (e.g. one-hot Laplace at epsilon <= 2^-12)
        return None


def candidates(epsilon: float, categories: list, among: Iterable[str] | None = None) -> list[Mechanism]:
    """Every declaring oracle built at (epsilon, categories), best worst-case variance first."""
    names = frequency_oracle_names() if among is None else list(among)
    built = [m for m in (_build(name, epsilon, categories) for name in names) if m is not None]
    if not built:
        raise ParameterError(f"no frequency oracle declares its variance at epsilon={epsilon}, d={len(categories)}")
    return sorted(built, key=lambda m: (m.worst_case_variance(), m.report_bits(), m.name))


def choose_mechanism(*, epsilon, categories, among: Iterable[str] | None = None) -> Mechanism:
    """The frequency oracle with the smallest worst-case summed variance (module docstring)."""
    return candidates(check_epsilon(epsilon), check_categories(categories), among)[0]


def _standard_error(mechanism: Mechanism, n: int) -> float:
    return math.sqrt(mechanism.worst_case_category_variance() / n)


def _epsilon_for(name: str, categories: list, n: int, stderr: float) -> float:
    """The smallest epsilon (to 0.1%) whose worst-case standard error at n is <= stderr."""
    def error(epsilon):
        if name == "auto":
            return min(_standard_error(m, n) for m in candidates(epsilon, categories))
        built = _build(name, epsilon, categories)
        return math.inf if built is None else _standard_error(built, n)

    return _smallest_epsilon(error, stderr, f"with n = {n} ({name}, d = {len(categories)})")


def _smallest_epsilon(error, stderr: float, what: str) -> float:
    """The smallest epsilon in the planning range (to 0.1%) with ``error(epsilon) <= stderr``, for an
    error that falls as epsilon grows."""
    low, high = _EPSILON_RANGE
    if error(high) > stderr:
        raise ParameterError(f"no epsilon up to {high:g} reaches stderr {stderr:g} {what}: "
                             "the sampling error alone is larger")
    if error(low) <= stderr:
        return low
    while high / low > 1.001:
        middle = math.sqrt(low * high)
        low, high = (low, middle) if error(middle) <= stderr else (middle, high)
    return high


MAX_PLAN_CATEGORIES = 10 ** 7


def plan(mechanism: str = "all", *, d: int | None = None, categories=None, epsilon=None, n=None,
         stderr=None, low=None, high=None):
    """Accuracy of frequency oracles: give two of ``epsilon``, ``n``, ``stderr``; the third is solved.

    ``mechanism``: a registered oracle's name, ``"auto"`` (the chooser's pick) or ``"all"`` (one
    row per declaring oracle, best first).  ``stderr`` is the worst-case standard error of one
    category's frequency.  Returns a :class:`pandas.DataFrame` with columns ``mechanism``, ``d``,
    ``epsilon``, ``n``, ``stderr``, ``rmse`` (``sqrt`` of the worst-case summed variance over n:
    the l2 error), ``report_bits``, ``parameters`` and ``auto`` (the chooser's pick).

    With ``low`` and ``high`` instead of ``d``: :func:`plan_mean`, for the mean of numbers.
    """
    import pandas as pd

    if low is not None or high is not None:
        return plan_mean(mechanism, low=low, high=high, epsilon=epsilon, n=n, stderr=stderr)
    if categories is None:
        if d is None:
            raise ParameterError("plan needs d (the number of categories) or categories")
        d = check_positive_int("d", d, 2)
        if d > MAX_PLAN_CATEGORIES:
            raise ParameterError(f"plan supports d up to {MAX_PLAN_CATEGORIES:,} categories (each oracle is built "
                                 f"with its categories), got {d:,}")
        categories = list(range(d))
    categories = check_categories(categories)
    given = [name for name, value in (("epsilon", epsilon), ("n", n), ("stderr", stderr)) if value is not None]
    if len(given) != 2:
        raise ParameterError("plan needs exactly two of epsilon, n and stderr (the third is computed); "
                             f"got {', '.join(given) or 'none'}")
    names = frequency_oracle_names() if mechanism == "all" else [mechanism]
    known = set(frequency_oracle_names())
    for name in names:
        if name != "auto" and name not in known:
            raise ParameterError(f"{name!r} is not a frequency oracle that declares its variance; "
                                 f"choose from auto, all, {', '.join(sorted(known))}")
    n = None if n is None else check_positive_int("n", n)
    stderr = None if stderr is None else check_positive_real("stderr", stderr)
    rows = []
    for name in names:
        eps = check_epsilon(epsilon) if epsilon is not None else _epsilon_for(name, categories, n, stderr)
        if name == "auto":
            built = choose_mechanism(epsilon=eps, categories=categories)
        else:
            built = _build(name, eps, categories)
        if built is None:
            continue
        size = n if n is not None else math.ceil(built.worst_case_category_variance() / stderr ** 2)
        rows.append({"mechanism": built.name, "d": len(categories), "epsilon": eps, "n": size,
                     "stderr": _standard_error(built, size),
                     "rmse": math.sqrt(built.worst_case_variance() / size),
                     "report_bits": built.report_bits(),
                     "parameters": {k: v for k, v in built.params.items() if k not in ("epsilon", "categories")}})
    if not rows:
        raise ParameterError(f"no frequency oracle accepts epsilon={epsilon}")
    table = pd.DataFrame(rows)
    picks = {eps: choose_mechanism(epsilon=eps, categories=categories).name for eps in set(table["epsilon"])}
    table["auto"] = [picks[eps] == name for eps, name in zip(table["epsilon"], table["mechanism"], strict=True)]
    solved = "epsilon" if epsilon is None else "n" if n is None else "stderr"
    return table.sort_values([solved, "rmse"], kind="stable").reset_index(drop=True)


def numeric_mechanism_names() -> list[str]:
    """Registered mechanisms of the numeric family that state ``worst_case_variance`` of one number
    (units of ``t = 2 (x - low) / (high - low) - 1``): the trees and several numbers do not."""
    registry = get_registry()
    return [info.name for info in registry.infos() if info.kind == "mechanism" and info.family == "numeric"
            and hasattr(registry.get("mechanism", info.name), "worst_case_variance")]


def plan_mean(mechanism: str = "all", *, low, high, epsilon=None, n=None, stderr=None):
    """Accuracy of a private mean of numbers in ``[low, high]``: give two of ``epsilon``, ``n``,
    ``stderr`` (the worst-case standard error of the mean given the data, the noise the mechanism
    adds); the third is solved.  ``stderr_with_spread`` adds the most the data's own spread can add
    (``(high - low) / (2 sqrt(n))``), which is what the ``mean`` estimator's stderr describes for data
    drawn from a population.  ``mechanism``: a numeric mechanism or ``"all"`` (docs/numeric.md).
    """
    import pandas as pd

    given = [name for name, value in (("epsilon", epsilon), ("n", n), ("stderr", stderr)) if value is not None]
    if len(given) != 2:
        raise ParameterError("plan needs exactly two of epsilon, n and stderr (the third is computed); "
                             f"got {', '.join(given) or 'none'}")
    if low is None or high is None:
        raise ParameterError("a plan for a mean needs both low and high")
    known = numeric_mechanism_names()
    names = known if mechanism == "all" else [mechanism]
    for name in names:
        if name not in known:
            raise ParameterError(f"{name!r} is not a numeric mechanism; choose from all, {', '.join(sorted(known))}")
    n = None if n is None else check_positive_int("n", n)
    stderr = None if stderr is None else check_positive_real("stderr", stderr)

    def build(name, eps):
        return registered_mechanism(name, epsilon=eps, low=low, high=high)

    def noise(built, size):
        return math.sqrt(built.worst_case_variance() / size) * built.half_width

    rows = []
    for name in names:
        eps = (check_epsilon(epsilon) if epsilon is not None else
               _smallest_epsilon(lambda e, name=name: noise(build(name, e), n), stderr, f"with n = {n} ({name})"))
        built = build(name, eps)
        size = n if n is not None else math.ceil(built.worst_case_variance() * built.half_width ** 2 / stderr ** 2)
        rows.append({"mechanism": name, "low": built.low, "high": built.high, "epsilon": eps, "n": size,
                     "stderr": noise(built, size),
                     "stderr_with_spread": math.sqrt((built.worst_case_variance() + 1) / size) * built.half_width})
    solved = "epsilon" if epsilon is None else "n" if n is None else "stderr"
    return pd.DataFrame(rows).sort_values([solved, "stderr"], kind="stable").reset_index(drop=True)
