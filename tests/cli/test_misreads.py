"""Issue 26, "silent misreads and false comfort": reports no distribution explains stop the CLI with
exit status 4 (nothing written) unless --accept-inconsistent; -m auto is refused for collected
reports; 0-based codes are suggested where reports look like positions; OpenDP's boolean
randomized response is accepted with categories False, True; Python calls with the wrong kind of
argument say what they take."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ldpest
from ldpest import InconsistentEstimateWarning, ParameterError

LDPEST = str(Path(sys.executable).with_name("ldpest"))


def collected(tmp_path, epsilon=1.0, categories=("a", "b", "c"), n=20_000, codes=False) -> Path:
    """Reports collected elsewhere: a CSV without ldpest's spec line."""
    mechanism = ldpest.mechanism("randomized-response", epsilon=epsilon, categories=list(categories))
    truth = np.random.default_rng(1).choice(list(categories), n, p=[0.6, 0.3, 0.1][:len(categories)])
    values = mechanism.privatize(truth, rng=2).values
    column = values if codes else np.asarray(categories, dtype=object)[values]
    path = tmp_path / "collected.csv"
    path.write_text("answer\n" + "".join(f"{v}\n" for v in column))
    return path


def run(*args, cwd=None):
    return subprocess.run([LDPEST, *map(str, args)], capture_output=True, text=True, cwd=cwd)


def test_inconsistent_reports_exit_4_and_write_nothing(tmp_path):
    path = collected(tmp_path, epsilon=4.0)
    claimed = ["-c", "answer", "-m", "randomized-response", "-e", "0.5", "--categories", "a,b,c"]
    done = run("estimate", path, *claimed, "-o", tmp_path / "result.csv")
    assert done.returncode == 4, done.stderr
    assert "inconsistent with every distribution" in done.stderr and "--accept-inconsistent" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert not (tmp_path / "result.csv").exists()
    accepted = run("estimate", path, *claimed, "--accept-inconsistent", "-o", tmp_path / "result.csv")
    assert accepted.returncode == 0, accepted.stderr
    assert "inconsistent with every distribution" in accepted.stderr  # still said, as a warning
    assert (tmp_path / "result.csv").exists()
    honest = run("estimate", path, "-c", "answer", "-m", "randomized-response", "-e", "4", "--categories", "a,b,c")
    assert honest.returncode == 0 and "inconsistent" not in honest.stderr


def test_zero_based_codes_against_labels_one_to_d_are_named(tmp_path):
    """The issue's case: 0-based codes read as labels 1..d, where no report happens to be 0 or
    where it is: the estimate is far outside [0, 1] and the message suggests --codes 0-based."""
    path = collected(tmp_path, epsilon=4.0, categories=(1, 2, 3), codes=True)
    done = run("estimate", path, "-c", "answer", "-m", "randomized-response", "-e", "4", "--categories", "1,2,3")
    assert done.returncode in (2, 4), done.stderr
    assert "--codes 0-based" in done.stderr
    fixed = run("estimate", path, "-c", "answer", "-m", "randomized-response", "-e", "4", "--categories", "1,2,3",
                "--codes", "0-based")
    assert fixed.returncode == 0, fixed.stderr


def test_auto_is_refused_for_collected_reports(tmp_path):
    path = collected(tmp_path)
    done = run("estimate", path, "-c", "answer", "-m", "auto", "-e", "1", "--categories", "a,b,c")
    assert done.returncode == 2 and "name the mechanism that made them" in done.stderr
    assert "Traceback" not in done.stderr


def test_python_warns_with_its_own_class():
    mechanism = ldpest.mechanism("randomized-response", epsilon=4.0, categories=["a", "b", "c"])
    reports = mechanism.privatize(np.repeat(["a", "b", "c"], [6000, 3000, 1000]), rng=3)
    claimed = ldpest.mechanism("randomized-response", epsilon=0.5, categories=["a", "b", "c"])
    with pytest.warns(InconsistentEstimateWarning, match="epsilon = 0.5"):
        ldpest.estimate(ldpest.Reports.from_array(np.asarray(["a", "b", "c"], dtype=object)[reports.values], claimed))


def test_opendp_boolean_randomized_response_is_accepted():
    """OpenDP's make_randomized_response_bool(prob) reports booleans: categories [False, True]."""
    mechanism = ldpest.mechanism("randomized-response", keep=0.75, categories=[False, True])
    truth = np.random.default_rng(4).random(40_000) < 0.3
    reports = mechanism.privatize(truth, rng=5)
    as_collected = ldpest.Reports.from_array(reports.values.astype(bool), mechanism)
    result = ldpest.estimate(as_collected)
    assert list(result["category"].values) == ["False", "True"]
    assert abs(result["unprojected"].values[1] - truth.mean()) < 5 * result["stderr"].values[1]
    with pytest.raises(ParameterError, match="all booleans"):
        ldpest.mechanism("randomized-response", epsilon=1.0, categories=[0, True])


def test_wrong_arguments_say_what_is_taken():
    mechanism = ldpest.mechanism("randomized-response", epsilon=1.0, categories=["a", "b"])
    reports = mechanism.privatize(["a", "b"], rng=1)
    with pytest.raises(ParameterError, match="Reports.from_array"):
        ldpest.estimate(["a", "b"])
    with pytest.raises(ParameterError, match="estimate the reports first"):
        ldpest.confidence_interval(reports)
    with pytest.raises(ldpest.DataError, match='pass codes="0-based"'):
        ldpest.Reports.from_array(reports.values, mechanism)
    three = ldpest.mechanism("randomized-response", epsilon=1.0, categories=["x", "y", "z"])
    with pytest.raises(ldpest.DataError, match='pass codes="1-based"'):
        ldpest.Reports.from_array(np.array([1, 2, 3]), three)


@pytest.mark.parametrize("text, fragment", [
    ("yes\nno\nyes\n", "a column is named by one of the categories"),
    ("1\n0\n1\n", "every column is named by a number"),
    ("1,1\n0,1\n1,0\n", "names '1' more than once"),
])
def test_a_header_row_that_looks_like_data_is_refused(tmp_path, text, fragment):
    """A headerless file read without --no-header took its first report as the header and dropped
    it (n = 9,999 of 10,000), or died with an internal KeyError on a repeated name."""
    path = tmp_path / "headerless.csv"
    path.write_text(text)
    categories = "yes,no" if "yes" in text else "0,1"
    done = run("estimate", path, "-m", "randomized-response", "-e", "1", "--categories", categories,
               *(["-c", "1"] if "," in text.splitlines()[0] else []))
    assert done.returncode == 2 and fragment in done.stderr and "--no-header" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    fixed = run("estimate", path, "--no-header", "-c", "1", "-m", "randomized-response", "-e", "1",
                "--categories", categories)
    assert fixed.returncode == 0 and "n=3" in fixed.stdout, fixed.stderr


def test_two_writers_of_one_file_the_second_is_refused(tmp_path):
    """Issue 26: two privatize runs writing one file both exited 0 and the last one won silently."""
    from ldpest.util.atomic import atomic_path

    data = tmp_path / "answers.csv"
    data.write_text("answer\n" + "a\nb\n" * 50)
    output = tmp_path / "reports.csv"
    with atomic_path(output) as held:  # a first writer, still writing
        held.write_text("the first writer's reports\n")
        done = run("privatize", data, "-c", "answer", "-m", "randomized-response", "-e", "1", "--categories", "a,b",
                   "-o", output)
        assert done.returncode == 2 and "another process is writing this file" in done.stderr, done.stderr
    assert output.read_text() == "the first writer's reports\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answers.csv", "reports.csv"]  # no lock or part left


def test_os_errors_name_the_file_not_its_hidden_temporary(tmp_path):
    from ldpest.util.atomic import atomic_path

    target = tmp_path / "result.csv"
    with pytest.raises(OSError, match="while writing .*result.csv") as caught:
        with atomic_path(target) as tmp:
            tmp.write_text("x")
            os.rmdir(tmp)  # an OS error inside the write (not a directory)
    assert ".part" not in str(caught.value)


def test_categories_from_a_file_and_results_as_parquet(tmp_path):
    """Issue 26, telemetry users: 200,000 labels exceed the OS's limit for one argument; results as
    Parquet, with the result's description in the schema's metadata."""
    import json

    import pyarrow.parquet as pq

    labels = [f"app{i}" for i in range(200_000)]
    (tmp_path / "labels.txt").write_text("\n".join(labels) + "\n")
    data = tmp_path / "answers.csv"
    data.write_text("answer\n" + "".join(f"app{i % 7}\n" for i in range(2_000)))
    done = run("privatize", data, "-c", "answer", "-m", "randomized-response", "-e", "4", "--categories",
               "@labels.txt", "-o", "reports.nc", "--seed", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert ldpest.read_reports(tmp_path / "reports.nc").mechanism.categories == labels
    small = run("estimate", data, "--raw", "-c", "answer", "-m", "randomized-response", "-e", "4", "--categories",
                "@" + str(tmp_path / "seven.txt"), cwd=tmp_path)
    assert small.returncode == 2 and "cannot read" in small.stderr
    (tmp_path / "seven.txt").write_text("".join(f"app{i}\n" for i in range(7)))
    done = run("estimate", data, "--raw", "-c", "answer", "-m", "randomized-response", "-e", "4", "--categories",
               "@seven.txt", "--seed", "2", "-o", "result.parquet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    table = pq.read_table(tmp_path / "result.parquet")
    assert table.column("category").to_pylist() == [f"app{i}" for i in range(7)]
    assert {"probability", "stderr", "lower", "upper"} <= set(table.column_names)
    described = json.loads(table.schema.metadata[b"ldpest"])
    assert described["ldpest"]["mechanism"] == "randomized-response" and described["ldpest"]["n"] == 2000


def test_simulate_takes_survey_designs_as_keep(tmp_path):
    """Issue 26: `simulate` with keep instead of epsilon; the study's epsilons are the designs'."""
    import math

    done = run("simulate", "-m", "randomized-response", "--categories", "a,b,c", "--keep", "0.5,0.8", "--n", "1e3",
               "--reps", "2", "-o", tmp_path / "study.nc")
    assert done.returncode == 0, done.stderr
    study = ldpest.io.result_files.read_result(tmp_path / "study.nc")
    np.testing.assert_allclose(study["epsilon"].values, [math.log(0.5 * 2 / 0.5), math.log(0.8 * 2 / 0.2)],
                               rtol=1e-12)
    both = run("simulate", "-m", "randomized-response", "--categories", "a,b", "--keep", "0.6", "-e", "1", "--n",
               "1e3", "-o", tmp_path / "x.nc")
    assert both.returncode == 2 and "one of them" in both.stderr
    wrong = run("simulate", "-m", "laplace", "--categories", "a,b", "--keep", "0.6", "--n", "1e3",
                "-o", tmp_path / "y.nc")
    assert wrong.returncode == 2 and "no parameter 'keep'" in wrong.stderr


def test_a_folder_that_is_not_a_zarr_store_is_named_so(tmp_path):
    (tmp_path / "reports.zarr").mkdir()
    done = run("estimate", tmp_path / "reports.zarr")
    assert done.returncode == 2 and "a folder, but not a Zarr report store" in done.stderr, done.stderr
    missing = run("estimate", tmp_path / "absent.zarr")
    assert missing.returncode == 2 and "no such" in missing.stderr


def test_a_very_long_line_is_one_clear_line(tmp_path):
    """Issue 26: a 100 MB line gave pyarrow's "straddling object" with the byte offset of a block.
    Collected reports are parsed a whole part at a time (the long value is then refused by name,
    cut short); raw data read block by block says what is wrong."""
    path = tmp_path / "long.csv"
    path.write_text("answer\na\n" + "b" * 3_000_000 + "\na\n")
    collected = run("estimate", path, "-c", "answer", "-m", "randomized-response", "-e", "1", "--categories", "a,b",
                    "--block-bytes", str(1 << 20))
    assert collected.returncode == 2 and "(3,000,002 characters)" in collected.stderr
    assert len(collected.stderr) < 400
    raw = run("estimate", path, "--raw", "-c", "answer", "-m", "randomized-response", "-e", "1", "--categories",
              "a,b", "--block-bytes", str(1 << 20))
    assert raw.returncode == 2 and "a line is longer than the 1 MiB" in raw.stderr and "straddl" not in raw.stderr


def test_a_grid_too_large_is_a_clear_error(tmp_path):
    """Issue 26: bins=100000 in 2-D was an internal error."""
    data = tmp_path / "two.csv"
    data.write_text("x,y\n0.1,0.2\n")
    done = run("privatize", data, "-c", "x", "-c", "y", "-m", "laplace-histogram", "-e", "1", "-p", "low=[0,0]",
               "-p", "high=[1,1]", "-p", "bins=100000", "-o", tmp_path / "t.nc")
    assert done.returncode == 2 and "10,000,000,000 cells" in done.stderr and "internal error" not in done.stderr
    assert not (tmp_path / "t.nc").exists()


def test_a_csv_with_many_columns_is_read(tmp_path):
    """Issue 26: a CSV with 10^6 columns was an internal ArrowInvalid (its header line is longer than
    pyarrow's default block); 10^5 columns here (10^6 took 35 s: `ldpest estimate wide.csv -c c5 ...`)."""
    columns = 100_000
    path = tmp_path / "wide.csv"
    path.write_text(",".join(f"c{i}" for i in range(columns)) + "\n" + ",".join(["1"] * columns) + "\n")
    done = run("estimate", path, "--raw", "-c", f"c{columns - 1}", "-m", "randomized-response", "-e", "1",
               "--categories", "1,2", "--seed", "1")
    assert done.returncode == 0 and "n=1" in done.stdout, done.stderr
