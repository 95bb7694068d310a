"""The protocol of mechanisms for repeated collection (docs/accounting.md, "Repeated collection").

Such a mechanism is the composition of two randomisers: a *permanent* response, drawn once per
user and value and memoised, and an *instantaneous* response drawn afresh in every round from the
permanent one.  Two guarantees follow:

* ``epsilon`` (epsilon_1): one report, the composition with the permanent response drawn fresh;
* ``epsilon_inf``: every report ever made of one value together, since they are post-processing
  of the one permanent response (its own epsilon, :meth:`Longitudinal.permanent`).

The conformance kit proves both: ``mechanism`` at ``epsilon`` and ``mechanism.permanent()`` at
``epsilon_inf`` (``check_mechanism`` runs on each).  ``privatize(data)`` treats every record as a
new user (fresh permanent responses); :meth:`Longitudinal.privatize_memoised` takes user ids and a
:class:`ldpest.ClientState`, whose secrets make each user's permanent response the same in every
run (:mod:`ldpest.privacy.memo`).
"""

from __future__ import annotations

import abc

import numpy as np

from ..privacy.memo import ClientState, fresh_words
from ..privacy.rng import resolve_rng
from ..util.errors import DataError, ParameterError
from ..util.spec import canonical_json


class Longitudinal(abc.ABC):
    """Mixin for a :class:`ldpest.Mechanism` reporting over time (module docstring).

    Implement :attr:`epsilon_inf`, :meth:`permanent`, :meth:`_permanent` and
    :meth:`_instantaneous`; ``_privatize`` composes them.
    """

    @property
    @abc.abstractmethod
    def epsilon_inf(self) -> float:
        """The guarantee of all reports of one value together (the permanent response's epsilon)."""

    @abc.abstractmethod
    def permanent(self):
        """The permanent response as a mechanism of its own, with ``epsilon = epsilon_inf``: its
        sampler is :meth:`_permanent` on fresh words, its channel the memoised response's law."""

    @abc.abstractmethod
    def _permanent(self, encoded: np.ndarray, words) -> np.ndarray:
        """The permanent responses of encoded records, vectorised; randomness only from
        ``words(purpose, keys, count)``, an ``(n, count)`` array of uint64 words for one draw named
        ``purpose``, each record's words keyed by ``keys[i]`` (its value, or what the response
        depends on): fresh words for new users, keyed by the user's secret when memoised."""

    @abc.abstractmethod
    def _instantaneous(self, permanent: np.ndarray, rng) -> np.ndarray:
        """This round's reports from the permanent responses (fresh randomness from ``rng``)."""

    def memo_keys(self, encoded: np.ndarray) -> np.ndarray:
        """What a record's permanent response is keyed by: its value (one key per record)."""
        return np.asarray(encoded).astype(str)

    instantaneous_params: tuple[str, ...] = ("epsilon",)  # parameters that leave the permanent response as it is

    @property
    def memo_scope(self) -> str:
        """Permanent responses are keyed by the mechanism's name and its parameters other than
        :attr:`instantaneous_params`: changing the instantaneous part keeps them; changing the
        permanent part draws new ones (and spends epsilon_inf again)."""
        kept = {key: value for key, value in self.params.items() if key not in self.instantaneous_params}
        return canonical_json({"name": self.name, **kept})

    def draw_permanent(self, encoded: np.ndarray, words) -> np.ndarray:
        """:meth:`_permanent` (public: the permanent mechanism and the conformance kit call it)."""
        return self._permanent(encoded, words)

    def memoised_permanent(self, encoded: np.ndarray, users, state: ClientState) -> np.ndarray:
        """The permanent responses of encoded records, record ``i`` keyed by ``users[i]``'s secret."""
        return self._permanent(encoded, state.keyed(users, self.memo_scope))

    def _privatize(self, encoded, rng):
        return self._instantaneous(self._permanent(encoded, fresh_words(rng)), rng)

    def privatize_memoised(self, data, users, state: ClientState, rng=None):
        """One round of reports: record ``i`` by user ``users[i]``, whose permanent response for its
        value is the same in every round and run (keyed by the user's secret in ``state``, which
        creates secrets for new users: save the state afterwards)."""
        if not isinstance(state, ClientState):
            raise ParameterError(f"state must be an ldpest.ClientState, got {type(state).__name__}")
        return self.privatize_memoised_encoded(self.encode_data(data), users, state, rng)

    def privatize_memoised_encoded(self, encoded: np.ndarray, users, state: ClientState, rng=None):
        """:meth:`privatize_memoised` of records that :meth:`encode_data` has already validated."""
        from .reports import Reports

        users = np.asarray(users, dtype=object)
        if users.ndim != 1 or len(users) != len(encoded):
            raise DataError(f"users must name the user of each of the {len(encoded)} records, got {users.shape}")
        if len(encoded) == 0:
            raise DataError("data is empty: at least one record is needed")
        generator, kind = resolve_rng(rng)
        permanent = self.memoised_permanent(encoded, users, state)
        return Reports.trusted(self._instantaneous(permanent, generator), self, rng=kind)
