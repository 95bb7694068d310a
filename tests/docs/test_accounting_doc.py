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


EXAMPLES = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"example{i}" for i in range(len(EXAMPLES))])
def test_the_python_examples_print_the_page(example, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the repeated-collection example writes state.json
    exec(compile(example, str(PAGE), "exec"), {"__name__": "accounting_doc"})
    printed = capsys.readouterr().out
    shown = [ln[2:] for ln in example.splitlines() if ln.startswith("# ") and "..." not in ln]
    assert shown
    for line in shown:
        assert line.strip() in printed


def test_the_page_has_both_examples_and_its_figures_hold():
    assert len(EXAMPLES) == 2
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


LEDGER_LINES = [line for line in PAGE.read_text().splitlines()
                if line.startswith(("ldpest privatize day.csv", "ldpest ledger"))]


def test_the_ledger_commands_run_and_charge_what_the_page_says(tmp_path):
    assert len(LEDGER_LINES) == 3
    (tmp_path / "day.csv").write_text("user,answer\n" + "".join(f"u{i % 5},{'yes' if i % 3 else 'no'}\n"
                                                               for i in range(20)))
    for line in LEDGER_LINES:
        done = subprocess.run([LDPEST, *shlex.split(line)[1:], *(["--seed", "1"] if "privatize" in line else [])],
                              capture_output=True, text=True, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    ledger = ldpest.Ledger.open(tmp_path / "ledger.json")
    # 4 reports a user at epsilon 1, then 4 memoised reports of at most two values at (1, 2.5)
    for user in (f"u{i}" for i in range(5)):
        assert 4 + 2.5 <= ledger.spent(user, "2026-12-04") <= 4 + 5
    assert "2026-12-04" in done.stdout
