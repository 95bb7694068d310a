"""The command line never misleads and never loses a file (issue 12, first part).

Each bad-input test checks the message, the exit code and that no existing file changed.
"""

from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from test_cli import fails_cleanly  # noqa: F401  (also imported from here by other test modules)
from typer.testing import CliRunner

from ldpest.cli import app

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def snapshot(folder: Path) -> dict:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file()}


@pytest.fixture
def answers(tmp_path):
    path = tmp_path / "answers.csv"
    values = np.random.default_rng(0).choice(["yes", "no"], 3000, p=[0.2, 0.8])
    path.write_text("answer\n" + "\n".join(values) + "\n")
    return path


def privatize(answers, out, *extra):
    made = run("privatize", answers, "-c", "answer", "-m", "randomized-response", "-e", "1",
               "--categories", "yes,no", "-o", out, *extra)
    assert made.exit_code == 0, made.output
    return made


@pytest.mark.parametrize("options", [["-e", "3", "--categories", "yes,no"], ["-e", "1", "--categories", "no,yes"]])
def test_csv_reports_with_a_spec_refuse_other_options(answers, tmp_path, options):
    reports = tmp_path / "reports.csv"
    privatize(answers, reports)
    before = snapshot(tmp_path)
    result = run("estimate", reports, "-m", "randomized-response", *options, "-o", tmp_path / "result.nc")
    fails_cleanly(result, "carries its own spec", "differs from the options")
    assert snapshot(tmp_path) == before
    same = run("estimate", reports, "-m", "randomized-response", "-e", "1", "--categories", "yes,no")
    assert same.exit_code == 0, same.output


@pytest.mark.parametrize("command", [
    lambda d: ["privatize", d / "answers.csv", "-c", "answer", "-m", "randomized-response", "-e", "1",
               "--categories", "yes,no", "-o", d / "answers.csv"],
    lambda d: ["estimate", d / "reports.nc", "-o", d / "reports.nc"],
    lambda d: ["estimate", d / "reports.csv", "-o", d / "sub" / ".." / "reports.csv"],
])
def test_an_output_that_is_an_input_is_refused(answers, tmp_path, command):
    privatize(answers, tmp_path / "reports.nc")
    privatize(answers, tmp_path / "reports.csv")
    (tmp_path / "sub").mkdir()
    before = snapshot(tmp_path)
    fails_cleanly(run(*command(tmp_path)), "is also the input", "choose another output file")
    assert snapshot(tmp_path) == before


def test_a_bad_level_is_refused_before_anything_is_written(answers, tmp_path):
    privatize(answers, tmp_path / "reports.nc")
    assert run("estimate", tmp_path / "reports.nc", "-o", tmp_path / "result.nc").exit_code == 0
    before = snapshot(tmp_path)
    result = run("estimate", tmp_path / "reports.nc", "--level", "1.5", "-o", tmp_path / "result.nc")
    fails_cleanly(result, "--level must be between 0 and 1")
    assert "wrote" not in result.stderr and snapshot(tmp_path) == before
    fails_cleanly(run("plot", tmp_path / "result.nc", "--level", "0", "-o", tmp_path / "p.png"), "--level")
    assert snapshot(tmp_path) == before


def test_simulate_checks_its_picture_before_the_study(tmp_path):
    study = tmp_path / "study.nc"
    args = ["simulate", "-m", "randomized-response", "--categories", "a,b", "-e", "1", "--n", "100",
            "--reps", "3", "-o", study]
    assert run(*args).exit_code == 0
    before = snapshot(tmp_path)
    fails_cleanly(run(*args, "--plot", tmp_path / "x.svg"), "x.svg", ".png or .pdf")
    assert snapshot(tmp_path) == before


def test_seeded_reports_warn_when_made_and_when_estimated(answers, tmp_path):
    for suffix in (".csv", ".nc"):
        out = tmp_path / f"seeded{suffix}"
        made = privatize(answers, out, "--seed", "4")
        assert "anyone who knows the seed can recover every true answer" in made.stderr
        estimated = run("estimate", out)
        assert estimated.exit_code == 0 and "made with a seeded generator" in estimated.stderr
    assert (tmp_path / "seeded.csv").read_text().splitlines()[1] == "#ldpest-rng numpy-seeded"
    assert xr.open_dataarray(tmp_path / "seeded.nc").attrs["rng"] == "numpy-seeded"

    secure = tmp_path / "secure.csv"
    made = privatize(answers, secure)
    assert "warning" not in made.stderr
    assert secure.read_text().splitlines()[1] == "#ldpest-rng secure"
    assert "seeded" not in run("estimate", secure).stderr


def test_a_wrong_epsilon_is_reported_as_inconsistent(tmp_path):
    """Reports made at epsilon 2.197 (OpenDP's default) and estimated as epsilon 0.5."""
    import ldpest

    mech = ldpest.mechanism("randomized-response", epsilon=2.197, categories=["yes", "no"])
    reports = mech.privatize(["yes"] * 1800 + ["no"] * 200, rng=np.random.default_rng(1)).labels()
    path = tmp_path / "collected.csv"
    path.write_text("answer\n" + "\n".join(reports) + "\n")
    result = run("estimate", path, "-c", "answer", "-m", "randomized-response", "-e", "0.5", "--categories", "yes,no")
    assert result.exit_code == 4  # issue 26: scripts can tell (tests/cli/test_misreads.py)
    assert "inconsistent with every distribution" in result.stderr and "standard errors" in result.stderr
    assert "epsilon = 0.5" in result.stderr
    right = run("estimate", path, "-c", "answer", "-m", "randomized-response", "-e", "2.197", "--categories", "yes,no")
    assert "warning" not in right.stderr


def test_an_uninformative_estimate_says_so(tmp_path):
    path = tmp_path / "few.csv"
    path.write_text("answer\n" + "\n".join(["a", "b", "c", "d"] * 25) + "\n")
    result = run("estimate", path, "-c", "answer", "-m", "randomized-response", "-e", "0.5", "--categories", "a,b,c,d")
    assert result.exit_code == 0 and "uninformative" in result.stderr and "ldpest plan" in result.stderr


# --- user mistakes are user errors, with the way out ---------------------------------------------
@pytest.mark.parametrize("args,fragments", [
    (["-p", "binz=5", "-m", "laplace-histogram", "-p", "low=[0]", "-p", "high=[1]"],
     ["has no parameter 'binz'", "did you mean 'bins'?", "its parameters are: epsilon, low, high, bins"]),
    (["-m", "laplace-histogram", "-p", "low=[0]", "-p", "high=[1]", "-p", "bins=4", "--estimator-param",
      "projecton=none"], ["estimator 'histogram-cdf' has no parameter 'projecton'", "did you mean 'projection'?"]),
    (["-m", "linf-sampling", "-p", "basis=\"walsh\""], ["needs k"]),
])
def test_typos_and_missing_parameters_are_named(tmp_path, args, fragments):
    data = tmp_path / "x.csv"
    data.write_text("x\n" + "\n".join(str(v) for v in np.linspace(0, 1, 50)) + "\n")
    result = run("estimate", data, "--raw", "-c", "x", "-e", "1", "--seed", "1", *args)
    fails_cleanly(result, *fragments)


def test_python_api_names_bad_parameters_too():
    import ldpest

    with pytest.raises(ldpest.ParameterError, match="has no parameter 'binz'.*did you mean 'bins'"):
        ldpest.mechanism("laplace-histogram", epsilon=1, low=[0], high=[1], binz=5)
    with pytest.raises(ldpest.ParameterError, match="randomized-response: give epsilon or keep"):
        ldpest.mechanism("randomized-response", categories=["a", "b"])
    with pytest.raises(ldpest.ParameterError, match="needs basis, k"):
        ldpest.mechanism("linf-sampling", epsilon=1.0)


def test_debug_after_the_command_and_version(tmp_path):
    import subprocess
    import sys

    ldpest_cli = str(Path(sys.executable).parent / "ldpest")
    args = [ldpest_cli, "estimate", str(tmp_path / "nope.csv"), "-m", "randomized-response", "-e", "1",
            "--categories", "a,b", "-c", "x"]
    plain = subprocess.run(args, capture_output=True, text=True)
    debug = subprocess.run(args + ["--debug"], capture_output=True, text=True)
    assert plain.returncode == 2 and "Traceback" not in plain.stderr
    assert "Traceback" in debug.stderr and "no such file" in debug.stderr
    version = subprocess.run([ldpest_cli, "--version"], capture_output=True, text=True)
    import ldpest

    assert version.returncode == 0 and version.stdout.strip() == f"ldpest {ldpest.__version__}"


@pytest.mark.parametrize("name", ["laplace-histogram", "linf-sampling", "laplace-series", "randomized-response",
                                  "local-hashing"])
def test_plugins_name_shows_parameters_and_an_example_that_runs(name, tmp_path, monkeypatch):
    import json
    import shlex

    monkeypatch.chdir(tmp_path)
    shown = run("plugins", name, "--json")
    assert shown.exit_code == 0
    info = json.loads(shown.stdout)
    assert "epsilon" in info["required"] + info["optional"] and info["summary"] and " -e 1 " in info["example"]
    numeric = info["example"].count("--categories") == 0
    (tmp_path / "data.csv").write_text("COLUMN\n" + "\n".join(
        [str(v) for v in np.linspace(0, 1, 40)] if numeric else ["a", "b", "c"] * 10) + "\n")
    args = shlex.split(info["example"])[1:]  # drop "ldpest"
    made = run(*args, "--seed", "1")
    assert made.exit_code == 0, (info["example"], made.output)
    text = run("plugins", name)
    assert f"example:  {info['example']}" in text.stdout


def test_plugins_unknown_name_lists_the_known_ones():
    fails_cleanly(run("plugins", "laplace-histogramm"), "no plugin named 'laplace-histogramm'", "laplace-histogram")


def test_more_user_mistakes_are_user_errors(tmp_path):
    study = ["simulate", "-m", "randomized-response", "--categories", "a,b", "-e", "1", "--reps", "2",
             "-o", tmp_path / "s.nc"]
    fails_cleanly(run(*study, "--n", "1e30"), "--n must be at most 10^18")
    fails_cleanly(run(*study, "--n", "100", "--truth", "beta(2,2)"), "--truth describes a density", "--theta")
    not_a_result = tmp_path / "j.json"
    not_a_result.write_text('{"a": 1}')
    fails_cleanly(run("plot", not_a_result, "-o", tmp_path / "p.png"), "not an ldpest result")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j.json"]


def test_raw_auto_sizes_are_tuned_for_the_rows_of_the_file(tmp_path):
    import json

    import ldpest

    data = tmp_path / "points.csv"
    rng = np.random.default_rng(0)
    data.write_text("a,b\n" + "\n".join(f"{x},{y}" for x, y in rng.uniform(size=(5000, 2)) * [5.5, 20000]) + "\n")
    result = run("estimate", data, "--raw", "-c", "a", "-c", "b", "-m", "laplace-histogram", "-e", "1",
                 "-p", "low=[0,0]", "-p", "high=[5.5,20000]", "-p", "bins=\"auto\"", "--seed", "1", "--json")
    assert result.exit_code == 0, result.output
    spec = json.loads(json.loads(result.stdout)["attrs"]["mechanism_spec"])
    assert spec["expected_n"] == 5000 and spec["bins"] == "auto"
    expected = ldpest.mechanism("laplace-histogram", epsilon=1.0, low=[0, 0], high=[1, 1], bins="auto", expected_n=5000)
    assert ldpest.mechanism_from_spec(spec).partition.shape == expected.partition.shape


def test_start_up_loads_no_heavy_library():
    """`import ldpest` and `ldpest --help` do not import xarray, pandas, scipy or dask (the times are in
    bench/bench_startup.py); the names still resolve on first use."""
    import subprocess
    import sys

    probe = ("import sys, ldpest; "
             "print([m for m in ('xarray', 'pandas', 'scipy', 'dask', 'numpy') if m in sys.modules]);"
             " ldpest.Reports; ldpest.io.tables.SPEC_PREFIX; print('xarray' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["[]", "True"], out
    help_probe = ("import sys; sys.argv = ['ldpest', '--help']\nimport ldpest.cli\ntry:\n    ldpest.cli.main()\n"
                  "except SystemExit:\n    pass\nprint([m for m in ('xarray', 'pandas', 'scipy', 'dask', 'numpy') "
                  "if m in sys.modules])")
    printed = subprocess.run([sys.executable, "-c", help_probe], capture_output=True, text=True, check=True).stdout
    assert printed.strip().splitlines()[-1] == "[]"


def test_a_dask_worker_reads_and_reduces_a_part_without_scipy(tmp_path):
    """Every fresh process (a CLI call, a dask worker of the processes scheduler) loads all plugins
    to build the registry, then reads and reduces parts: none of it imports scipy (0.5 s of the
    1.0 s start measured in session 25), which only the finalising estimate needs."""
    import subprocess
    import sys

    import ldpest

    mechanism = ldpest.mechanism("randomized-response", epsilon=1.0, categories=["a", "b", "c"])
    mechanism.privatize(["a", "b", "c", "a"] * 50, rng=1).to_netcdf(tmp_path / "reports.nc")
    probe = ("import sys, ldpest\n"
             "from ldpest.engine.api import _resolve\n"
             "from ldpest.engine.mapreduce import _aggregate_part\n"
             "from ldpest.contract.registry import get_registry\n"
             "assert len(get_registry().names('mechanism')) > 20\n"
             f"source = ldpest.open_reports({str(tmp_path / 'reports.nc')!r})\n"
             "stats = _aggregate_part(source, 0, _resolve(None, source.mechanism).spec_json)\n"
             "print(int(stats.n), sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["200", "[]"], out


# --- pictures --------------------------------------------------------------------------------
def _histogram(epsilon=1.0, dims=1, names=None):
    import ldpest

    params = {"low": [0] * dims, "high": [1] * dims, "bins": [5, 3][:dims] if dims == 2 else 5}
    if names:
        params["names"] = names
    mech = ldpest.mechanism("laplace-histogram", epsilon=epsilon, **params)
    data = np.random.default_rng(0).beta(2, 5, size=(3000, dims) if dims == 2 else 3000)
    return ldpest.estimate(mech.privatize(data, rng=np.random.default_rng(1)))


def test_a_1d_histogram_is_drawn_over_its_cell_edges_with_labelled_band_and_lines():
    from ldpest.plotting import draw_result

    result = _histogram()
    fig = draw_result(result)
    ax = fig.axes[0]
    xmin, xmax = ax.dataLim.x0, ax.dataLim.x1
    edges = result[result["density"].dims[0] + "_bounds"].values
    assert xmin == pytest.approx(edges[0, 0]) and xmax == pytest.approx(edges[-1, 1])  # first and last cell whole
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("projection" in t for t in labels) and "unprojected" in labels and any("interval" in t for t in labels)


def test_a_2d_heat_map_puts_the_first_column_on_x_and_shows_its_uncertainty():
    from ldpest.plotting import draw_result

    result = _histogram(dims=2, names=["age", "income"])
    fig = draw_result(result)
    estimate_axes = fig.axes[0]
    assert estimate_axes.get_xlabel() == "age" and estimate_axes.get_ylabel() == "income"
    assert any("standard error" in (a.get_title() + a.get_ylabel()) for a in fig.axes[1:])
    mesh = estimate_axes.collections[0]
    assert mesh.get_array().shape == (3, 5)  # rows: income cells, columns: age cells


def test_study_plot_error_bars_say_what_they_are(tmp_path):
    result = run("simulate", "-m", "randomized-response", "--categories", "a,b", "-e", "1", "--n", "100,1000",
                 "--reps", "3", "-o", tmp_path / "s.nc", "--plot", tmp_path / "s.png")
    assert result.exit_code == 0 and (tmp_path / "s.png").exists()
    import ldpest
    from ldpest.plotting import plot_study

    study = ldpest.io.result_files.read_result(tmp_path / "s.nc")
    import matplotlib.pyplot as plt

    plot_study(study, tmp_path / "again.png")
    assert (tmp_path / "again.png").read_bytes()[:4] == b"\x89PNG"
    plt.close("all")


@pytest.mark.parametrize("command", ["plugins", "privatize", "estimate", "simulate", "plan", "plot"])
def test_every_command_has_an_example_and_every_option_a_help_text(command):
    from ldpest.cli import app as cli_app

    result = run(command, "--help")
    assert result.exit_code == 0 and "Example" in result.stdout
    import typer.main

    click_command = typer.main.get_command(cli_app).commands[command]
    for parameter in click_command.params:
        if parameter.param_type_name == "option" and not parameter.hidden:
            assert parameter.help, f"{command} {parameter.opts} has no help text"
    if command in ("privatize", "estimate", "simulate"):
        assert "randomized-response" in result.stdout and "local-hashing" in result.stdout


def test_readme_commands_paste_into_zsh():
    """Shell words with [ ] or { } glob in zsh ("no matches found") unless quoted."""
    import re

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    commands = [line for block in re.findall(r"```bash\n(.*?)```", readme, flags=re.S) for line in block.splitlines()]
    for line in commands:
        code = line.split("#")[0]
        unquoted = re.sub(r"'[^']*'|\"[^\"]*\"", "", code)
        assert not re.search(r"[\[\]{}]", unquoted), line


# --- bounded memory: privatise streams to its output, --raw blocks are bounded by the reports' size ---
def test_privatize_streams_block_by_block_to_csv_and_netcdf(tmp_path, monkeypatch):
    import ldpest
    from ldpest.engine import pipeline

    data = tmp_path / "points.csv"
    data.write_text("x\n" + "\n".join(f"{v:.6f}" for v in np.random.default_rng(0).uniform(size=3000)) + "\n")
    mech = ldpest.mechanism("laplace-histogram", epsilon=1.0, low=[0], high=[1], bins=20)
    monkeypatch.setattr(pipeline, "RAW_BLOCK_BYTES", 20 * 8 * 250)  # 250 reports per block
    written = []
    for suffix in (".csv", ".nc"):
        out = tmp_path / f"r{suffix}"
        n = pipeline.privatize_path(data, out, mechanism=mech, columns=["x"], rng=7, block_bytes=4096)
        assert n == 3000
        if suffix == ".nc":
            reports = ldpest.read_reports(out)
        else:
            with pytest.warns(UserWarning, match="seeded generator"):  # made with rng=7
                reports = ldpest.open_reports(out).load()
        assert reports.spec == mech.spec and reports.n == 3000
        written.append(reports.values)
    np.testing.assert_array_equal(written[0], written[1])  # same seed, same blocks: the same reports
    assert ldpest.read_reports(tmp_path / "r.nc").data.attrs["rng"] == "numpy-seeded"


def test_raw_blocks_are_bounded_by_the_size_of_their_reports(tmp_path, monkeypatch):
    import tracemalloc

    from ldpest.engine import pipeline

    data = tmp_path / "points.csv"
    points = np.random.default_rng(0).uniform(size=(40000, 2))
    data.write_text("a,b\n" + "\n".join(f"{x:.4f},{y:.4f}" for x, y in points) + "\n")
    args = ["estimate", data, "--raw", "-c", "a", "-c", "b", "-m", "laplace-histogram", "-e", "1",
            "-p", "low=[0,0]", "-p", "high=[1,1]", "-p", "bins=40", "--seed", "1"]
    monkeypatch.setattr(pipeline, "RAW_BLOCK_BYTES", 1 << 23)  # 8 MB of reports per block
    tracemalloc.start()
    result = run(*args)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert result.exit_code == 0, result.output
    all_reports = 40000 * 1600 * 8  # 512 MB if privatised at once
    assert peak < all_reports / 8, peak


@pytest.mark.parametrize("delay", [0.3, 0.6])
def test_ctrl_c_ends_with_one_line_and_no_partial_file(tmp_path, delay):
    import signal
    import subprocess
    import sys
    import time

    data = tmp_path / "big.csv"
    data.write_text("x\n" + "\n".join(str(v) for v in np.random.default_rng(0).integers(0, 100, 400_000)) + "\n")
    out = tmp_path / "reports.nc"
    categories = ",".join(str(i) for i in range(100))
    process = subprocess.Popen([str(Path(sys.executable).parent / "ldpest"), "privatize", str(data), "-c", "x", "-m",
                                "laplace", "-e", "1", "--categories", categories, "-o", str(out)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    if process.poll() is not None:  # only a command that really ended first may skip (it takes about 3 s)
        pytest.skip("the command finished before the interrupt")
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate()
    assert process.returncode == 130 and "Traceback" not in stderr, (process.returncode, stderr)
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["big.csv"]


def test_ctrl_c_inside_a_compiled_import_is_still_an_interruption(monkeypatch):
    """Ctrl-C that lands while a compiled module initialises reaches Python as that module's
    ImportError ("initialization failed"); it must end as an interruption (130), not an internal error."""
    import typer

    from ldpest import _console
    from ldpest.cli import handles_errors
    from ldpest.util import interrupt

    def lazy_import():
        raise ImportError("initialization failed")

    command = handles_errors(lazy_import)
    monkeypatch.setattr(interrupt, "_sigint_received", False)
    with pytest.raises(typer.Exit) as ended:
        command()
    assert ended.value.exit_code == 1  # without Ctrl-C it is a bug and says so
    monkeypatch.setattr(interrupt, "_sigint_received", True)
    with pytest.raises(typer.Exit) as ended:
        command()
    assert ended.value.exit_code == 130

    monkeypatch.setattr("ldpest.cli.main", lazy_import)  # the console script imports the CLI after SIGINT
    monkeypatch.setattr(_console, "record_sigint", lambda: None)
    with pytest.raises(SystemExit) as ended:
        _console.main()
    assert ended.value.code == 130
    monkeypatch.setattr(interrupt, "_sigint_received", False)
    with pytest.raises(ImportError):
        _console.main()


def test_ctrl_c_that_python_could_not_raise_still_ends_the_command_with_no_file(monkeypatch, answers, tmp_path):
    """Ctrl-C inside a callback (importlib's module lock, seen in CI with the test above) is printed by Python
    as "Exception ignored" and dropped; the handler remembers it, and the command ends as interrupted (130)
    before its output is moved into place, and also where it has no output file."""
    from ldpest.util import interrupt

    out = tmp_path / "reports.nc"
    monkeypatch.setattr(interrupt, "_sigint_received", True)  # as _on_sigint leaves it when its raise is dropped
    made = run("privatize", answers, "-c", "answer", "-m", "randomized-response", "-e", "1",
               "--categories", "yes,no", "-o", out)
    assert made.exit_code == 130 and "interrupted" in made.output and "Traceback" not in made.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answers.csv"]  # no output, no temporary, no lock
    monkeypatch.setattr(interrupt, "_sigint_received", False)
    privatize(answers, out)
    monkeypatch.setattr(interrupt, "_sigint_received", True)
    shown = run("estimate", out)
    assert shown.exit_code == 130 and "interrupted" in shown.output


def test_ctrl_c_while_typer_parses_still_says_so_once(monkeypatch, capsys):
    """typer turns a KeyboardInterrupt outside ldpest's commands (while it parses) into exit 130 with no word."""
    import typer

    import ldpest.cli as cli

    def interrupted(**_):
        raise SystemExit(130)  # what typer raises there (click.exceptions.Exit(130))

    monkeypatch.setattr(cli, "app", interrupted)
    with pytest.raises(SystemExit) as ended:
        cli.main(["estimate"])
    assert ended.value.code == 130 and capsys.readouterr().err == "ldpest: interrupted\n"
    def said_by_the_command(**_):
        try:
            cli._fail("interrupted", code=130)
        except typer.Exit as exit_:  # as typer's standalone mode ends it
            raise SystemExit(exit_.exit_code) from None

    monkeypatch.setattr(cli, "app", said_by_the_command)
    with pytest.raises(SystemExit) as ended:
        cli.main(["estimate"])
    assert ended.value.code == 130 and capsys.readouterr().err == "ldpest: error: interrupted\n"  # once


def test_a_dropped_ctrl_c_is_not_printed_and_other_dropped_errors_are(capsys):
    from ldpest.util.interrupt import _quiet_about_interrupts

    seen = []

    class Unraisable:
        def __init__(self, exc_type):
            self.exc_type = exc_type

    hook = _quiet_about_interrupts(seen.append)
    hook(Unraisable(KeyboardInterrupt))
    assert seen == []
    other = Unraisable(ValueError)
    hook(other)
    assert seen == [other]


def test_an_error_raised_while_handling_ctrl_c_is_an_interruption(monkeypatch):
    from ldpest.util import interrupt

    monkeypatch.setattr(interrupt, "_sigint_received", False)
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise ImportError("initialization failed")  # noqa: B904
    except ImportError as exc:
        assert interrupt.was_interrupted(exc)
        assert not interrupt.was_interrupted(ImportError("initialization failed"))
