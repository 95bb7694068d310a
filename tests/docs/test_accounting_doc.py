"""docs/accounting.md: its Python example runs and prints what the page shows, its CLI lines run,
and the figures it quotes are what ldpest computes."""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import ldpest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "accounting.md"
LDPEST = str(Path(sys.executable).with_name("ldpest"))


def test_the_python_example_prints_the_page(capsys):
    example = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)[0]
    exec(compile(example, str(PAGE), "exec"), {"__name__": "accounting_doc"})
    printed = capsys.readouterr().out
    for line in (ln[2:] for ln in example.splitlines() if ln.startswith("# ") and "..." not in ln):
        assert line.strip() in printed
    assert ldpest.plan_shuffle(0.1, 1e-6, epsilon=4.0)["n"] == 136_494


COMMANDS = [line.split("  #")[0].strip() for line in PAGE.read_text().splitlines()
            if line.startswith("ldpest plan --shuffle")]


def test_the_page_shows_commands():
    assert len(COMMANDS) == 3


@pytest.mark.parametrize("line", COMMANDS)
def test_each_command_runs(line):
    done = subprocess.run([LDPEST, *shlex.split(line)[1:]], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "DP" in done.stdout or '"central_epsilon"' in done.stdout or '"epsilon"' in done.stdout
