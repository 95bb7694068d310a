"""Follow one file path from `ldpest estimate` to the result: which ldpest modules it passes
through, in order, and how often a call climbs from a lower floor to a higher one.

    .venv/bin/python bench/layer_walk.py            # a CSV report file, streamed
    .venv/bin/python bench/layer_walk.py --dask     # the same file mapped on dask (synchronous)

A "climb" is a call whose caller sits on a lower floor than its callee (floors of README's layout:
util 0, privacy 1, stats 2, contract 3, io 4, engine 5, faces 6).  Plugin modules stand outside
the house and are listed but not ranked, as is the package root (``ldpest._moved``, whose import
hook is asked for modules that no other finder has).  The flat modules of the layout before issue 21 are
ranked by the floor the issue gives them, so the same script measures before and after.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

FLOORS = {"util": 0, "privacy": 1, "stats": 2, "contract": 3, "io": 4, "engine": 5,
          "cli": 6, "rbridge": 6, "plotting": 6, "testing": 6}
FLAT = {  # the one flat folder before issue 21
    "errors": 0, "validation": 0, "labels": 0, "_xarray": 0, "_version": 0,
    "exact": 1, "alias": 1, "discrete_laplace": 1, "noise": 1, "rng": 1,
    "exactsum": 2, "stats": 2, "projection": 2, "partition": 2, "planning": 2,
    "contract": 3, "registry": 3, "hookspecs": 3, "reports": 3, "results": 3,
    "io": 4, "sources": 4, "atomic": 4,
    "pipeline": 5, "mapreduce": 5, "simulate": 5, "api": 5,
    "cli": 6, "rbridge": 6, "plotting": 6, "testing": 6,
}


def floor_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "ldpest" or len(parts) < 2:
        return None
    if len(parts) == 2 and parts[1] in FLAT and parts[1] not in ("stats", "io", "contract"):
        return FLAT[parts[1]]
    return FLOORS.get(parts[1], FLAT.get(parts[1]))


def walk(argv: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    from ldpest.cli import main

    order: list[str] = []
    climbs: list[tuple[str, str]] = []

    def profile(frame, event, arg):
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("ldpest"):
            return
        if not order or order[-1] != module:
            if module not in order:
                order.append(module)
        caller = frame.f_back.f_globals.get("__name__", "") if frame.f_back is not None else ""
        low, high = floor_of(caller), floor_of(module)
        if low is not None and high is not None and high > low:
            climbs.append((f"{caller}.{frame.f_back.f_code.co_name}", f"{module}.{frame.f_code.co_name}"))

    sys.setprofile(profile)
    try:
        main(argv)
    except SystemExit as exit_:
        if exit_.code not in (0, None):
            raise
    finally:
        sys.setprofile(None)
    return order, climbs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dask", action="store_true", help="map the file on dask (synchronous scheduler)")
    options = parser.parse_args()
    import numpy as np

    import ldpest

    with tempfile.TemporaryDirectory() as folder:
        reports_path, result_path = Path(folder) / "reports.csv", Path(folder) / "result.nc"
        mech = ldpest.mechanism("randomized-response", epsilon=1.0, categories=["a", "b", "c"])
        reports = mech.privatize(np.random.default_rng(1).choice(["a", "b", "c"], 1000), rng=1)
        ldpest.io.writers.write_reports_csv(reports, reports_path)
        ldpest.estimate(ldpest.open_reports(reports_path))  # warm: imports and plugin discovery are not the walk
        argv = ["estimate", str(reports_path), "-o", str(result_path), "--no-progress"]
        if options.dask:
            argv += ["--scheduler", "synchronous"]
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            order, climbs = walk(argv)
    core = [m for m in order if floor_of(m) is not None]
    print(f"modules passed through ({len(core)} ldpest modules, plugins aside):")
    for module in order:
        floor = floor_of(module)
        where = f"floor {floor}" if floor is not None else "root" if module.startswith("ldpest.") else "plugin"
        print(f"  {where:8s} {module}")
    distinct = list(dict.fromkeys(climbs))
    print(f"climbs to a higher floor: {len(distinct)} distinct caller -> callee pairs ({len(climbs)} calls)")
    for caller, callee in distinct:
        print(f"  {caller} -> {callee}")


if __name__ == "__main__":
    main()
