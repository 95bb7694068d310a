"""The plugin registry: discovery, failures, duplicates, unknown names."""


import numpy as np
import pytest
from plugin_fixtures import EXAMPLE_PLUGIN, pip_install_target, write_distribution

import ldpest
from ldpest.contract.registry import Registry

BUILT_IN = {
    ("randomized-response", "mechanism"), ("unary-randomized-response", "mechanism"),
    ("laplace", "mechanism"), ("local-hashing", "mechanism"), ("subset-selection", "mechanism"),
    ("hadamard-response", "mechanism"), ("frequency", "estimator"), ("frequency-likelihood", "estimator"),
    ("multinomial", "family"),
}


@pytest.fixture(scope="session")
def installed_example_plugin(tmp_path_factory):
    return pip_install_target(EXAMPLE_PLUGIN, tmp_path_factory.mktemp("site"))


def test_built_in_families_are_found_through_entry_points():
    rows = {(p.name, p.kind): p for p in ldpest.plugins()}
    assert BUILT_IN <= set(rows)
    row = rows[("randomized-response", "mechanism")]
    assert (row.family, row.origin, row.plugin) == ("multinomial", "ldpest", "multinomial")
    assert row.version == ldpest.__version__


def test_registry_is_built_lazily(fresh_registry):
    import ldpest.contract.registry as registry

    assert registry._registry is None
    ldpest.plugins()
    assert registry._registry is not None


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(ldpest.UnknownPluginError) as info:
        ldpest.mechanism("warner", epsilon=1.0)
    message = str(info.value)
    assert "unknown mechanism 'warner'" in message
    known = message.split("known mechanisms: ")[1].split(", ")
    assert known == sorted(known) and {"laplace", "randomized-response", "unary-randomized-response"} <= set(known)


def test_third_party_distribution_installed_with_pip_is_discovered(installed_example_plugin, monkeypatch,
                                                                    fresh_registry):
    monkeypatch.syspath_prepend(str(installed_example_plugin))
    rows = {p.name: p for p in ldpest.plugins()}
    oue = rows["optimized-unary-encoding"]
    assert (oue.kind, oue.family, oue.origin, oue.version) == ("mechanism", "multinomial", "ldpest-oue", "0.1.0")
    mech = ldpest.mechanism("optimized-unary-encoding", epsilon=1.0, categories=["a", "b", "c"])
    assert abs(mech.channel().max_log_ratio() - 1.0) < 1e-12
    rng = np.random.default_rng(1)
    result = ldpest.estimate(mech.privatize(rng.choice(["a", "b", "c"], 20000, p=[0.6, 0.3, 0.1]), rng=rng))
    assert result.attrs["estimator"] == "frequency"  # the built-in estimator accepts the new oracle
    assert np.all(np.abs(result["unprojected"] - [0.6, 0.3, 0.1]) < 5 * result["stderr"])


def test_plugin_that_fails_to_import_is_reported_and_skipped(tmp_path, monkeypatch, fresh_registry):
    write_distribution(tmp_path, "broken-plugin", {"ldpest_broken": "raise ImportError('needs libfoo')"},
                       {"broken": "ldpest_broken"})
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.warns(ldpest.PluginLoadWarning, match=r"'broken' \(broken-plugin\) skipped: import failed.*libfoo"):
        names = {p.name for p in ldpest.plugins()}
    assert {name for name, _ in BUILT_IN} <= names  # the others still work
    [failure] = ldpest.plugin_errors()
    assert failure.plugin == "broken" and "libfoo" in failure.error
    with pytest.raises(ldpest.UnknownPluginError, match="failed to load: broken"):
        ldpest.mechanism("broken-thing", epsilon=1.0)


def test_ctrl_c_during_a_plugin_import_is_an_interruption_not_a_broken_plugin(tmp_path, monkeypatch,
                                                                              fresh_registry):
    """A Ctrl-C that lands in a compiled module's import reaches Python as that module's ImportError; the
    registry must not record it as a broken plugin and go on (the command would then finish, exit 0)."""
    write_distribution(tmp_path, "interrupted-plugin", {"ldpest_interrupted": """
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise ImportError("initialization failed")
        """}, {"interrupted": "ldpest_interrupted"})
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(KeyboardInterrupt):
        ldpest.plugins()


def test_plugin_whose_hook_raises_is_skipped_whole(tmp_path, monkeypatch, fresh_registry):
    write_distribution(tmp_path, "half-plugin", {"ldpest_half": """
        import ldpest
        from ldpest_multinomial.mechanisms import RandomizedResponse

        class Fine(RandomizedResponse):
            name = "fine-mechanism"

        @ldpest.hookimpl
        def register_mechanisms(register):
            register(Fine)
            raise RuntimeError("oops")
    """}, {"half": "ldpest_half"})
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.warns(ldpest.PluginLoadWarning, match="registration failed: RuntimeError: oops"):
        names = {p.name for p in ldpest.plugins()}
    assert "fine-mechanism" not in names


def test_duplicate_name_is_an_error_naming_both(tmp_path, monkeypatch, fresh_registry):
    write_distribution(tmp_path, "impostor", {"ldpest_impostor": """
        import ldpest
        from ldpest_multinomial.mechanisms import RandomizedResponse

        class Impostor(RandomizedResponse):
            name = "randomized-response"

        @ldpest.hookimpl
        def register_mechanisms(register):
            register(Impostor)
    """}, {"zzz-impostor": "ldpest_impostor"})
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ldpest.DuplicatePluginError,
                       match=r"'randomized-response' is claimed by two plugins: 'multinomial' \(ldpest\) "
                             r"and 'zzz-impostor' \(impostor\)"):
        ldpest.plugins()


def test_registering_something_that_is_not_a_plugin_class_is_an_error():
    class NotAPlugin:
        @ldpest.hookimpl
        def register_mechanisms(self, register):
            register(dict)

    registry = Registry(load_entry_points=False)
    with pytest.raises(ldpest.PluginError, match="not a Mechanism subclass"):
        registry.register_plugin(NotAPlugin(), name="bad")


def test_allowlist_environment_variable(monkeypatch, fresh_registry):
    monkeypatch.setenv("LDPEST_PLUGINS", "nothing-else")
    assert ldpest.plugins() == []
    monkeypatch.setenv("LDPEST_PLUGINS", "multinomial")
    ldpest.reset_registry()
    assert {(p.name, p.kind) for p in ldpest.plugins()} == BUILT_IN  # the multinomial family only


def test_hooks_are_documented_specifications():
    from ldpest.contract import hookspecs

    for hook in ("register_mechanisms", "register_estimators", "register_bases"):
        function = getattr(hookspecs, hook)
        assert function.__doc__ and "register(cls)" in function.__doc__


def test_the_written_version_matches_the_package_metadata_and_pyproject():
    import importlib.metadata
    import re
    from pathlib import Path

    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    assert ldpest.__version__ == re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1)
    assert ldpest.__version__ == importlib.metadata.version("ldpest")
