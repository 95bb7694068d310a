"""The command line, driven with typer's CliRunner and as a subprocess."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from typer.testing import CliRunner

import ldpest
from ldpest.cli import app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "survey-reports.csv"
LDPEST = str(Path(sys.executable).parent / "ldpest")
runner = CliRunner()


def run(*args):
    result = runner.invoke(app, [str(a) for a in args])
    return result


def fails_cleanly(result, *fragments):
    """Exit code 2, one error line on stderr naming the problem (warnings aside), no traceback."""
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = [line for line in result.stderr.splitlines() if line.strip() and not line.startswith("ldpest: warning")]
    assert len(lines) == 1 and lines[0].startswith("ldpest: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    assert "Traceback" not in result.output


@pytest.fixture
def survey_args():
    return ["--mechanism", "randomized-response", "--epsilon", "1", "--categories", "car,bus,bike,walk"]


def test_plugins_table_and_json():
    table = run("plugins")
    assert table.exit_code == 0
    for name in ("randomized-response", "laplace-histogram", "linf-sampling", "trigonometric", "frequency"):
        assert name in table.stdout
    rows = json.loads(run("plugins", "--json").stdout)["plugins"]
    walsh = next(r for r in rows if r["name"] == "walsh")
    assert {"name": "walsh", "kind": "basis", "family": "series"}.items() <= walsh.items()


def test_estimate_bundled_survey_matches_the_python_api(tmp_path, survey_args):
    out = tmp_path / "result.json"
    result = run("estimate", EXAMPLE, "--column", "transport", *survey_args, "--output", out)
    assert result.exit_code == 0, result.output
    assert "car" in result.stdout and "stderr" in result.stdout
    written = xr.Dataset.from_dict(json.loads(out.read_text()))
    labels = [line.split(",")[1] for line in EXAMPLE.read_text().splitlines()[1:]]
    mech = ldpest.mechanism("randomized-response", epsilon=1.0, categories=["car", "bus", "bike", "walk"])
    expected = ldpest.estimate(ldpest.Reports.from_array(labels, mech))
    assert list(written["category"].values) == ["car", "bus", "bike", "walk"]
    np.testing.assert_array_equal(written["probability"].values, expected["probability"].values)
    assert written.attrs["n"] == 5000


@pytest.mark.parametrize("suffix", [".nc", ".csv", ".json"])
def test_output_formats_keep_labels(tmp_path, survey_args, suffix):
    out = tmp_path / f"result{suffix}"
    assert run("estimate", EXAMPLE, "-c", "transport", *survey_args, "-o", out).exit_code == 0
    if suffix == ".csv":
        import pandas as pd

        table = pd.read_csv(out)  # a plain CSV: default options read it
        assert list(table.columns[:3]) == ["category", "probability", "stderr"]
        assert {"lower", "upper"} <= set(table.columns) and table["category"].tolist() == ["car", "bus", "bike", "walk"]
        assert np.all(table["lower"] <= table["unprojected"]) and np.all(table["unprojected"] <= table["upper"])
        sidecar = json.loads((tmp_path / "result.csv-metadata.json").read_text())
        assert sidecar["url"] == "result.csv" and sidecar["ldpest"]["n"] == 5000
        assert sidecar["ldpest"]["confidence_level"] == 0.95
        described = {c["name"]: c for c in sidecar["tableSchema"]["columns"]}
        assert described["probability"]["units"] == "1" and "interval" in described["lower"]["dc:description"]
    else:
        back = ldpest.io.result_files.read_result(out)
        assert list(back["category"].values) == ["car", "bus", "bike", "walk"]
        assert {"lower", "upper"} <= set(back.data_vars) and back.attrs["confidence_level"] == 0.95
        assert back["probability"].attrs["long_name"] == "estimated probability of the category"
        assert json.loads(back.attrs["mechanism_spec"])["categories"] == ["car", "bus", "bike", "walk"]


def test_privatize_then_estimate_from_the_report_file(tmp_path):
    data = tmp_path / "answers.csv"
    rng = np.random.default_rng(0)
    answers = rng.choice(["yes", "no"], 4000, p=[0.3, 0.7])
    data.write_text("id,answer\n" + "\n".join(f"{i},{a}" for i, a in enumerate(answers)) + "\n")
    for suffix in (".csv", ".nc"):
        reports = tmp_path / f"reports{suffix}"
        result = run("privatize", data, "-c", "answer", "-m", "unary-randomized-response", "-e", "2",
                     "--categories", "yes,no", "-o", reports, "--seed", "3")
        assert result.exit_code == 0, result.output
        estimate = run("estimate", reports, "--json")
        assert estimate.exit_code == 0, estimate.output
        ds = xr.Dataset.from_dict(json.loads(estimate.stdout))
        assert ds.attrs["mechanism"] == "unary-randomized-response" and ds.attrs["n"] == 4000
        assert abs(float(ds["unprojected"].sel(category="yes")) - 0.3) < 5 * float(ds["stderr"].sel(category="yes"))
    first = (tmp_path / "reports.csv").read_text().splitlines()
    assert first[0].startswith("#ldpest-spec ") and first[1] == "#ldpest-rng numpy-seeded"
    assert first[2] == "report_yes,report_no"


def test_privatize_defaults_to_the_secure_generator(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("x\na\nb\n")
    out = tmp_path / "r.nc"
    made = run("privatize", data, "-c", "x", "-m", "randomized-response", "-e", "1", "--categories", "a,b", "-o", out)
    assert made.exit_code == 0
    assert ldpest.read_reports(out).data.attrs["rng"] == "secure"


def test_raw_two_dimensional_histogram_names_dims_after_columns(tmp_path):
    data = tmp_path / "people.csv"
    rng = np.random.default_rng(1)
    rows = rng.uniform([18, 0], [90, 200], (3000, 2))
    data.write_text("age,income\n" + "\n".join(f"{a:.3f},{b:.3f}" for a, b in rows) + "\n")
    out = tmp_path / "density.nc"
    result = run("estimate", data, "--raw", "-c", "age", "-c", "income", "-m", "laplace-histogram", "-e", "1",
                 "-p", "low=[18,0]", "-p", "high=[90,200]", "-p", "bins=[3,2]", "--seed", "1", "-o", out)
    assert result.exit_code == 0, result.output
    ds = ldpest.io.result_files.read_result(out)
    assert ds["density"].dims == ("age", "income") and ds["age_bounds"].shape == (3, 2)
    plot = tmp_path / "density.png"
    assert run("plot", out, "-o", plot).exit_code == 0
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_streaming_in_many_blocks_equals_one_block(tmp_path):
    data = tmp_path / "reports.csv"
    mech = ldpest.mechanism("laplace", epsilon=1.0, categories=["a", "b", "c"])
    reports = mech.privatize(np.random.default_rng(2).choice(["a", "b", "c"], 20000), rng=3)
    ldpest.io.writers.write_reports_csv(reports, data)
    small = run("estimate", data, "--json", "--block-bytes", "4096")
    big = run("estimate", data, "--json")
    assert small.exit_code == big.exit_code == 0
    assert json.loads(small.stdout) == json.loads(big.stdout)
    expected = ldpest.confidence_interval(ldpest.estimate(reports), 0.95)  # the CLI adds the intervals
    xr.testing.assert_identical(xr.Dataset.from_dict(json.loads(big.stdout)),
                                xr.Dataset.from_dict(expected.to_dict(data="list")))


@pytest.mark.parametrize("kind", ["frequency", "density-1d", "density-2d"])
def test_plot_draws_each_kind(tmp_path, kind):
    rng = np.random.default_rng(4)
    if kind == "frequency":
        mech = ldpest.mechanism("laplace", epsilon=1.0, categories=["a", "b"])
        result = ldpest.estimate(mech.privatize(rng.choice(["a", "b"], 500), rng=rng))
    elif kind == "density-1d":
        mech = ldpest.mechanism("linf-sampling", epsilon=1.0, basis="trigonometric", k=5)
        result = ldpest.estimate(mech.privatize(rng.uniform(size=500), rng=rng))
    else:
        mech = ldpest.mechanism("laplace-histogram", epsilon=1.0, low=[0, 0], high=[1, 1], bins=4)
        result = ldpest.estimate(mech.privatize(rng.uniform(size=(500, 2)), rng=rng))
    path = tmp_path / "r.nc"
    ldpest.io.result_files.write_result(result, path)
    for suffix, magic in ((".png", b"\x89PNG"), (".pdf", b"%PDF")):
        out = tmp_path / f"plot{suffix}"
        assert run("plot", path, "-o", out).exit_code == 0
        assert out.read_bytes()[:4] == magic and out.stat().st_size > 1000


def test_simulate_writes_a_study_and_its_plot(tmp_path):
    out, plot = tmp_path / "study.nc", tmp_path / "study.png"
    result = run("simulate", "-m", "randomized-response", "--categories", "a,b,c", "--theta", "0.5,0.3,0.2",
                 "-e", "0.5,2", "--n", "1e3,1e6,1e9", "--reps", "10", "-o", out, "--plot", plot)
    assert result.exit_code == 0, result.output
    study = ldpest.io.result_files.read_result(out)
    assert study["error"].dims == ("epsilon", "n", "rep") and list(study["n"].values) == [1000, 10 ** 6, 10 ** 9]
    assert study.attrs["simulation"] == "exact aggregate"
    mean = study["mean_error"]
    assert float(mean.sel(epsilon=0.5, n=10 ** 9)) < float(mean.sel(epsilon=0.5, n=1000)) / 1e4
    assert plot.read_bytes()[:4] == b"\x89PNG"


# --- bad input: one line, exit 2, nothing written ----------------------------
def test_missing_file(tmp_path, survey_args):
    fails_cleanly(run("estimate", tmp_path / "nope.csv", "-c", "x", *survey_args), "nope.csv: no such file")


def test_missing_column_lists_the_columns(survey_args):
    fails_cleanly(run("estimate", EXAMPLE, "-c", "mode", *survey_args),
                  "no column 'mode'", "columns are: respondent, transport")


def test_category_outside_the_declared_set_names_the_line(tmp_path, survey_args):
    data = tmp_path / "r.csv"
    data.write_text("transport\ncar\nbus\nplane\ncar\n")
    fails_cleanly(run("estimate", data, "-c", "transport", *survey_args), "r.csv, line 4", "'plane'")


def test_non_numeric_and_nan_values_name_the_line(tmp_path):
    data = tmp_path / "r.csv"
    args = ["-m", "laplace", "-e", "1", "--categories", "a,b", "-c", "x", "-c", "y"]
    data.write_text("x,y\n0.1,0.2\n0.3,abc\n")
    fails_cleanly(run("estimate", data, *args), "line 3", "'abc'", "not a number")
    data.write_text("x,y\n0.1,0.2\n0.3,0.1\nnan,1\n")
    fails_cleanly(run("estimate", data, *args), "line 4", "NaN")


@pytest.mark.parametrize("epsilon", ["0", "-1"])
def test_epsilon_must_be_positive(survey_args, epsilon):
    args = list(survey_args)
    args[args.index("--epsilon") + 1] = epsilon
    fails_cleanly(run("estimate", EXAMPLE, "-c", "transport", *args), "epsilon must be a finite number > 0")


def test_report_file_whose_width_does_not_match_the_mechanism(tmp_path):
    data = tmp_path / "r.csv"
    data.write_text("a,b,c\n1,0,0\n0,1,0\n")
    fails_cleanly(run("estimate", data, "-m", "unary-randomized-response", "-e", "1", "--categories", "a,b",
                      "-c", "a", "-c", "b", "-c", "c"), "reports have 2 column(s)", "but 3 were given")
    nc = tmp_path / "bad.nc"
    mech = ldpest.mechanism("laplace", epsilon=1.0, categories=["a", "b", "c"])
    reports = mech.privatize(["a", "b"], rng=1)
    tampered = reports.data.isel(category=slice(0, 2))
    tampered.to_netcdf(nc)
    fails_cleanly(run("estimate", nc), "width 2 but mechanism 'laplace' has 3 categories")


def test_unknown_mechanism_lists_the_installed_ones():
    fails_cleanly(run("estimate", EXAMPLE, "-c", "transport", "-m", "warner", "-e", "1"),
                  "unknown mechanism 'warner'", "randomized-response")


def test_failed_run_leaves_no_file_and_keeps_a_good_one(tmp_path, survey_args):
    data = tmp_path / "r.csv"
    data.write_text("transport\n" + "car\n" * 5000 + "plane\n")
    out = tmp_path / "result.nc"
    fails_cleanly(run("estimate", data, "-c", "transport", *survey_args, "-o", out, "--block-bytes", "1024"),
                  "line 5002")
    assert not out.exists() and not list(tmp_path.glob(".result.nc.*"))
    assert run("estimate", EXAMPLE, "-c", "transport", *survey_args, "-o", out).exit_code == 0
    good = out.read_bytes()
    fails_cleanly(run("estimate", data, "-c", "transport", *survey_args, "-o", out))
    assert out.read_bytes() == good


def test_unknown_output_format_is_refused_before_any_work(survey_args, tmp_path):
    fails_cleanly(run("estimate", EXAMPLE, "-c", "transport", *survey_args, "-o", tmp_path / "r.xlsx"),
                  "unknown output format .xlsx")


# --- as a subprocess -----------------------------------------------------------
def test_subprocess_success_and_clean_failure(tmp_path, survey_args):
    env = {**os.environ, "COLUMNS": "200"}
    ok = subprocess.run([LDPEST, "estimate", str(EXAMPLE), "-c", "transport", *survey_args,
                         "-o", str(tmp_path / "r.nc")], capture_output=True, text=True, env=env)
    assert ok.returncode == 0 and "walk" in ok.stdout and (tmp_path / "r.nc").exists()
    bad = subprocess.run([LDPEST, "estimate", str(EXAMPLE), "-c", "nope", *survey_args],
                         capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip().splitlines() == [
        f"ldpest: error: {EXAMPLE}: no column 'nope'; columns are: respondent, transport"]
    debug = subprocess.run([LDPEST, "--debug", "estimate", str(EXAMPLE), "-c", "nope", *survey_args],
                           capture_output=True, text=True, env=env)
    assert debug.returncode != 0 and "Traceback" in debug.stderr


def test_usage_errors_exit_2(tmp_path):
    bad = subprocess.run([LDPEST, "estimate"], capture_output=True, text=True)
    assert bad.returncode == 2


def test_progress_reports_increasing_positions_up_to_the_file_size(tmp_path):
    from ldpest.engine import pipeline

    data = tmp_path / "r.csv"
    data.write_text("x\n" + "a\nb\n" * 20000)
    positions = []
    mech = ldpest.mechanism("randomized-response", epsilon=1.0, categories=["a", "b"])
    result = pipeline.estimate_path(data, mechanism=mech, columns=["x"], block_bytes=4096, progress=positions.append)
    assert result.attrs["n"] == 40000
    assert len(positions) > 5 and positions == sorted(positions) and positions[-1] == data.stat().st_size


def test_outputs_get_the_usual_permissions(tmp_path, survey_args):
    import stat

    out = tmp_path / "result.nc"
    assert run("estimate", EXAMPLE, "-c", "transport", *survey_args, "-o", out).exit_code == 0
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~mask


def test_plotting_a_report_file_says_what_to_do(tmp_path):
    mech = ldpest.mechanism("laplace", epsilon=1.0, categories=["a", "b"])
    mech.privatize(["a", "b"], rng=1).to_netcdf(tmp_path / "r.nc")
    fails_cleanly(run("plot", tmp_path / "r.nc", "-o", tmp_path / "p.png"), "report file, not a result")
    assert not (tmp_path / "p.png").exists()


def test_warnings_are_one_line(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("x\n0.5\n1.5\n0.2\n")
    result = run("estimate", data, "--raw", "-c", "x", "-m", "laplace-histogram", "-e", "1", "-p", "low=[0]",
                 "-p", "high=[1]", "-p", "bins=2", "--seed", "1")
    assert result.exit_code == 0
    assert result.stderr.strip() == "ldpest: warning: 1 of 3 points lie outside every cell; their reports carry " \
                                    "pure noise (the estimate is of the mass inside the partition)"


@pytest.mark.parametrize("name", [info.name for info in ldpest.plugins() if info.kind in ("mechanism", "estimator")])
def test_plugins_name_gives_every_parameter_a_default_and_a_meaning(name):
    """Issue 22: `ldpest plugins NAME` shows each parameter's default (or that it is required) and what
    it means; every built-in parameter is described."""
    result = run("plugins", name, "--json")
    assert result.exit_code == 0, result.output
    parameters = json.loads(result.stdout)["parameters"]
    assert all(row["meaning"] for row in parameters), [row["name"] for row in parameters if not row["meaning"]]
    shown = run("plugins", name).stdout
    for row in parameters:
        assert f"{row['name']}" in shown and row["meaning"] in shown
        assert ("(required)" if row["required"] else "(") in shown


def test_the_summary_line_says_which_projection_auto_chose(survey_args):
    result = run("estimate", EXAMPLE, "--column", "transport", *survey_args)
    assert result.exit_code == 0, result.output
    head = result.stdout.splitlines()[0]
    chosen = head.split("projection=")[1].split(" ")[0].rstrip(";")
    assert chosen in ("simplex", "positive", "shrink", "mle"), head
    assert "(chosen by auto: lowest estimated risk)" in head, head
    explicit = run("estimate", EXAMPLE, "--column", "transport", *survey_args, "--projection", "simplex")
    head = explicit.stdout.splitlines()[0]
    assert "projection=simplex;" in head and "chosen by auto" not in head, head
