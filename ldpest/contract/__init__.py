"""The contract floor: the base classes plugins subclass (``base``), exact channels (``channel``),
families (``family``), the hooks (``hookspecs``),
the registry that finds plugins (``registry``), reports (``reports``) and the labelled results
schema (``results``).  It imports ``ldpest.util``, ``ldpest.privacy`` and ``ldpest.stats`` only
(README, "Layout"); plugins reach it through the names of ``ldpest``.

The names of the module ``ldpest.contract`` before the floors (issue 21) still import from here.
"""

from ..util.lazy import lazy_names

__getattr__, __dir__ = lazy_names(__name__, {
    "Basis": ".base", "Estimator": ".base", "FrequencyOracle": ".base", "Mechanism": ".base",
    "Channel": ".channel", "Family": ".family",
    "canonical_json": "..util.spec", "smallest_index_dtype": "..util.labels",
})
