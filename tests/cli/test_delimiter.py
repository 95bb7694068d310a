"""--delimiter (issue 26): semicolon- and tab-separated files privatise and estimate like commas;
a file read with the wrong separator names the one it seems to use; bad values are refused."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from stats_helpers import assert_json_result_near

import ldpest

LDPEST = str(Path(sys.executable).with_name("ldpest"))


def run(*args):
    return subprocess.run([LDPEST, *map(str, args)], capture_output=True, text=True)


def people(tmp_path, separator: str, name: str) -> Path:
    rng = np.random.default_rng(3)
    answers = rng.choice(["yes", "no"], 4000, p=[0.7, 0.3])
    path = tmp_path / name
    path.write_text(f"id{separator}answer\n" + "".join(f"{i}{separator}{a}\n" for i, a in enumerate(answers)))
    return path


@pytest.mark.parametrize("separator,option", [(";", ";"), ("\t", "\\t"), ("\t", "tab"), ("|", "|")])
def test_other_separators_privatise_and_estimate(tmp_path, separator, option):
    data = people(tmp_path, separator, "people.csv")
    done = run("privatize", data, "-c", "answer", "-m", "randomized-response", "-e", "2", "--categories", "yes,no",
               "--delimiter", option, "-o", tmp_path / "reports.csv", "--no-progress", "--seed", "1")
    assert done.returncode == 0, done.stderr
    result = run("estimate", tmp_path / "reports.csv", "--json", "--no-progress")
    assert result.returncode == 0, result.stderr
    assert_json_result_near(result.stdout, [0.7, 0.3], 4000)


def test_collected_reports_separated_by_semicolons(tmp_path):
    mech = ldpest.mechanism("unary-randomized-response", epsilon=1.0, categories=["a", "b", "c"])
    bits = mech.privatize(np.random.default_rng(1).choice(["a", "b", "c"], 3000, p=[0.5, 0.3, 0.2]), rng=2).values
    path = tmp_path / "collected.csv"
    path.write_text("report_a;report_b;report_c\n" + "".join(";".join(map(str, row)) + "\n" for row in bits))
    done = run("estimate", path, "-m", "unary-randomized-response", "-e", "1", "--categories", "a,b,c",
               "--delimiter", ";", "--json", "--no-progress")
    assert done.returncode == 0, done.stderr
    comma = tmp_path / "comma.csv"
    comma.write_text(path.read_text().replace(";", ","))
    same = run("estimate", comma, "-m", "unary-randomized-response", "-e", "1", "--categories", "a,b,c", "--json",
               "--no-progress")
    assert done.stdout == same.stdout  # the same numbers whatever the separator


def test_the_wrong_separator_is_named(tmp_path):
    data = people(tmp_path, ";", "people.csv")
    done = run("privatize", data, "-c", "answer", "-m", "randomized-response", "-e", "2", "--categories", "yes,no",
               "-o", tmp_path / "reports.csv", "--no-progress")
    assert done.returncode == 2
    assert "no column 'answer'" in done.stderr and "add --delimiter ';'" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "reports.csv").exists()


@pytest.mark.parametrize("value,message", [(";;", "--delimiter must be one character"),
                                           ('"', "--delimiter must be one character (not a quote")])
def test_bad_delimiters_are_refused(tmp_path, value, message):
    data = people(tmp_path, ";", "people.csv")
    done = run("privatize", data, "-c", "answer", "-m", "randomized-response", "-e", "2", "--categories", "yes,no",
               "--delimiter", value, "-o", tmp_path / "reports.csv")
    assert done.returncode == 2 and message in done.stderr
    assert not (tmp_path / "reports.csv").exists()


def test_a_delimiter_for_a_file_that_is_not_csv_is_refused(tmp_path):
    mech = ldpest.mechanism("randomized-response", epsilon=1.0, categories=["a", "b"])
    mech.privatize(["a", "b"] * 10, rng=1).to_netcdf(tmp_path / "reports.nc")
    done = run("estimate", tmp_path / "reports.nc", "--delimiter", ";")
    assert done.returncode == 2 and "--delimiter: for CSV files only" in done.stderr
