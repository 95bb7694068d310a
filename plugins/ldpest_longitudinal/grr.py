"""L-GRR: longitudinal generalised randomized response (Arcolezi, Couchot, Al Bouna, Xiao 2022,
"Improving the utility of locally differentially private protocols for longitudinal and
multidimensional frequency estimates"; docs/accounting.md).

The permanent response is randomized response at ``epsilon_inf`` over the ``d`` categories
(keep ``p1 = K1 / 2^64``, each other ``q1 = c1 / 2^64``), memoised per user and value; each round
sends randomized response of it (``p2``, ``q2``) chosen so that one report is ``epsilon``-LDP.
One report is again randomized response, with

    P_s = p1 p2 + (1 - p1) q2,   Q_s = p1 q2 + q1 p2 + (d - 2) q1 q2,

so ``counts_j ~ Binomial(n, Q_s + (P_s - Q_s) theta_j)`` and the ``frequency`` estimator debiases
with these implemented values.  The instantaneous cell is the smallest with ``P_s / Q_s <=
e^epsilon`` proven, which needs ``epsilon < epsilon_inf``.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ldpest import Channel, FrequencyOracle, Longitudinal, Mechanism, ParameterError
from ldpest.privacy.exact import WORD, random_words, ratio_within, require_gap
from ldpest.stats.binomial import AffineBinomialOracle
from ldpest.stats.sufficient import count_indices
from ldpest.util.validation import check_categories, check_epsilon

from .exact import grr_cell, grr_permanent_cell, grr_sample
from .permanent import PermanentResponse

LONGITUDINAL_HELP = {"epsilon": "epsilon_1: the guarantee of one report",
                     "epsilon_inf": "the guarantee of every report of one value together (the permanent response)",
                     "categories": "the possible answers (labels), in order"}
LONGITUDINAL_EXAMPLE = {"epsilon_inf": 4.0, "categories": ["a", "b", "c"]}


def check_epsilons(epsilon, epsilon_inf, name: str) -> tuple[float, float]:
    epsilon, epsilon_inf = check_epsilon(epsilon), check_epsilon(epsilon_inf)
    if not epsilon < epsilon_inf:
        raise ParameterError(f"{name}: epsilon (one report, {epsilon:g}) must be below epsilon_inf (every report "
                             f"of one value, {epsilon_inf:g}): one report is post-processing of the permanent one")
    return epsilon, epsilon_inf


class CategoricalLongitudinal(Longitudinal, AffineBinomialOracle, FrequencyOracle, Mechanism):
    """What L-GRR and L-OSUE share: ``epsilon``, ``epsilon_inf`` and ``categories``, labels as data."""

    family = "multinomial"
    default_estimator = "frequency"
    parameter_help = LONGITUDINAL_HELP
    example_params = LONGITUDINAL_EXAMPLE

    def _set_epsilons(self, epsilon, epsilon_inf, categories) -> tuple[float, float]:
        epsilon, epsilon_inf = check_epsilons(epsilon, epsilon_inf, self.name)
        self._set_params(epsilon=epsilon, epsilon_inf=epsilon_inf, categories=check_categories(categories))
        return epsilon, epsilon_inf

    @property
    def epsilon_inf(self) -> float:
        return float(self._params["epsilon_inf"])

    def encode_data(self, data):
        return self.encode_labels(data, "data")

    def permanent(self):
        return PermanentResponse(of=self)


class LongitudinalGRR(CategoricalLongitudinal):
    """L-GRR: randomized response of a memoised randomized response; ``epsilon`` per report, ``epsilon_inf``
    for all reports of one value (module docstring)."""

    name = "l-grr"
    report_kind = "label"

    def __init__(self, *, epsilon, epsilon_inf, categories):
        epsilon, epsilon_inf = self._set_epsilons(epsilon, epsilon_inf, categories)
        d = len(self.categories)
        self._cell1 = grr_permanent_cell(epsilon_inf, d - 1)
        keep1 = WORD - (d - 1) * self._cell1

        def ok(cell2: int) -> bool:
            keep2 = WORD - (d - 1) * cell2
            same = keep1 * keep2 + (WORD - keep1) * cell2
            other = keep1 * cell2 + self._cell1 * keep2 + (d - 2) * self._cell1 * cell2
            return ratio_within(same, other, epsilon)

        self._cell2 = grr_cell(ok, d - 1, epsilon, self.name)
        self._same, self._other = self._composite()
        require_gap(float(self._same - self._other), epsilon, self.name)

    def _composite(self) -> tuple[Fraction, Fraction]:
        d = len(self.categories)
        p1, q1 = Fraction(WORD - (d - 1) * self._cell1, WORD), Fraction(self._cell1, WORD)
        p2, q2 = Fraction(WORD - (d - 1) * self._cell2, WORD), Fraction(self._cell2, WORD)
        return p1 * p2 + (1 - p1) * q2, p1 * q2 + q1 * p2 + (d - 2) * q1 * q2

    def _permanent(self, codes, words):
        d = len(self.categories)
        drawn = words("response", self.memo_keys(codes), 1)[:, 0]
        return grr_sample(codes.astype(np.int64), drawn, d, self._cell1).astype(self.index_dtype)

    def _instantaneous(self, permanent, rng):
        d = len(self.categories)
        drawn = random_words(rng, len(permanent))
        return grr_sample(permanent.astype(np.int64), drawn, d, self._cell2).astype(self.index_dtype)

    def encode_reports(self, values):
        return self.encode_labels(values, "reports").astype(self.index_dtype)

    def _grr_channel(self, keep: Fraction, other: Fraction) -> Channel:
        d = len(self.categories)
        matrix = np.full((d, d), other, dtype=object)
        np.fill_diagonal(matrix, keep)
        return Channel(self.categories, np.arange(d), matrix)

    def channel(self) -> Channel:
        """One report's implemented channel: randomized response with ``(P_s, Q_s)``, exactly."""
        return self._grr_channel(self._same, self._other)

    def permanent_channel(self) -> Channel:
        d = len(self.categories)
        return self._grr_channel(Fraction(WORD - (d - 1) * self._cell1, WORD), Fraction(self._cell1, WORD))

    def frequency_statistics(self, reports):
        return {"counts": count_indices(reports, len(self.categories))}

    def binomial_model(self):
        """counts_j ~ Binomial(n, Q_s + (P_s - Q_s) theta_j), implemented P_s and Q_s."""
        return float(self._other), float(self._same - self._other)

    def binomial_top_complement(self):
        return float(1 - self._same)

    def report_bits(self):
        return float(np.log2(len(self.categories)))
