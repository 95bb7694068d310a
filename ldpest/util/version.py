"""The package version, written here so that reading it costs nothing at start-up
(``tests/core/test_registry.py`` checks it against the installed metadata and pyproject.toml)."""

__version__ = "0.1.0"
