"""Module paths of the flat layout before the floors (issue 21), kept working: ``import
ldpest.exact`` and ``from ldpest.exact import WORD`` give the module ``ldpest.privacy.exact``
itself (one module under two names, so state and ``isinstance`` checks are shared).  Plugin
authors' code written against the old paths keeps working; docs/plugin-author-guide.md shows the
new ones.  ``ldpest.stats``, ``ldpest.contract`` and ``ldpest.io`` are packages now and keep their
old names themselves."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

MOVED = {
    "ldpest.errors": "ldpest.util.errors", "ldpest.validation": "ldpest.util.validation",
    "ldpest.labels": "ldpest.util.labels", "ldpest.atomic": "ldpest.util.atomic",
    "ldpest.exact": "ldpest.privacy.exact", "ldpest.alias": "ldpest.privacy.alias",
    "ldpest.discrete_laplace": "ldpest.privacy.discrete_laplace", "ldpest.noise": "ldpest.privacy.noise",
    "ldpest.rng": "ldpest.privacy.rng",
    "ldpest.exactsum": "ldpest.stats.exactsum", "ldpest.projection": "ldpest.stats.projection",
    "ldpest.partition": "ldpest.stats.partition",
    "ldpest.hookspecs": "ldpest.contract.hookspecs", "ldpest.registry": "ldpest.contract.registry",
    "ldpest.reports": "ldpest.contract.reports", "ldpest.results": "ldpest.contract.results",
    "ldpest.sources": "ldpest.io.sources",
    "ldpest.api": "ldpest.engine.api", "ldpest.mapreduce": "ldpest.engine.mapreduce",
    "ldpest.pipeline": "ldpest.engine.pipeline", "ldpest.planning": "ldpest.engine.planning",
    "ldpest.simulate": "ldpest.engine.simulate",
}


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old path in :data:`MOVED` and loads it as the module at the new path."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        module = importlib.import_module(MOVED[spec.name])
        spec.loader_state = module.__spec__  # the import system now sets module.__spec__ to the old path's
        return module

    def exec_module(self, module):
        # already executed at its new path; give it back its own spec, so that its relative imports
        # and importlib.reload keep resolving from the new home
        module.__spec__ = module.__spec__.loader_state


def install() -> None:
    if not any(isinstance(finder, _Alias) for finder in sys.meta_path):
        sys.meta_path.append(_Alias())
