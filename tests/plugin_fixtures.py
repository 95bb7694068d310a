"""Helpers that install plugins for tests without touching the environment."""

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_PLUGIN = ROOT / "plugins" / "ldpest-oue"


def pip_install_target(source: Path, target: Path) -> Path:
    """``pip install`` a distribution into ``target`` (add it to sys.path to use it).

    The source is copied beside ``target`` first, so the build never writes into the source
    tree: setuptools leaves ``build/`` and ``*.egg-info`` there, and two test runs at once once
    collided on them and left a ``build/`` that broke every later install."""
    copy = target.parent / f"{target.name}-source"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-index", "--target", str(target), str(copy)],
        capture_output=True, text=True,
    )
    if result.returncode != 0:
        raise RuntimeError(f"pip install of {source} failed:\n{result.stderr[-3000:]}")
    return target


def write_distribution(target: Path, dist: str, modules: dict[str, str], entry_points: dict[str, str]) -> Path:
    """A minimal installed distribution (dist-info + modules) in ``target``."""
    info = target / f"{dist}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    lines = "\n".join(f"{name} = {module}" for name, module in entry_points.items())
    (info / "entry_points.txt").write_text(f"[ldpest]\n{lines}\n")
    for module, source in modules.items():
        (target / f"{module}.py").write_text(textwrap.dedent(source))
    return target
