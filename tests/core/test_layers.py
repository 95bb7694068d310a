"""The floors of README's "Layout" (issue 21): the import-linter contracts of pyproject.toml hold for
ldpest and its plugins, each contract fails on a probe package built to break it, and the module
paths before the floors still import the same modules."""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import ldpest
from ldpest._moved import MOVED

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
LINTER = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
CONTRACT_NAMES = [contract["name"] for contract in LINTER["contracts"]]
pytestmark = pytest.mark.skipif(LINT_IMPORTS is None, reason="import-linter is a dev dependency")


def lint_imports(config: Path, paths, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([LINT_IMPORTS, "--config", str(config), "--no-cache"], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(paths)})


def kept_and_broken(output: str) -> tuple[set, set]:
    kept = {name for name in CONTRACT_NAMES if f"{name} KEPT" in output}
    broken = {name for name in CONTRACT_NAMES if f"{name} BROKEN" in output}
    return kept, broken


def test_ldpest_and_its_plugins_keep_every_contract():
    paths = os.pathsep.join([str(ROOT), str(ROOT / "plugins"), str(ROOT / "plugins" / "ldpest-oue" / "src"),
                             str(ROOT / "plugins" / "ldpest-one-bit-mean" / "src")])
    result = lint_imports(ROOT / "pyproject.toml", paths, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert kept_and_broken(result.stdout) == (set(CONTRACT_NAMES), set())


# -- a probe house with the same floors, where each contract is broken on purpose -------------------
PLUGINS = tuple(package for package in LINTER["root_packages"] if package != "ldpest")
MODULES = ["util/__init__", "util/errors", "privacy/__init__", "stats/__init__", "contract/__init__", "contract/base",
           "contract/registry", "contract/reports", "contract/results", "contract/hookspecs", "contract/channel",
           "contract/family", "io/__init__",
           "engine/__init__", "cli", "rbridge", "plotting", "testing", "__init__"]


def probe_config(folder: Path) -> Path:
    """pyproject's contracts with ldpest renamed probe (the installed ldpest stays out of the way)."""
    text = (ROOT / "pyproject.toml").read_text()
    start = text.index("[tool.importlinter]")
    end = text.index("\n[tool.", start + 1)
    section = re.sub(r"\bldpest(?=[._\"])", "probe", text[start:end])  # module names, not the contracts' names
    config = folder / "contracts.toml"
    config.write_text(section)
    return config


def probe_house(folder: Path, breaks: dict[str, str]) -> Path:
    """Every module the contracts name, empty but for the imports in ``breaks`` (path -> code)."""
    for module in MODULES:
        (folder / "probe" / f"{module}.py").parent.mkdir(parents=True, exist_ok=True)
        (folder / "probe" / f"{module}.py").write_text("")
    for plugin in PLUGINS:
        (folder / plugin.replace("ldpest_", "probe_")).mkdir(exist_ok=True)
        (folder / plugin.replace("ldpest_", "probe_") / "__init__.py").write_text("import probe.util.errors\n")
    (folder / "probe" / "engine" / "__init__.py").write_text("import probe.io\nimport probe.contract.base\n")
    (folder / "probe" / "cli.py").write_text("import probe.engine\nimport probe.plotting\n")
    for path, code in breaks.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(code)
    return probe_config(folder)


BREAKS = {
    "Each floor imports only the floors below it": {"probe/util/errors.py": "import probe.engine\n"},
    "No import circles, between floors or between the modules of one floor": {
        "probe/contract/base.py": "import probe.contract.registry\n",
        "probe/contract/registry.py": "def build():\n    from probe.contract import base\n"},
    "Plugins import only the public ldpest API": {"probe_series/__init__.py": "import probe.io\n"},
    "A module whose name starts with _ is imported only inside its own package": {
        "probe/util/_hidden.py": "", "probe/engine/__init__.py": "from probe.util import _hidden\n"},
}


def test_the_probe_house_keeps_every_contract(tmp_path):
    result = lint_imports(probe_house(tmp_path, {}), tmp_path, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert kept_and_broken(result.stdout) == (set(CONTRACT_NAMES), set())


@pytest.mark.parametrize("contract", list(BREAKS))
def test_each_contract_fails_on_a_probe_that_breaks_it(contract, tmp_path):
    assert set(BREAKS) == set(CONTRACT_NAMES)  # every contract has its broken probe
    result = lint_imports(probe_house(tmp_path, BREAKS[contract]), tmp_path, tmp_path)
    assert result.returncode != 0
    kept, broken = kept_and_broken(result.stdout)
    assert broken == {contract} and kept == set(CONTRACT_NAMES) - {contract}, result.stdout


# -- the paths before the floors -------------------------------------------------------------------
@pytest.mark.parametrize("old, new", sorted(MOVED.items()))
def test_an_old_module_path_is_the_module_at_its_new_home(old, new):
    module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert module.__spec__.name == new and module.__package__ == module.__spec__.parent  # relative imports work


def test_what_plugin_authors_import_from_old_paths_still_imports():
    from ldpest.contract import Mechanism, smallest_index_dtype
    from ldpest.exact import WORD, keep_threshold, random_words  # noqa: F401
    from ldpest.io import write_reports_csv
    from ldpest.noise import LatticeLaplace
    from ldpest.stats import AffineBinomialOracle, SufficientStats, count_indices, laplace_mean_kurtosis  # noqa: F401
    from ldpest.validation import check_categories, check_epsilon  # noqa: F401

    assert Mechanism is ldpest.Mechanism and SufficientStats is ldpest.SufficientStats
    assert LatticeLaplace is importlib.import_module("ldpest.privacy.noise").LatticeLaplace
    assert write_reports_csv is importlib.import_module("ldpest.io.writers").write_reports_csv
    assert smallest_index_dtype(256).itemsize == 1 and WORD == 2 ** 64
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        ldpest.stats.nothing  # noqa: B018
