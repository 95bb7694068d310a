"""Names of a package loaded on first use (PEP 562), so that importing the package costs nothing
until a name is used (``import ldpest`` and ``ldpest --help`` load no numpy, xarray or pandas)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable


def lazy_names(package: str, names: dict[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``names`` maps each public name to the module
    (relative to ``package``) that defines it; any other attribute is tried as a submodule."""

    def __getattr__(name: str):
        module = names.get(name)
        if module is None:
            try:
                return importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__
