"""Estimation on Dask equals the numpy path exactly: local schedulers and a distributed cluster."""

import json

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from typer.testing import CliRunner

import ldpest
import ldpest.engine.mapreduce
from ldpest.cli import app

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

CASES = [
    ("randomized-response", {"categories": ["a", "b", "c"]}, lambda rng, n: rng.choice(["a", "b", "c"], n)),
    ("unary-randomized-response", {"categories": [1, 2, 3, 4]}, lambda rng, n: rng.choice([1, 2, 3, 4], n)),
    ("laplace", {"categories": ["x", "y"]}, lambda rng, n: rng.choice(["x", "y"], n)),
    ("laplace-histogram", {"low": [0, 0], "high": [1, 1], "bins": 3}, lambda rng, n: rng.uniform(size=(n, 2))),
    ("linf-sampling", {"basis": "walsh", "k": 4}, lambda rng, n: rng.uniform(size=n)),
    ("laplace-series", {"basis": "trigonometric", "k": 3}, lambda rng, n: rng.uniform(size=n)),
]


def make_reports(name, params, draw, n=20_011, seed=0):
    rng = np.random.default_rng(seed)
    mech = ldpest.mechanism(name, epsilon=1.0, **params)
    return mech.privatize(draw(rng, n), rng=rng)


@pytest.mark.parametrize("name,params,draw", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("scheduler", ["threads", "synchronous"])
def test_lazy_netcdf_equals_numpy_exactly(name, params, draw, scheduler, tmp_path):
    import dask

    reports = make_reports(name, params, draw)
    reports.to_netcdf(tmp_path / "r.nc")
    lazy = ldpest.read_reports(tmp_path / "r.nc", chunks={"report": 3000})
    assert ldpest.engine.mapreduce.is_dask_array(lazy.data.data)
    with dask.config.set(scheduler=scheduler):
        xr.testing.assert_identical(ldpest.estimate(lazy), ldpest.estimate(reports))


def test_parquet_and_csv_through_dask_dataframes(tmp_path):
    reports = make_reports("laplace", {"categories": ["x", "y"]}, CASES[2][2])
    frame = pd.DataFrame(reports.values, columns=reports.mechanism.report_columns())
    dd.from_pandas(frame, npartitions=4).to_parquet(tmp_path / "r.parquet")  # a dataset of 4 files
    frame.to_csv(tmp_path / "r.csv", index=False, float_format="%.17g")
    expected = ldpest.estimate(reports)
    for loaded in (dd.read_parquet(tmp_path / "r.parquet"), dd.read_csv(tmp_path / "r.csv", blocksize=100_000)):
        assert loaded.npartitions > 1
        lazy = ldpest.reports_from_dataframe(loaded, reports.mechanism)
        xr.testing.assert_identical(ldpest.estimate(lazy), expected)


def test_label_reports_from_a_dataframe():
    reports = make_reports("randomized-response", {"categories": ["a", "b", "c"]}, CASES[0][2])
    frame = dd.from_pandas(pd.DataFrame({"answer": reports.labels()}), npartitions=5)
    lazy = ldpest.reports_from_dataframe(frame, reports.mechanism, ["answer"])
    xr.testing.assert_identical(ldpest.estimate(lazy), ldpest.estimate(reports))


def test_invalid_block_is_reported_when_computed(tmp_path):
    reports = make_reports("unary-randomized-response", {"categories": [1, 2, 3, 4]}, CASES[1][2])
    bad = reports.data.copy()
    bad[15_000, 0] = 7
    bad.to_netcdf(tmp_path / "bad.nc")
    with pytest.raises(ldpest.DataError, match="must be 0/1"):
        ldpest.estimate(ldpest.read_reports(tmp_path / "bad.nc", chunks={"report": 4000}))


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  host="127.0.0.1") as local:
        yield local


def test_distributed_cluster_with_two_workers(cluster, tmp_path):
    reports = make_reports("laplace-histogram", {"low": [0, 0], "high": [1, 1], "bins": 3}, CASES[3][2])
    reports.to_netcdf(tmp_path / "r.nc")
    with distributed.Client(cluster) as client:
        lazy = ldpest.read_reports(tmp_path / "r.nc", chunks={"report": 2500})
        result = ldpest.estimate(lazy)
        workers = client.run(lambda: __import__("os").getpid())
    assert len(workers) == 2
    xr.testing.assert_identical(result, ldpest.estimate(reports))


def test_cli_scheduler_option_on_the_cluster(cluster, tmp_path):
    reports = make_reports("randomized-response", {"categories": ["a", "b", "c"]}, CASES[0][2])
    reports.to_netcdf(tmp_path / "r.nc")
    ldpest.io.writers.write_reports_csv(reports, tmp_path / "r.csv")
    runner = CliRunner()
    expected = json.loads(runner.invoke(app, ["estimate", str(tmp_path / "r.nc"), "--json"]).stdout)
    for path in ("r.nc", "r.csv"):
        result = runner.invoke(app, ["estimate", str(tmp_path / path), "--json",
                                     "--scheduler", cluster.scheduler_address])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout) == expected


def test_cli_unreachable_scheduler_is_one_clear_line(tmp_path, monkeypatch):
    monkeypatch.setenv("LDPEST_SCHEDULER_TIMEOUT", "1s")
    reports = make_reports("randomized-response", {"categories": ["a", "b", "c"]}, CASES[0][2], n=10)
    reports.to_netcdf(tmp_path / "r.nc")
    result = CliRunner().invoke(app, ["estimate", str(tmp_path / "r.nc"), "--scheduler", "tcp://127.0.0.1:9"])
    assert result.exit_code == 2 and "cannot reach the dask scheduler" in result.stderr


def test_a_scheduler_that_never_answers_is_one_clear_line(tmp_path):
    """Issue 26: a scheduler that accepts the connection and never answers hung forever (distributed's
    timeout covers only connecting).  A socket that accepts and stays silent stands for it."""
    import socket
    import subprocess
    import sys
    import threading
    from pathlib import Path

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted = []
    threading.Thread(target=lambda: [accepted.append(server.accept()) for _ in range(8)], daemon=True).start()
    reports = make_reports("randomized-response", {"categories": ["a", "b", "c"]}, CASES[0][2], n=10)
    reports.to_netcdf(tmp_path / "r.nc")
    cli = str(Path(sys.executable).with_name("ldpest"))
    done = subprocess.run([cli, "estimate", str(tmp_path / "r.nc"), "--scheduler",
                           f"tcp://127.0.0.1:{server.getsockname()[1]}"], capture_output=True, text=True, timeout=60,
                          env={**__import__("os").environ, "LDPEST_SCHEDULER_TIMEOUT": "2s"})
    server.close()
    assert done.returncode == 2 and "accepted the connection but did not answer" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and accepted


def test_a_cluster_without_workers_times_out_with_a_message(tmp_path, monkeypatch):
    """The whole computation has a timeout too (LDPEST_COMPUTE_TIMEOUT, 3600 s by default)."""
    monkeypatch.setenv("LDPEST_COMPUTE_TIMEOUT", "2")
    reports = make_reports("randomized-response", {"categories": ["a", "b", "c"]}, CASES[0][2], n=10)
    reports.to_netcdf(tmp_path / "r.nc")
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as cluster:
        with pytest.raises(ldpest.ParameterError, match="did not finish within 2 s .* 0 workers"):
            ldpest.estimate(ldpest.open_reports(tmp_path / "r.nc"), scheduler=cluster.scheduler_address)


# reads with chunks unlike the stored ones, on purpose: xarray's warning that this is slower is expected
@pytest.mark.filterwarnings("ignore:The specified chunks separate the stored chunks:UserWarning")
def test_zarr_store_lazily_equals_numpy_and_writes_atomically(tmp_path):
    import dask

    reports = make_reports("laplace-series", {"basis": "trigonometric", "k": 3}, CASES[5][2])
    store = tmp_path / "r.zarr"
    reports.to_zarr(store)
    lazy = ldpest.read_reports(store, chunks={"report": 4000})
    assert ldpest.engine.mapreduce.is_dask_array(lazy.data.data)
    with dask.config.set(scheduler="threads"):
        xr.testing.assert_identical(ldpest.estimate(lazy), ldpest.estimate(reports))
    xr.testing.assert_identical(ldpest.estimate(ldpest.read_reports(store)), ldpest.estimate(reports))
    reports[:10].to_zarr(store)  # replaces the old store whole
    assert ldpest.read_reports(store).n == 10 and not list(tmp_path.glob(".r.zarr.*"))
    result = CliRunner().invoke(app, ["estimate", str(store), "--json", "--scheduler", "synchronous"])
    assert result.exit_code == 0 and json.loads(result.stdout)["attrs"]["n"] == 10
