"""`-` for standard input and output (issue 26): raw data and reports stream through pipes; on an
error nothing reaches standard output and the message names "standard input"."""

import subprocess
import sys
from pathlib import Path

import numpy as np
from stats_helpers import assert_json_result_near

LDPEST = str(Path(sys.executable).with_name("ldpest"))
PRIVATIZE = ["privatize", "-", "-c", "answer", "-m", "randomized-response", "-e", "2", "--categories", "yes,no",
             "--no-progress"]


def run(*args, stdin=""):
    return subprocess.run([LDPEST, *map(str, args)], input=stdin, capture_output=True, text=True)


def answers(n=5000, seed=3):
    drawn = np.random.default_rng(seed).choice(["yes", "no"], n, p=[0.7, 0.3])
    return "answer\n" + "".join(f"{a}\n" for a in drawn)


def test_a_pipe_from_raw_data_to_an_estimate():
    reports = run(*PRIVATIZE, "-o", "-", stdin=answers())
    assert reports.returncode == 0, reports.stderr
    assert reports.stdout.startswith("#ldpest-spec ")  # a report CSV with its spec line
    assert "wrote 5000 reports of randomized-response (epsilon=2.0) to standard output" in reports.stderr
    estimated = run("estimate", "-", "-o", "-", "--no-progress", stdin=reports.stdout)
    assert estimated.returncode == 0, estimated.stderr
    assert_json_result_near(estimated.stdout, [0.7, 0.3], 5000)


def test_standard_input_to_a_file_and_a_file_to_standard_output(tmp_path):
    done = run(*PRIVATIZE, "-o", tmp_path / "reports.csv", stdin=answers())
    assert done.returncode == 0, done.stderr
    data = tmp_path / "people.csv"
    data.write_text(answers())
    piped = run("privatize", data, "-c", "answer", "-m", "randomized-response", "-e", "2", "--categories",
                "yes,no", "-o", "-", "--no-progress")
    assert piped.returncode == 0 and piped.stdout.count("\n") == 5000 + 3  # spec, rng and header lines
    summary = run("estimate", "-", "--no-progress", stdin=(tmp_path / "reports.csv").read_text())
    assert summary.returncode == 0 and "yes" in summary.stdout


def test_an_error_on_standard_input_writes_nothing_and_names_it():
    bad = answers(100) + "maybe\n"
    done = run(*PRIVATIZE, "-o", "-", stdin=bad)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "standard input, line 102" in done.stderr and "maybe" in done.stderr
    assert "ldpest-stdin-" not in done.stderr and "Traceback" not in done.stderr
    empty = run("estimate", "-", "-m", "randomized-response", "-e", "1", "--categories", "yes,no", "-c", "answer",
                stdin="")
    assert empty.returncode == 2 and "standard input" in empty.stderr and empty.stdout == ""


def test_refused_users_still_get_their_reports_on_standard_output(tmp_path):
    """Exit status 3 (some users over budget) comes after the other users' reports are out."""
    data = "user,answer\nu0,yes\nu0,no\nu1,yes\nu2,no\n"  # u0 would spend 2 > 1.5: refused
    common = ["privatize", "-", "-c", "answer", "--user-column", "user", "-m", "randomized-response", "-e", "1",
              "--categories", "yes,no", "--ledger", tmp_path / "ledger.json", "--budget", "1.5", "-o", "-",
              "--no-progress"]
    done = run(*common, stdin=data)
    assert done.returncode == 3, done.stderr
    assert "'u0'" in done.stderr
    assert done.stdout.startswith("#ldpest-spec ") and done.stdout.count("\n") == 3 + 2  # u1's and u2's reports
