"""The plugin contract: the hooks a plugin implements.

A plugin is a module (or any object) reachable through the ``"ldpest"``
entry-point group whose functions are marked with :data:`hookimpl`.  Each hook
receives a ``register`` callable and calls it once per class it contributes::

    import ldpest

    @ldpest.hookimpl
    def register_mechanisms(register):
        register(MyMechanism)

The classes must subclass :class:`ldpest.Mechanism`, :class:`ldpest.Estimator`,
:class:`ldpest.Basis` or :class:`ldpest.Family` and carry a unique kebab-case ``name``.  The built-in
families are registered through this same door.
"""

import pluggy

PROJECT = "ldpest"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_mechanisms(register):
    """Register client-side mechanisms: call ``register(cls)`` for each
    :class:`ldpest.Mechanism` subclass."""


@hookspec
def register_estimators(register):
    """Register server-side estimators: call ``register(cls)`` for each
    :class:`ldpest.Estimator` subclass."""


@hookspec
def register_bases(register):
    """Register orthogonal bases on [0, 1] for series estimators: call
    ``register(cls)`` for each :class:`ldpest.Basis` subclass."""


@hookspec
def register_families(register):
    """Register families (how a family's estimates are simulated and scored): call ``register(cls)``
    for each :class:`ldpest.Family` subclass, whose ``name`` is the ``family`` of its mechanisms."""
