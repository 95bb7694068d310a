"""Estimating report files (issue 15): ldpest's one way in against plain dask doing the same
aggregation on the same file, in one run.

    .venv/bin/python bench/bench_files.py [--n 10000000] [--repeat 2] [--formats nc,zarr,parquet,csv]

For each format, n randomized-response reports (d = 4, stored as ldpest writes them) are
estimated by:
* ldpest streaming (one part at a time),
* ldpest on dask's processes scheduler and on a 2-worker ``distributed`` cluster,
* plain dask: the simplest correct aggregation of the same file on the same scheduler
  (``da.from_zarr``/``xr.open_dataset(chunks=)`` + ``bincount``, ``dd.read_parquet`` /
  ``dd.read_csv`` + ``value_counts``), without validation or labels.
Prints seconds (best of --repeat, ldpest and plain dask timed alternately) and the ratio
ldpest / plain dask per scheduler (targets: 1.5 in issue 15, 1.2 in issue 28).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

import ldpest
from ldpest.io.writers import ReportWriter

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_floor import interleaved_best  # noqa: E402
from bench_frequency import best_time as best  # noqa: E402

CATEGORIES = ["car", "bus", "bike", "walk"]


def write_files(folder: Path, n: int, formats: list[str]) -> dict:
    mech = ldpest.mechanism("randomized-response", epsilon=1.0, categories=CATEGORIES)
    rng = np.random.default_rng(0)
    block = 2_000_000
    paths = {}
    for fmt in formats:
        path = folder / f"reports.{fmt}"
        if fmt == "zarr":
            values = np.concatenate([rng.integers(0, 4, min(block, n - s)) for s in range(0, n, block)])
            ldpest.Reports.trusted(values, mech, rng="external").to_zarr(path)
        else:
            with ReportWriter(path, mech, "external") as writer:
                for start in range(0, n, block):
                    writer.write(rng.integers(0, 4, min(block, n - start)))
        paths[fmt] = path
    return paths


def plain_dask(fmt: str, path: Path) -> np.ndarray:
    import dask
    import dask.array as da
    import dask.dataframe as dd

    if fmt in ("nc", "zarr"):
        from ldpest.util.xarray import xr

        engine = "netcdf4" if fmt == "nc" else "zarr"
        options = {} if fmt == "nc" else {"consolidated": False}
        data = xr.open_dataset(path, engine=engine, chunks={"report": 1_000_000}, **options)["reports"].data
        counts = da.bincount(data, minlength=4)
        return dask.compute(counts)[0]
    if fmt == "parquet":
        frame = dd.read_parquet(path, columns=["report"])
    else:
        frame = dd.read_csv(path, comment="#", blocksize=1 << 23, dtype={"report": str})
    return frame["report"].value_counts().compute().to_numpy()


def print_row(fmt, scheduler, ours, plain):
    ratio = f"{ours / plain:>8.2f}" if plain else f"{'':>8}"
    print(f"{fmt:<9}{scheduler:<13}{ours:>10.2f}{(f'{plain:.2f}' if plain else ''):>9}{ratio}", flush=True)



def main(argv=None):
    import dask
    from distributed import Client, LocalCluster

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10 ** 7)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--formats", default="nc,zarr,parquet,csv")
    args = parser.parse_args(argv)
    formats = args.formats.split(",")
    folder = Path(tempfile.mkdtemp(prefix="ldpest-bench-"))
    try:
        paths = write_files(folder, args.n, formats)
        print(f"n = {args.n} randomized-response reports (d = 4); best of {args.repeat}, interleaved")
        print(f"{'format':<9}{'scheduler':<13}{'ldpest s':>10}{'dask s':>9}{'ratio':>8}")
        rows = []
        for fmt in formats:
            source = ldpest.open_reports(paths[fmt])
            rows.append((fmt, "streaming", best(lambda: ldpest.estimate(source), args.repeat), None))
            with dask.config.set(scheduler="processes"):
                ours, plain = interleaved_best(lambda: ldpest.estimate(source, scheduler="processes"),
                                               lambda: plain_dask(fmt, paths[fmt]), args.repeat)
            rows.append((fmt, "processes", ours, plain))
            print_row(*rows[-2])
            print_row(*rows[-1])
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
            for fmt in formats:
                source = ldpest.open_reports(paths[fmt])
                with Client(cluster):  # ldpest connects its own client to the address, as the CLI does
                    ours, plain = interleaved_best(
                        lambda: ldpest.estimate(source, scheduler=cluster.scheduler_address),
                        lambda: plain_dask(fmt, paths[fmt]), args.repeat)
                print_row(fmt, "distributed", ours, plain)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
