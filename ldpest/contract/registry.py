"""Plugin discovery and lookup.

Plugins are found through the ``"ldpest"`` entry-point group (the built-in
families too), lazily on first use.  A plugin that fails to import, or whose
hook raises, is reported with :class:`~ldpest.PluginLoadWarning` and in
:func:`plugin_errors`, and skipped.  Two plugins claiming one name is a
:class:`~ldpest.DuplicatePluginError` naming both: a name stands for a
privacy guarantee, so it is never silently shadowed.

``LDPEST_PLUGINS`` (comma-separated entry-point names), when set, is an
allowlist: only those entry points are loaded.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import json
import os
import threading
import warnings
from dataclasses import dataclass
from importlib.metadata import entry_points

import pluggy

from ..util.errors import (
    DuplicatePluginError,
    ParameterError,
    PluginError,
    PluginLoadWarning,
    UnknownPluginError,
)
from ..util.interrupt import was_interrupted
from ..util.spec import canonical_json
from . import hookspecs

ENTRY_POINT_GROUP = "ldpest"
# kind -> (hook, base class): a class registered as a kind must subclass its base, whose
# ``plugin_kind`` names the kind (the registry checks it without importing the base classes)
KINDS = {"mechanism": ("register_mechanisms", "Mechanism"), "estimator": ("register_estimators", "Estimator"),
         "basis": ("register_bases", "Basis"), "family": ("register_families", "Family")}


@dataclass(frozen=True)
class PluginInfo:
    """One registered name, as listed by :func:`ldpest.plugins`."""

    name: str
    kind: str
    family: str
    origin: str  # the distribution (or "runtime") that provided it
    version: str
    plugin: str  # the plugin (entry-point) name


@dataclass(frozen=True)
class PluginFailure:
    plugin: str
    origin: str
    error: str


class Registry:
    """The plugin manager plus the classes the plugins registered."""

    def __init__(self, load_entry_points: bool = True):
        self._manager = pluggy.PluginManager(hookspecs.PROJECT)
        self._manager.add_hookspecs(hookspecs)
        self._classes: dict[str, dict[str, tuple[type, PluginInfo]]] = {kind: {} for kind in KINDS}
        self.failures: list[PluginFailure] = []
        if load_entry_points:
            self._load_entry_points()

    # -- loading -------------------------------------------------------------
    def _load_entry_points(self) -> None:
        allow = os.environ.get("LDPEST_PLUGINS")
        allowed = {name.strip() for name in allow.split(",")} if allow else None
        for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            if allowed is not None and ep.name not in allowed:
                continue
            dist = getattr(ep, "dist", None)
            origin = dist.name if dist is not None else "unknown"
            version = dist.version if dist is not None else ""
            try:
                plugin = ep.load()
            except Exception as exc:  # a broken plugin must not break the others
                if was_interrupted(exc):  # Ctrl-C inside a compiled import surfaces as its ImportError
                    raise KeyboardInterrupt from exc
                self._fail(ep.name, origin, f"import failed: {type(exc).__name__}: {exc}")
                continue
            self.register_plugin(plugin, name=ep.name, origin=origin, version=version)

    def _fail(self, plugin: str, origin: str, error: str) -> None:
        self.failures.append(PluginFailure(plugin, origin, error))
        warnings.warn(f"ldpest plugin {plugin!r} ({origin}) skipped: {error}", PluginLoadWarning, stacklevel=3)

    def register_plugin(self, plugin, name: str | None = None, origin: str = "runtime", version: str = "") -> None:
        """Register a plugin object (module or instance with hookimpls).

        Its classes are added all-or-nothing: if a hook raises, the plugin is
        reported and skipped; a duplicate name raises DuplicatePluginError.
        """
        name = name or getattr(plugin, "__name__", None) or type(plugin).__name__
        try:
            self._manager.register(plugin, name=name)
        except ValueError as exc:
            raise PluginError(f"plugin {name!r} is already registered ({exc})") from None
        staged: list[tuple[str, type, PluginInfo]] = []
        try:
            for kind, (hook_name, _) in KINDS.items():
                for impl in getattr(self._manager.hook, hook_name).get_hookimpls():
                    if impl.plugin_name != name:
                        continue
                    impl.function(register=self._collector(kind, name, origin, version, staged))
        except PluginError:
            self._manager.unregister(name=name)
            raise
        except Exception as exc:
            self._manager.unregister(name=name)
            self._fail(name, origin, f"registration failed: {type(exc).__name__}: {exc}")
            return
        seen: dict[tuple[str, str], PluginInfo] = {}
        for kind, _, info in staged:
            other = self._classes[kind].get(info.name, (None, None))[1] or seen.get((kind, info.name))
            if other is not None:
                self._manager.unregister(name=name)
                raise DuplicatePluginError(
                    f"{kind} name {info.name!r} is claimed by two plugins: "
                    f"{other.plugin!r} ({other.origin}) and {info.plugin!r} ({info.origin})"
                )
            seen[(kind, info.name)] = info
        for kind, cls, info in staged:
            self._classes[kind][info.name] = (cls, info)

    def _collector(self, kind, plugin, origin, version, staged):
        base = KINDS[kind][1]

        def register(cls):
            if not (isinstance(cls, type) and getattr(cls, "plugin_kind", None) == kind):
                raise PluginError(f"plugin {plugin!r}: {cls!r} registered as a {kind} is not a {base} subclass "
                                  f"(ldpest.{base})")
            if not isinstance(getattr(cls, "name", None), str) or not cls.name:
                raise PluginError(f"plugin {plugin!r}: {cls.__name__} has no name")
            family = cls.name if kind == "family" else getattr(cls, "family", "")
            info = PluginInfo(cls.name, kind, family, origin, version, plugin)
            staged.append((kind, cls, info))
            return cls

        return register

    # -- lookup --------------------------------------------------------------
    def get(self, kind: str, name: str) -> type:
        try:
            return self._classes[kind][name][0]
        except KeyError:
            known = ", ".join(sorted(self._classes[kind])) or "(none)"
            hint = ""
            if self.failures:
                hint = "; plugins that failed to load: " + ", ".join(f.plugin for f in self.failures)
            raise UnknownPluginError(f"unknown {kind} {name!r}; known {kind}s: {known}{hint}") from None

    def names(self, kind: str) -> list[str]:
        """The registered names of one kind."""
        return sorted(self._classes[kind])

    def infos(self) -> list[PluginInfo]:
        rows = [info for kind in KINDS for _, info in self._classes[kind].values()]
        return sorted(rows, key=lambda i: (list(KINDS).index(i.kind), i.family, i.name))


_registry: Registry | None = None
_lock = threading.Lock()


def get_registry() -> Registry:
    """The process-wide registry, built on first use (not at import)."""
    global _registry
    with _lock:
        if _registry is None:
            _registry = Registry()
        return _registry


def reset_registry() -> None:
    """Forget the registry so that the next use rediscovers the entry points."""
    global _registry
    with _lock:
        _registry = None
        _mechanism_cache.clear()


_mechanism_cache: dict = {}  # canonical spec JSON -> mechanism
_CACHE_SIZE = 64


def register_plugin(plugin, name: str | None = None) -> None:
    """Register a plugin object at run time (notebooks, tests)."""
    get_registry().register_plugin(plugin, name=name)


def plugins() -> list[PluginInfo]:
    """Every registered mechanism, estimator and basis: name, kind, family, origin, version."""
    return get_registry().infos()


def plugin_errors() -> list[PluginFailure]:
    """Plugins that failed to load, with the error."""
    return list(get_registry().failures)


@functools.cache
def _signature(cls: type) -> inspect.Signature | None:
    """The first constructor along the MRO that names its parameters (``**params`` forwards)."""
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        signature = inspect.signature(init)
        if not any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values()):
            return signature
    return None


def parameters_of(cls: type) -> tuple[list[str], list[str]]:
    """``(required, optional)`` keyword parameters of a plugin class's constructor."""
    required, optional = [], []
    signature = _signature(cls)
    for parameter in signature.parameters.values() if signature is not None else ():
        if parameter.kind in (parameter.KEYWORD_ONLY, parameter.POSITIONAL_OR_KEYWORD) and parameter.name != "self":
            (required if parameter.default is parameter.empty else optional).append(parameter.name)
    return required, optional


def parameter_table(cls: type) -> list[dict]:
    """Each keyword parameter of a plugin class: ``name``, ``required``, ``default`` (JSON text of
    the default, or None) and ``meaning`` (from the class's ``parameter_help``, or "")."""
    signature = _signature(cls)
    meanings = getattr(cls, "parameter_help", {}) or {}
    rows = []
    for parameter in signature.parameters.values() if signature is not None else ():
        if parameter.kind not in (parameter.KEYWORD_ONLY, parameter.POSITIONAL_OR_KEYWORD) or parameter.name == "self":
            continue
        required = parameter.default is parameter.empty
        rows.append({"name": parameter.name, "required": required,
                     "default": None if required else json.dumps(parameter.default),
                     "meaning": meanings.get(parameter.name, "")})
    return rows


def _build(kind: str, name: str, params: dict):
    """Construct a plugin, naming unknown parameters (with the closest known one) and missing ones."""
    cls = get_registry().get(kind, name)
    if _signature(cls) is not None:
        required, optional = parameters_of(cls)
        known = required + optional
        listing = ", ".join(known) if known else "none"
        for given in params:
            if given not in known:
                close = difflib.get_close_matches(given, known, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise ParameterError(f"{kind} {name!r} has no parameter {given!r}; its parameters are: {listing}{hint}")
        missing = [r for r in required if r not in params]
        if missing:
            raise ParameterError(f"{kind} {name!r} needs {', '.join(missing)} (its parameters are: {listing})")
    return cls(**params)


def mechanism(name: str, **params):
    """Build a registered mechanism by name (``ldpest.mechanism`` also takes ``"auto"``)."""
    return _build("mechanism", name, params)


def estimator(name: str, **params):
    """Build a registered estimator: ``ldpest.estimator("frequency", projection="simplex")``."""
    return _build("estimator", name, params)


def basis(name: str, **params):
    """Build a registered basis (series estimators)."""
    return _build("basis", name, params)


def family(name: str):
    """The registered family ``name`` (how its mechanisms are simulated and scored)."""
    return _build("family", name, {})


# mechanisms of plugins written before families, recognised by what they offer
_FAMILY_BY_MEMBER = (("frequency_statistics", "multinomial"), ("partition", "histogram"), ("basis", "series"))


def family_of(mechanism):
    """The :class:`ldpest.Family` of ``mechanism``: the registered family its ``family`` names; for
    a plugin that registers none, the built-in family its members match (a frequency oracle, a
    partition, a basis); a ParameterError when there is neither."""
    registered = get_registry().names("family")
    name = getattr(mechanism, "family", "")
    if name not in registered:
        name = next((family for member, family in _FAMILY_BY_MEMBER if hasattr(mechanism, member)), name)
    if name not in registered:
        raise ParameterError(f"mechanism {mechanism.name!r} belongs to family {mechanism.family!r}, which no plugin "
                             "registers: register an ldpest.Family to simulate and score it "
                             "(docs/plugin-author-guide.md, 'A family')")
    return family(name)


def mechanism_from_spec(spec: dict):
    """Rebuild a mechanism from its spec ``{"name": ..., **params}``.

    Mechanisms are immutable, so one built from the same spec is reused."""
    return mechanism_from_spec_json(canonical_json(spec), spec)


def mechanism_from_spec_json(key: str, spec: dict | None = None):
    """:func:`mechanism_from_spec` from canonical JSON text (cached: each process, dask workers
    included, builds a mechanism once per spec)."""
    cached = _mechanism_cache.get(key)
    if cached is not None:
        return cached
    spec = json.loads(key) if spec is None else spec
    params = dict(spec)
    name = params.pop("name", None)
    if not isinstance(name, str):
        raise PluginError(f"mechanism spec has no name: {spec!r}")
    built = mechanism(name, **params)
    with _lock:  # dask runs tasks on threads: evict and insert as one step
        if len(_mechanism_cache) >= _CACHE_SIZE:
            _mechanism_cache.pop(next(iter(_mechanism_cache)))
        _mechanism_cache[key] = built
    return built


def estimator_from_spec(spec: dict):
    params = dict(spec)
    name = params.pop("name", None)
    if not isinstance(name, str):
        raise PluginError(f"estimator spec has no name: {spec!r}")
    return estimator(name, **params)
