"""The ``ldpest`` command line (typer).  Thin: the work is in :mod:`ldpest.engine.pipeline`.

Data go to stdout, messages to stderr.  Errors print one line
``ldpest: error: ...`` and exit with code 2 (no traceback unless --debug).
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import sys
import warnings
from pathlib import Path

# plain click help: rich costs 0.1 s at every start (TYPER_USE_RICH=1 restores it)
os.environ.setdefault("TYPER_USE_RICH", "0")
import typer  # noqa: E402

from .util.errors import InconsistentEstimateWarning, LdpestError  # noqa: E402
from .util.interrupt import raise_if_interrupted, was_interrupted  # noqa: E402


class _Lazy:
    """A module imported on first use: `ldpest --help` does not load xarray, pandas or pyarrow."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attribute):
        import importlib

        return getattr(importlib.import_module(self._name), attribute)


result_files = _Lazy("ldpest.io.result_files")
pipeline = _Lazy("ldpest.engine.pipeline")
results = _Lazy("ldpest.contract.results")
registry = _Lazy("ldpest.contract.registry")

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Estimate probability vectors and densities from locally private reports.")
_state = {"debug": False, "said": False}  # said: an error line was written


def _print_version(value: bool):
    if value:
        from .util.version import __version__

        typer.echo(f"ldpest {__version__}")
        raise typer.Exit()


@app.callback()
def _options(debug: bool = typer.Option(False, "--debug", help="Show tracebacks on errors (also after the command)."),
             version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                          help="Print the version and exit.")):
    _state["debug"] = debug


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    typer.echo(f"ldpest: warning: {message}", err=True)


def _fail(message: str, code: int = 2):
    typer.echo(f"ldpest: error: {message}", err=True)
    _state["said"] = True
    raise typer.Exit(code)


def handles_errors(command):
    """One clear line on stderr and exit code 2 for every foreseeable error."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        if _state["debug"]:
            return command(*args, **kwargs)
        try:
            with warnings.catch_warnings():  # restores the host's warning display afterwards
                warnings.simplefilter("default")  # once per command, as one line, whatever the host's filters
                warnings.showwarning = _one_line_warning
                result = command(*args, **kwargs)
            raise_if_interrupted()  # Ctrl-C that landed where Python could not raise it (ldpest.util.interrupt)
            return result
        except typer.Exit:
            raise
        except KeyboardInterrupt:  # outputs are atomic: nothing partial is left behind
            _fail("interrupted", code=130)
        except LdpestError as exc:
            message = str(exc)
            for spool, name in _spooled.items():  # `-`: the temporary file is standard input to the user
                message = message.replace(spool, name)
            _fail(message)
        except (OSError, MemoryError) as exc:
            _fail(f"{type(exc).__name__}: {exc}")
        except Exception as exc:  # a bug: still no traceback (it may hold private values)
            if was_interrupted(exc):  # Ctrl-C inside a compiled module's import surfaces as its ImportError
                _fail("interrupted", code=130)
            _fail(f"internal error {type(exc).__name__}: {exc} (rerun with --debug for the traceback)", code=1)

    return wrapper


_spooled: dict[str, str] = {}


@contextlib.contextmanager
def _readable(path: Path):
    """``-``: standard input, spooled to a temporary CSV file (the reader seeks and reads twice).
    Errors name it "standard input"."""
    if str(path) != "-":
        yield path
        return
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="ldpest-stdin-") as folder:
        spool = Path(folder) / "stdin.csv"
        with spool.open("wb") as out:
            shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
        _spooled[str(spool)] = "standard input"  # kept: the error is reported after this block exits
        yield spool


@contextlib.contextmanager
def _writable(path: Path | None):
    """``-``: a temporary CSV file, copied to standard output only once it is complete (on an error
    nothing reaches standard output, as nothing reaches a file)."""
    if path is None or str(path) != "-":
        yield path
        return
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="ldpest-stdout-") as folder:
        spool = Path(folder) / "stdout.csv"
        yield spool
        with spool.open("rb") as source:
            shutil.copyfileobj(source, sys.stdout.buffer, 1 << 20)
        sys.stdout.buffer.flush()


def _table(path: Path) -> Path:
    """What ``path`` is read as: standard input is CSV."""
    return Path("stdin.csv") if str(path) == "-" else path


def _shown(path: Path) -> str:
    return "standard output" if str(path) == "-" else str(path)


@contextlib.contextmanager
def _progress(path: Path, enabled: bool):
    """A progress bar over the bytes of ``path`` when stderr is a terminal."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    with Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                  TimeRemainingColumn(), transient=True, console=None) as bar:
        task = bar.add_task(path.name, total=path.stat().st_size)
        yield lambda position: bar.update(task, completed=position)


def _delimiter(text: str) -> str:
    """``--delimiter``: one character; ``\\t`` (as typed in a shell) and ``tab`` mean a tab."""
    return "\t" if text in ("\\t", "tab", "TAB") else text


def _check_level(level: float) -> None:
    if not 0 < level < 1:
        _fail(f"--level must be between 0 and 1 (e.g. 0.95), got {level:g}")


def _check_picture(path: Path | None) -> None:
    if path is not None and path.suffix.lower() not in (".png", ".pdf"):
        _fail(f"{path}: draw pictures to .png or .pdf")


def _projection_choice(result) -> str:
    """`` (chosen by auto: ...)`` where ``projection="auto"`` chose the estimate."""
    rule = str(result.attrs.get("projection_rule", ""))
    return " (chosen by auto: lowest estimated risk)" if rule.startswith("auto:") else ""


def _summary(result, level: float) -> str:
    name = results.estimate_variable(result)
    table = result_files.result_table(result)  # the caller has added the intervals at this level
    shown = table.head(40)
    columns = [c for c in shown.columns if not c.endswith(("_lower", "_upper"))]
    text = shown[columns].to_string(index=False, float_format=lambda v: f"{v:.5g}")
    more = f"\n... ({len(table) - len(shown)} more rows)" if len(table) > len(shown) else ""
    units = result[name].attrs.get("units")
    covers = result["lower"].attrs.get("estimate", "unprojected")
    method = result["lower"].attrs.get("method", "")
    long_name = str(result[name].attrs.get("long_name", ""))
    subject = name + long_name[long_name.index(" of "):] if long_name.startswith(f"estimated {name} of ") else name
    head = (f"{subject}{f' [{units}]' if units and units != '1' else ''} by {result.attrs['estimator']} from "
            f"{result.attrs['mechanism']} (epsilon={result.attrs['epsilon']}, n={result.attrs['n']}, "
            f"projection={result.attrs['projection']}{_projection_choice(result)}; lower/upper: {level:.0%} {method} "
            f"interval of "
            f"{'the ' + name if covers == name else 'the ' + covers + ' estimate'})")
    if "weights" in result.attrs:
        head += (f"\ndesign-weighted: {result.attrs['weights']}; sum of weights {result.attrs['weight_sum']:.6g}, "
                 f"effective n {result.attrs['effective_n']:.6g}")
    return f"{head}\n{text}{more}"


MECHANISM_HELP = ("Mechanism: randomized-response, unary-randomized-response, laplace, local-hashing, "
                  "subset-selection, hadamard-response, auto (frequencies); laplace-histogram, oracle-histogram "
                  "(densities over cells; -p 'oracle=\"unary-randomized-response\"'); linf-sampling, "
                  "laplace-series (densities); or a plugin's (ldpest plugins NAME shows its parameters).")
EPSILON_HELP = "Privacy level epsilon > 0 (each report is epsilon-LDP)."
ESTIMATOR_HELP = ("Default: the mechanism's own. frequency; histogram-cdf, histogram-mean; series; or a plugin's.")
PROJECTION_HELP = ("frequency: auto (default: per result, the lowest estimated risk), simplex, positive (clip "
                   "and renormalise), shrink (toward uniform, then simplex), ibu (the iterative Bayesian update's "
                   "limit, on support counts), mle (maximum likelihood: randomized-response, hadamard-response), "
                   "none; histogram: positive (default), simplex, none; oracle-histogram reports also auto, shrink, "
                   "ibu, mle; "
                   "series: positive (default), none.")
PROGRESS_HELP = "A progress bar on a terminal."
ColumnOpt = typer.Option(None, "--column", "-c", help="Input column (repeat for several, in order).")
CATEGORIES_HELP = "Comma-separated labels, or @FILE with one label per line."
ParamOpt = typer.Option(None, "--param", "-p", help="Mechanism parameter key=value (value as JSON).")
HeaderOpt = typer.Option(True, "--header/--no-header",
                         help="CSV without a header row: its columns are named 1, 2, ... (-c 1).")
DelimiterOpt = typer.Option(",", "--delimiter", help="Field separator of a CSV file: one character, e.g. ';' "
                            "or '\\t' (or 'tab') for tab-separated files (default ',').")
CodesOpt = typer.Option("labels", "--codes",
                        help="How a category column names a category: labels (default), 0-based or 1-based "
                             "positions in --categories (pure-ldp and multi-freq-ldpy report 0-based).")


@app.command("plugins")
@handles_errors
def plugins_command(
    name: str | None = typer.Argument(None, help="A plugin's name: show its parameters and an example."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
):
    """List the registered mechanisms, estimators and bases, or describe one.

    \b
    Example:
      ldpest plugins laplace-histogram
    """
    if name is not None:
        _describe_plugin(name, as_json)
        return
    rows = [vars(info) for info in registry.plugins()]
    failures = [vars(f) for f in registry.plugin_errors()]
    if as_json:
        typer.echo(json.dumps({"plugins": rows, "failed": failures}, indent=1))
        return
    widths = {key: max(len(key), *(len(str(r[key])) for r in rows))
              for key in ("name", "kind", "family", "origin", "version")}
    typer.echo("  ".join(k.ljust(w) for k, w in widths.items()))
    for row in rows:
        typer.echo("  ".join(str(row[k]).ljust(w) for k, w in widths.items()))
    for failure in failures:
        typer.echo(f"failed to load {failure['plugin']} ({failure['origin']}): {failure['error']}", err=True)


def _describe_plugin(name: str, as_json: bool) -> None:
    """One registered plugin: its docstring's first paragraph, each parameter with its default and
    meaning, and an example."""
    import inspect

    info = next((i for i in registry.plugins() if i.name == name), None)
    if info is None:
        known = ", ".join(sorted(i.name for i in registry.plugins()))
        _fail(f"no plugin named {name!r}; registered: {known}")
    cls = registry.get_registry().get(info.kind, name)
    required, optional = registry.parameters_of(cls)
    summary = (inspect.getdoc(cls) or "").split("\n\n")[0].replace("\n", " ")
    if info.kind == "mechanism":
        options = " ".join(["-e 1" if p == "epsilon" else "--categories a,b,c" if p == "categories" else f"-p {p}=..."
                            for p in required + (["epsilon"] if "epsilon" in optional else [])
                            if p not in cls.example_params]
                           + [f"-p '{key}={json.dumps(value)}'" for key, value in cls.example_params.items()])
        example = f"ldpest privatize data.csv -c COLUMN -m {name} {options} -o reports.nc"
    elif info.kind == "estimator":
        example = f"ldpest estimate reports.nc --estimator {name}" + "".join(
            f" --estimator-param {p}=..." for p in required)
    elif info.kind == "basis":
        example = f"-p basis='\"{name}\"'   (a mechanism parameter of the series family)"
    else:
        example = f"ldpest simulate -m MECHANISM (of family {name}) -e 1 --n 1e3,1e5 -o study.nc"
    parameters = registry.parameter_table(cls)
    if as_json:
        typer.echo(json.dumps({**vars(info), "required": required, "optional": optional, "parameters": parameters,
                               "summary": summary, "example": example}, indent=1))
        return
    typer.echo(f"{name} ({info.kind}, family {info.family or '-'}, from {info.origin} {info.version})")
    if summary:
        typer.echo(f"  {summary}")
    typer.echo(f"  required: {', '.join(required) or 'none'}")
    typer.echo(f"  optional: {', '.join(optional) or 'none'}")
    if parameters:
        typer.echo("  parameters:")
        width = max(len(row["name"]) for row in parameters)
        for row in parameters:
            default = "required" if row["required"] else "optional" if row["default"] == "null" else \
                f"default {row['default']}"
            meaning = f": {row['meaning']}" if row["meaning"] else ""
            typer.echo(f"    {row['name'].ljust(width)}  ({default}){meaning}")
    typer.echo(f"  example:  {example}")


@app.command("privatize")
@handles_errors
def privatize_command(
    data: Path = typer.Argument(..., help="Raw data: CSV (with a header row, or --no-header) or Parquet; "
                                "- reads CSV from standard input."),
    output: Path = typer.Option(
        ..., "--output", "-o", help="Reports file: .nc, .csv (with its spec line) or .parquet (spec in its metadata); "
        "- writes CSV reports to standard output, once complete."),
    mechanism: str = typer.Option(..., "--mechanism", "-m", help=MECHANISM_HELP),
    epsilon: float | None = typer.Option(None, "--epsilon", "-e", help=EPSILON_HELP),
    categories: str | None = typer.Option(None, "--categories", help=CATEGORIES_HELP),
    column: list[str] | None = ColumnOpt,
    param: list[str] | None = ParamOpt,
    seed: int | None = typer.Option(None, "--seed", help="Seeded noise (simulations only; default: OS CSPRNG)."),
    header: bool = HeaderOpt,
    delimiter: str = DelimiterOpt,
    codes: str = CodesOpt,
    progress: bool = typer.Option(True, "--progress/--no-progress", help=PROGRESS_HELP),
    user_column: str | None = typer.Option(
        None, "--user-column", help="Column naming each record's user (for --ledger and --state)."),
    ledger: Path | None = typer.Option(
        None, "--ledger", help="Ledger file (JSON) of the epsilon each user spent: charged, and a user over "
        "--budget gets no report (exit status 3 if some were refused)."),
    budget: float | None = typer.Option(None, "--budget", help="The epsilon each user may spend per period."),
    per: str = typer.Option("day", "--per", help="The budget's period: day, week, month, year or all."),
    at: str | None = typer.Option(None, "--at", help="Time of this collection, ISO (default: now, UTC)."),
    state: Path | None = typer.Option(
        None, "--state", help="Client state file (per-user secrets): memoise the permanent responses of "
        "rappor, l-grr, l-osue or dbitflip, the same in every run."),
):
    """Privatise raw data locally (as each person's device would).

    \b
    Example:
      ldpest privatize answers.csv -c answer -m randomized-response -e 1 --categories 'yes,no' -o reports.csv
      ldpest privatize day.csv -c answer --user-column user -m l-grr -e 1 -p epsilon_inf=4 \\
        --categories 'yes,no' --state state.json --ledger ledger.json --budget 16 --per day -o reports.csv
    """
    if str(output) != "-":
        pipeline.refuse_overwriting(output, data)
    mech = pipeline.build_mechanism(mechanism, epsilon, categories, param, column)
    delimiter = _delimiter(delimiter)
    pipeline.check_csv_options(_table(data), header, codes, delimiter)
    if seed is not None:
        typer.echo("ldpest: warning: --seed makes the noise reproducible: anyone who knows the seed can recover "
                   "every true answer; use it for simulations only, never for real people's data", err=True)
    if mechanism == "auto":
        tuned = {k: v for k, v in mech.params.items() if k not in ("epsilon", "categories")}
        typer.echo(f"auto chose {mech.name} {json.dumps(tuned)} (smallest worst-case "
                   f"variance among the frequency oracles; `ldpest plan` compares them)", err=True)
    if user_column is None and (ledger is not None or state is not None):
        _fail("--ledger and --state need --user-column (the column naming each record's user)")
    if ledger is not None and budget is None:
        _fail("--ledger needs --budget (the epsilon each user may spend per period)")
    refused = None
    with _readable(data) as source, _writable(output) as target:
        if user_column is not None:
            n, charges = pipeline.privatize_accounted(
                source, target, mechanism=mech, columns=list(column or []), user_column=user_column, ledger=ledger,
                budget=budget, per=per, at=at, state=state, rng="secure" if seed is None else seed, header=header,
                codes=codes, delimiter=delimiter)
            refused = charges.message() if charges is not None and charges.refused else None
        else:
            with _progress(source, progress and str(data) != "-") as tick:
                n = pipeline.privatize_path(source, target, mechanism=mech, columns=list(column or []),
                                            rng="secure" if seed is None else seed, progress=tick, header=header,
                                            codes=codes, delimiter=delimiter)
    typer.echo(f"wrote {n} reports of {mech.name} (epsilon={mech.epsilon}) to {_shown(output)}", err=True)
    if refused is not None:  # after the reports are out: the others' reports are kept
        _fail(refused, code=3)


@app.command("estimate")
@handles_errors
def estimate_command(
    reports: Path = typer.Argument(
        ..., help="Reports: .nc, .zarr, .csv or .parquet (or raw data, CSV or Parquet, with --raw); - reads CSV "
        "from standard input."),
    column: list[str] | None = ColumnOpt,
    mechanism: str | None = typer.Option(None, "--mechanism", "-m",
                                            help="For CSV reports without a spec line, or --raw. " + MECHANISM_HELP),
    epsilon: float | None = typer.Option(None, "--epsilon", "-e", help=EPSILON_HELP),
    categories: str | None = typer.Option(None, "--categories", help=CATEGORIES_HELP),
    param: list[str] | None = ParamOpt,
    estimator: str | None = typer.Option(None, "--estimator", help=ESTIMATOR_HELP),
    projection: str | None = typer.Option(None, "--projection", help=PROJECTION_HELP),
    estimator_param: list[str] | None = typer.Option(None, "--estimator-param", help="Estimator key=value."),
    raw: bool = typer.Option(False, "--raw", help="Input is raw data: privatise it locally first (studies)."),
    seed: int | None = typer.Option(None, "--seed", help="Seed for --raw."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Result file: .nc, .csv, .json or .parquet; "
                                       "- prints the result as JSON on stdout (as --json)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON on stdout."),
    level: float = typer.Option(0.95, "--level", help="Confidence level of the summary's intervals."),
    header: bool = HeaderOpt,
    delimiter: str = DelimiterOpt,
    codes: str = CodesOpt,
    progress: bool = typer.Option(True, "--progress/--no-progress", help=PROGRESS_HELP),
    block_bytes: int | None = typer.Option(None, "--block-bytes", hidden=True, help="CSV block size (tests)."),
    scheduler: str | None = typer.Option(
        None, "--scheduler", help="Map-reduce on dask: a distributed scheduler address (tcp://host:8786) "
        "or threads, processes, synchronous."),
    weight_column: str | None = typer.Option(
        None, "--weight-column", help="Column of design (survey) weights, one per report: the Hajek frequency "
        "estimate with its linearization standard error (frequency oracles; CSV or Parquet reports)."),
    accept_inconsistent: bool = typer.Option(
        False, "--accept-inconsistent", help="Write an estimate that no distribution explains (wrong epsilon, "
        "categories or codes?) instead of exiting with status 4."),
):
    """Estimate from reports (NetCDF, Zarr, CSV or Parquet), streaming the file in chunks.

    Exit status: 0 done; 2 a clear error; 4 the reports are inconsistent with every distribution
    (nothing written unless --accept-inconsistent); 1 an internal error; 130 interrupted.

    \b
    Examples:
      ldpest estimate reports.csv -o result.csv
      ldpest estimate collected.csv -c answer -m randomized-response -e 1 --categories 'yes,no'
      ldpest estimate people.csv --raw -c age -m laplace-histogram -e 1 -p 'low=[18]' -p 'high=[90]' -p 'bins="auto"'
    """
    _check_level(level)
    if output is not None and str(output) == "-":
        output, as_json = None, True
    from_stdin = str(reports) == "-"
    with _readable(reports) as reports:  # standard input: a temporary CSV file from here on
        if not from_stdin:
            pipeline.refuse_overwriting(output, reports)
        delimiter = _delimiter(delimiter)
        pipeline.check_csv_options(reports, header, codes, delimiter)
        mech = None
        if mechanism is not None or raw:
            mech = pipeline.build_mechanism(mechanism, epsilon, categories, param, column,
                                            raw_data=reports if raw else None,
                                            header=header, delimiter=delimiter)
        elif epsilon is not None or categories is not None or param:
            _fail("--epsilon/--categories/--param describe a mechanism: give --mechanism too")
        if output is not None:
            result_files.check_result_format(output)
        if mechanism == "auto" and not raw:
            _fail("-m auto picks an oracle for data not yet privatised; for collected reports name the mechanism that "
                  f"made them (auto would now pick {mech.name!r}, which need not be the one the reports came from)")
        if weight_column is not None and (raw or scheduler is not None or estimator not in (None, "frequency")
                                          or estimator_param):
            _fail("--weight-column estimates frequencies from a table of reports in memory: not with --raw, "
                  "--scheduler, --estimator-param or another --estimator")
        with _progress(reports, progress and not from_stdin) as tick, warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if weight_column is not None:
                result = pipeline.estimate_weighted_path(
                    reports, weight_column, mechanism=mech, columns=list(column or []), projection=projection,
                    header=header, codes=codes, delimiter=delimiter)
            else:
                result = pipeline.estimate_path(
                    reports, mechanism=mech, columns=list(column or []), estimator_name=estimator,
                    projection=projection, estimator_params=estimator_param, raw=raw, rng=seed, progress=tick,
                    block_bytes=block_bytes, scheduler=scheduler, header=header, codes=codes, delimiter=delimiter,
                )
        inconsistent = None
        for caught_warning in caught:
            if issubclass(caught_warning.category, InconsistentEstimateWarning) and not accept_inconsistent:
                inconsistent = str(caught_warning.message)
            else:
                warnings.showwarning(caught_warning.message, caught_warning.category, caught_warning.filename,
                                     caught_warning.lineno)
        if inconsistent is not None:
            _fail(f"{inconsistent} Nothing written; --accept-inconsistent writes the estimate anyway", code=4)
        result = results.confidence_interval(result, level)  # lower, upper and the level go into every output
        if as_json:
            shown = json.dumps(result.to_dict(data="list"), default=result_files.json_default)
        else:
            shown = _summary(result, level)
        if output is not None:
            result_files.write_result(result, output)
            sidecar = f" and {result_files.metadata_path(output)}" if output.suffix.lower() == ".csv" else ""
            typer.echo(f"wrote {output}{sidecar}", err=True)
        typer.echo(shown)


@app.command("simulate")
@handles_errors
def simulate_command(
    mechanism: str = typer.Option(..., "--mechanism", "-m", help=MECHANISM_HELP),
    epsilon: str | None = typer.Option(None, "--epsilon", "-e", help="Comma-separated levels, e.g. 0.5,1,2."),
    keep: str | None = typer.Option(
        None, "--keep", help="Instead of --epsilon: comma-separated survey designs, the probabilities of reporting "
        "the truth (mechanisms that take keep: randomized-response, unary-randomized-response)."),
    n: str = typer.Option(..., "--n", help="Comma-separated sample sizes, e.g. 1e3,1e6,1e9."),
    reps: int = typer.Option(20, "--reps", help="Repetitions per (epsilon, n)."),
    categories: str | None = typer.Option(None, "--categories", help=CATEGORIES_HELP + " (frequency oracles)"),
    theta: str | None = typer.Option(None, "--theta", help="True frequencies (default: uniform)."),
    truth: list[str] | None = typer.Option(None, "--truth", help="True density, e.g. 'beta(2,2)' (one per dim)."),
    param: list[str] | None = ParamOpt,
    estimator: str | None = typer.Option(None, "--estimator", help=ESTIMATOR_HELP),
    estimator_param: list[str] | None = typer.Option(None, "--estimator-param", help="Estimator key=value."),
    seed: int = typer.Option(0, "--seed", help="Seed of the study's random numbers."),
    output: Path = typer.Option(..., "--output", "-o", help="Study result: .nc or .json."),
    plot: Path | None = typer.Option(None, "--plot", help="Also draw a log-log plot (.png or .pdf)."),
):
    """Error against n and epsilon for a mechanism/estimator pair (exact aggregate simulation where one exists).

    \b
    Example:
      ldpest simulate -m randomized-response --categories 'a,b,c' -e '0.5,1,2' --n '1e3,1e6' -o study.nc \
        --plot study.png
    """
    import numpy as np

    from .engine.simulate import Scenario, run_study
    from .plotting import plot_study

    if output.suffix.lower() not in (".nc", ".json"):
        _fail(f"{output}: write the study to .nc or .json")
    _check_picture(plot)
    params = pipeline.parse_params(param)
    if categories is not None:
        params["categories"] = pipeline.parse_list(categories)
    scenario = Scenario(mechanism, params, estimator, pipeline.parse_params(estimator_param),
                        pipeline.parse_numbers(theta, "--theta") if theta else (list(truth) if truth else None))
    if (epsilon is None) == (keep is None):
        _fail("give --epsilon or --keep (the probability of reporting the truth), one of them")
    if keep is not None:  # each design's epsilon, as the mechanism computes it from keep
        epsilons = [pipeline.build_mechanism(mechanism, None, categories, [*(param or []), f"keep={k!r}"]).epsilon
                    for k in pipeline.parse_numbers(keep, "--keep")]
    else:
        epsilons = pipeline.parse_numbers(epsilon, "--epsilon")
    sizes = pipeline.parse_numbers(n, "--n", integer=True)
    study = run_study(scenario, epsilons, sizes, reps, np.random.default_rng(seed))
    study.attrs["seed"] = seed
    if plot is not None:  # first: a failed drawing leaves no study file behind
        plot_study(study, plot)
    result_files.write_result(study, output)
    typer.echo(study["mean_error"].to_pandas().to_string(float_format=lambda v: f"{v:.4g}"))
    typer.echo(f"wrote {output} ({study.attrs['metric']}; {study.attrs['simulation']})", err=True)


@app.command("ledger")
@handles_errors
def ledger_command(
    ledger: Path = typer.Argument(..., help="A ledger file written by `ldpest privatize --ledger`."),
    user: str | None = typer.Option(None, "--user", help="Only this user."),
    period: str | None = typer.Option(None, "--period", help="Only this period (e.g. 2026-12-04, 2026-W49, all)."),
):
    """Show the epsilon each user has spent, per period (docs/accounting.md).

    \b
    Example:
      ldpest ledger ledger.json --user u17
    """
    from .engine.ledger import Ledger

    if not ledger.exists():
        _fail(f"{ledger}: no such ledger")
    table = Ledger.open(ledger).table()
    if user is not None:
        table = table[table["user"] == user]
    if period is not None:
        table = table[table["period"] == period]
    if table.empty:
        typer.echo("no spending recorded" + (f" for user {user!r}" if user else "")
                   + (f" in {period}" if period else ""), err=True)
        return
    typer.echo(table.to_string(index=False, float_format=lambda v: f"{v:.6g}"))


@app.command("plan")
@handles_errors
def plan_command(
    d: int | None = typer.Option(None, "--d", "-d", help="Number of categories (a frequency plan)."),
    low: float | None = typer.Option(None, "--low", help="Smallest value of the data (a plan for a mean)."),
    high: float | None = typer.Option(None, "--high", help="Largest value of the data (a plan for a mean)."),
    mechanism: str = typer.Option("all", "--mechanism", "-m",
                                  help="A frequency oracle or numeric mechanism, 'auto' (the chooser's pick, "
                                       "frequencies) or 'all' (compare them)."),
    epsilon: float | None = typer.Option(None, "--epsilon", "-e", help="Privacy level (or solve for it)."),
    n: float | None = typer.Option(None, "--n", help="Number of reports (or solve for it), e.g. 1e6."),
    stderr: float | None = typer.Option(
        None, "--stderr", help="Target worst-case standard error of one category's frequency, or of the mean "
                               "with --low/--high (or solve for it)."),
    shuffle: float | None = typer.Option(
        None, "--shuffle", help="A target central epsilon after a shuffler: with --epsilon (local) the n it "
                                "needs, with --n the largest local epsilon; with both, every bound. Needs --delta."),
    delta: float | None = typer.Option(None, "--delta", help="The central delta of --shuffle, e.g. 1e-6."),
    as_json: bool = typer.Option(False, "--json", help="Print the table as JSON."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Also write the table as JSON here."),
):
    """Accuracy of the frequency oracles, or of a mean: give two of --epsilon, --n, --stderr and get the third.

    \b
    Examples (how many reports each mechanism needs):
      ldpest plan -d 100 --epsilon 1 --stderr 0.01
      ldpest plan --low 0 --high 500 --epsilon 1 --stderr 2      # a mean of latencies, stderr 2 ms
      ldpest plan --shuffle 0.1 --delta 1e-6 --epsilon 4          # n for a central epsilon of 0.1
      ldpest plan --shuffle 0.1 --delta 1e-6 --n 1e6 -m randomized-response -d 100
    """
    from .engine.planning import plan

    if n is not None and (not math.isfinite(n) or n != int(n) or n < 1):
        _fail(f"--n must be a whole number of reports >= 1, got {n:g}")
    if output is not None and output.suffix.lower() != ".json":
        _fail(f"{output}: the plan is written as .json")
    if shuffle is not None or delta is not None:
        _plan_shuffle(shuffle, delta, d, mechanism, epsilon, n, as_json, output)
        return
    if (low is None) != (high is None):
        _fail("a plan for a mean needs both --low and --high")
    if low is not None and d is not None:
        _fail("give -d (a frequency plan) or --low/--high (a plan for a mean), not both")
    if low is None and d is None:
        _fail("give -d (the number of categories) or --low and --high (the range of a number)")
    table = plan(mechanism, d=d, epsilon=epsilon, n=None if n is None else int(n), stderr=stderr, low=low, high=high)
    records = json.loads(table.to_json(orient="records"))
    if output is not None:
        from .util.atomic import atomic_path

        with atomic_path(output) as tmp:
            Path(tmp).write_text(json.dumps(records, indent=1) + "\n")
        typer.echo(f"wrote {output}", err=True)
    if as_json:
        typer.echo(json.dumps(records, indent=1))
        return
    if low is not None:
        typer.echo(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
        typer.echo("stderr: worst-case standard error of the mean given the data (the mechanism's noise); "
                   "stderr_with_spread: with the most the data's own spread adds", err=True)
        return
    shown = table.assign(parameters=[json.dumps(p) if p else "" for p in table["parameters"]],
                         auto=["<- auto" if a else "" for a in table["auto"]])
    typer.echo(shown.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    typer.echo("stderr: worst-case standard error of one category's frequency; rmse: sqrt of the worst-case "
               "summed variance (l2 error); report_bits: size of one report", err=True)


def _plan_shuffle(target, delta, d, mechanism, epsilon, n, as_json, output) -> None:
    """``ldpest plan --shuffle``: the n or local epsilon a central epsilon needs, or every bound."""
    from .engine.accounting import plan_shuffle, shuffle_epsilon
    from .engine.api import mechanism as build

    if target is None or delta is None:
        _fail("a shuffle plan needs both --shuffle (the target central epsilon) and --delta")
    named = mechanism not in ("all", "auto")
    params = {} if d is None else {"categories": list(range(d))}
    if named and d is None:
        _fail(f"--shuffle with -m {mechanism} needs -d (its number of categories)")
    if epsilon is not None and n is not None:
        local = build(mechanism, epsilon=epsilon, **params) if named else epsilon
        bound = shuffle_epsilon(local, int(n), delta)
        record = bound.to_dict() | {"target_epsilon": target, "meets_target": bound.epsilon <= target}
        text = str(bound) + f"\ntarget {target:g}: {'met' if bound.epsilon <= target else 'NOT met'}"
    else:
        record = plan_shuffle(target, delta, n=None if n is None else int(n), epsilon=epsilon,
                              mechanism=mechanism if named else None, **params)
        solved = record["solved_for"]
        value = f"n = {record['n']:,}" if solved == "n" else f"epsilon0 = {record['epsilon0']:.6g}"
        text = (f"{value}: {record['n']:,} shuffled reports of {record['mechanism']} at epsilon0 = "
                f"{record['epsilon0']:.6g} are ({record['central_epsilon']:.6g}, {delta:g})-DP "
                f"({record['method']}; target {target:g})")
    if output is not None:
        from .util.atomic import atomic_path

        with atomic_path(output) as tmp:
            Path(tmp).write_text(json.dumps(record, indent=1) + "\n")
        typer.echo(f"wrote {output}", err=True)
    typer.echo(json.dumps(record, indent=1) if as_json else text)


@app.command("plot")
@handles_errors
def plot_command(
    result: Path = typer.Argument(..., help="A result of `ldpest estimate -o` or `ldpest simulate -o` (.nc or .json)."),
    output: Path = typer.Option(..., "--output", "-o", help=".png or .pdf"),
    level: float = typer.Option(0.95, "--level", help="Confidence level of the intervals drawn."),
):
    """Draw a result: bars with intervals, a density with a band, a heat map, or a study's error curves.

    \b
    Example:
      ldpest plot result.nc -o result.png
    """
    from .plotting import plot_result, plot_study

    _check_level(level)
    _check_picture(output)
    pipeline.refuse_overwriting(output, result)
    data = result_files.read_result(result)
    if "mean_error" in data:
        plot_study(data, output)
    else:
        plot_result(data, output, level)
    typer.echo(f"wrote {output}", err=True)


def main(argv: list[str] | None = None):  # the console script
    """Run the CLI; ``--debug`` may also follow the subcommand."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--debug" in argv[1:]:  # typer reads the app's own options only before the subcommand
        argv = ["--debug"] + [a for a in argv if a != "--debug"]
    _state["said"] = False
    try:
        app(args=argv, prog_name="ldpest")
    except SystemExit as ended:  # typer ends Ctrl-C outside a command (while it parses) with 130 and no word
        if ended.code == 130 and not _state["said"]:
            typer.echo("ldpest: interrupted", err=True)
        raise


if __name__ == "__main__":
    main()
