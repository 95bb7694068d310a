"""The permanent response of a longitudinal mechanism, as a mechanism of its own.

``mechanism.permanent()`` is what every report of one value is post-processing of: the
conformance kit proves its channel at ``epsilon_inf`` and checks that its sampler (fresh words,
the law of keyed words without the secret) draws that channel, as it does for one report at
``epsilon``.  Its reports have the form of the mechanism's own reports.
"""

from __future__ import annotations

from ldpest import Longitudinal, Mechanism, ParameterError, mechanism_from_spec
from ldpest.privacy.memo import fresh_words
from ldpest.util.validation import check_epsilon


class PermanentResponse(Mechanism):
    """The memoised response of the longitudinal mechanism ``of`` (the mechanism, or its spec)."""

    name = "permanent-response"
    family = "multinomial"
    default_estimator = None
    parameter_help = {"of": "the spec of a longitudinal mechanism (l-grr, l-osue, rappor, dbitflip)",
                      "epsilon": "optional: must equal that mechanism's epsilon_inf"}
    example_params = {"of": {"name": "l-grr", "epsilon": 1.0, "epsilon_inf": 4.0, "categories": ["a", "b"]}}

    def __init__(self, *, of, epsilon=None):
        parent = of if isinstance(of, Longitudinal) else mechanism_from_spec(of) if isinstance(of, dict) else None
        if not isinstance(parent, Longitudinal):
            raise ParameterError(f"{self.name}: 'of' must be the spec of a longitudinal mechanism, got {of!r}")
        if epsilon is not None and check_epsilon(epsilon) != parent.epsilon_inf:
            raise ParameterError(f"{self.name}: epsilon is {parent.name}'s epsilon_inf = {parent.epsilon_inf!r}, "
                                 f"not {epsilon!r}")
        self._set_params(of=parent.spec)
        self._parent = parent
        for attribute in ("report_dims", "data_kind", "report_kind"):  # reports of the parent's form
            object.__setattr__(self, attribute, getattr(parent, attribute))
        if hasattr(parent, "channel_mixture"):  # raw records between the channel's inputs, as the parent's
            object.__setattr__(self, "channel_mixture", parent.channel_mixture)

    @property
    def epsilon(self) -> float:
        return self._parent.epsilon_inf

    def report_columns(self):
        return self._parent.report_columns()

    def encode_data(self, data):
        return self._parent.encode_data(data)

    def _privatize(self, encoded, rng):
        return self._parent.draw_permanent(encoded, fresh_words(rng))

    def encode_reports(self, values):
        return self._parent.encode_reports(values)

    def check_encoded_reports(self, values):
        return self._parent.check_encoded_reports(values)

    def channel(self):
        return self._parent.permanent_channel()
