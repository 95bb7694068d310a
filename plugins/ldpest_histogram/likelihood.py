"""The ``histogram-likelihood`` estimator: the maximum-likelihood cell masses of ``oracle-histogram``
reports (docs/histograms.md, "Cells sent by a frequency oracle").

The oracle's reports of the cell numbers (the outside category included) go to the ``frequency-likelihood``
estimator (docs/frequency-oracles.md, "The maximum-likelihood estimate from the reports"), pass by pass; its
probabilities become densities, ``mass / h^d``, as ``histogram-mean``'s do.
"""

from __future__ import annotations

import dataclasses
import json

import ldpest
from ldpest import Estimator, IncompatibleError, ParameterError

from . import cells

_INNER = "frequency-likelihood"


class HistogramLikelihood(Estimator):
    """The maximum-likelihood densities of the cells of ``oracle-histogram`` reports: ``frequency-likelihood``
    on the oracle's reports, every pass through its estimator, then in density units (module docstring).

    ``density`` is the MLE over the cells and the outside category, divided by the cell volume (``mass`` is
    the MLE itself); ``unprojected``, ``stderr`` and the intervals are those of the oracle's unbiased
    estimate, as in ``histogram-mean`` results.  The attributes ``mle_passes``, ``mle_likelihood_gap`` and
    ``mle_converged`` say how the MLE was found, and ``outside_mass`` is the MLE of the outside category."""

    parameter_help = {
        "tolerance": "stop when the log-likelihood is provably within this of its maximum (default 0.001)",
        "max_passes": "at most this many passes over the reports, the first included (default 20)",
        "at": "the iterate whose statistics this pass gathers (set by the iteration)",
        "pass_number": "the pass these statistics belong to (set by the iteration)",
    }
    name = "histogram-likelihood"
    accepts = ("oracle-histogram",)
    multipass = True
    finalize_params = ("tolerance", "max_passes")

    def __init__(self, **params):
        inner = ldpest.estimator(_INNER, **params)
        self._set_params(**inner.params)
        object.__setattr__(self, "_inner", inner)

    def check_accepts(self, mechanism) -> None:
        super().check_accepts(mechanism)
        try:
            self._inner.check_accepts(mechanism.oracle)
        except (IncompatibleError, ParameterError) as exc:
            message = str(exc).replace(f"estimator {_INNER!r}", f"estimator {self.name!r} (oracle "
                                       f"{mechanism.oracle.name!r})").replace("use 'frequency'",
                                                                              "use 'histogram-mean'")
            raise type(exc)(message) from None

    def _aggregate(self, mechanism, values):
        return self._inner.aggregate_values(mechanism.oracle, values).arrays

    def next_pass(self, stats):
        oracle = ldpest.mechanism_from_spec(json.loads(stats.mechanism_spec)).oracle
        following = self._inner.next_pass(dataclasses.replace(
            stats, estimator_spec=self._inner.statistics_spec_json, mechanism_spec=oracle.spec_json))
        if following is None:
            return None
        wrapped = type(self)(**following.params)
        object.__setattr__(wrapped, "_inner", following)  # with its driver-side memory of the iteration
        return wrapped

    def _finalize(self, mechanism, arrays, n):
        return cells.density_parts(mechanism, self._inner.parts(mechanism.oracle, arrays, n))

    def interval(self, result, level):
        """The oracle's own intervals for the unprojected densities (:func:`.cells.oracle_interval`), or the
        core's."""
        if result.variables["stderr"].attrs.get("estimate") != "unprojected":
            return None
        mechanism = ldpest.mechanism_from_spec(json.loads(result.attrs["mechanism_spec"]))
        return cells.oracle_interval(mechanism, result, level)
