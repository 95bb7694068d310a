"""One way into report files (issue 15): NetCDF, Zarr, CSV and Parquet open as parts; streamed or
mapped on dask, every format gives the in-memory estimate bit for bit, each part is read once,
memory stays one part, and errors name the file's line or row."""

import itertools
import tracemalloc

import numpy as np
import pytest
from stats_helpers import small_samples

import ldpest
from ldpest import DataError, ParameterError
from ldpest.engine import mapreduce
from ldpest.io import sources, write_reports_csv


def _reports(n=20000, name="laplace", seed=0):
    rng = np.random.default_rng(seed)
    mech = ldpest.mechanism(name, epsilon=1.0, categories=["a", "b", "c"])
    return mech.privatize(rng.choice(["a", "b", "c"], n, p=[0.2, 0.5, 0.3]), rng=rng)


def _write(reports, path):
    suffix = path.suffix
    if suffix == ".nc":
        reports.to_netcdf(path)
    elif suffix == ".zarr":
        reports.to_zarr(path)
    elif suffix == ".csv":
        write_reports_csv(reports, path)
    else:
        from ldpest.io import ReportWriter

        with ReportWriter(path, reports.mechanism, "external") as writer:
            for start in range(0, reports.n, 3000):  # several row groups
                writer.write(reports.values[start:start + 3000])
    return path


@pytest.mark.parametrize("name", ["laplace", "randomized-response", "unary-randomized-response"])
@pytest.mark.parametrize("suffix", [".nc", ".zarr", ".csv", ".parquet"])
def test_every_format_streams_and_maps_to_the_in_memory_estimate(tmp_path, name, suffix):
    reports = _reports(name=name)
    path = _write(reports, tmp_path / f"reports{suffix}")
    source = ldpest.open_reports(path, part_bytes=8_000)
    assert len(source) > 2
    expected = ldpest.estimate(reports)
    for scheduler in (None, "synchronous"):
        result = ldpest.estimate(source, scheduler=scheduler)
        for variable in ("unprojected", "stderr"):
            np.testing.assert_array_equal(result[variable].values, expected[variable].values)
        assert result.attrs["n"] == reports.n


def test_processes_read_each_part_once_and_agree(tmp_path, monkeypatch):
    reports = _reports()
    path = _write(reports, tmp_path / "reports.csv")
    source = ldpest.open_reports(path, part_bytes=40_000)
    read = []
    original = sources.read_part  # the map step's reader
    monkeypatch.setattr(mapreduce, "read_part", lambda s, i, first=None: read.append(i) or original(s, i, first))
    synchronous = ldpest.estimate(source, scheduler="synchronous")
    assert sorted(read) == list(range(len(source)))
    processes = ldpest.estimate(source, scheduler="processes")
    np.testing.assert_array_equal(processes["unprojected"].values, synchronous["unprojected"].values)


def test_csv_parts_end_at_line_ends_and_cover_the_data(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("#ldpest-spec {}\nreport\n" + "".join(f"{i % 3}\n" for i in range(1000)) + "2")  # no final newline
    start = sources._data_start(path, 2)
    parts = sources._byte_ranges(path, start, 97)
    data = path.read_bytes()
    assert parts[0][0] == start and parts[-1][1] == len(data)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(parts))
    assert all(data[stop - 1:stop] == b"\n" for _, stop in parts[:-1])
    assert sum(data[a:b].count(b"\n") for a, b in parts) == 1000


@pytest.mark.parametrize("scheduler", [None, "synchronous"])
def test_errors_name_the_line_of_a_late_part(tmp_path, scheduler):
    mech = ldpest.mechanism("randomized-response", epsilon=1.0, categories=["a", "b"])
    path = tmp_path / "collected.csv"
    path.write_text("answer\n" + "a\nb\n" * 2000 + "c\n" + "a\n" * 10)  # line 4002 is 'c'
    source = ldpest.open_reports(path, mechanism=mech, part_bytes=300)
    assert len(source) > 10
    with pytest.raises(DataError, match=r"collected.csv, line 4002: .*'c'"):
        ldpest.estimate(source, scheduler=scheduler)
    parquet = tmp_path / "collected.parquet"
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"answer": ["a", "b"] * 2000 + ["c"]}), parquet, row_group_size=500)
    with pytest.raises(DataError, match=r"collected.parquet, row 4001: .*'c'"):
        ldpest.estimate(ldpest.open_reports(parquet, mechanism=mech), scheduler=scheduler)


def test_netcdf_memory_stays_one_part(tmp_path):
    reports = _reports(n=4_000_000, name="randomized-response")  # 4 MB of one-byte reports
    path = _write(reports, tmp_path / "r.nc")
    source = ldpest.open_reports(path, part_bytes=1 << 16)
    ldpest.estimate(source)  # warm caches and imports
    tracemalloc.start()
    ldpest.estimate(source)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < reports.values.nbytes / 4, peak


@small_samples
def test_open_reports_refuses_what_it_cannot_read(tmp_path):
    reports = _reports(n=100)
    result = tmp_path / "result.nc"
    ldpest.estimate(reports).to_netcdf(result)
    with pytest.raises(DataError, match="no 'reports' variable"):
        ldpest.open_reports(result)
    with pytest.raises(ParameterError, match="read reports from .nc, .zarr, .csv, .parquet"):
        ldpest.open_reports(tmp_path / "r.txt")
    nc = _write(reports, tmp_path / "r.nc")
    with pytest.raises(ParameterError, match="carries its own layout"):
        ldpest.open_reports(nc, codes="0-based")
    other = ldpest.mechanism("laplace", epsilon=2.0, categories=["a", "b", "c"])
    with pytest.raises(ParameterError, match="carries its own spec"):
        ldpest.open_reports(nc, mechanism=other)
    with pytest.raises(DataError, match="no such file"):
        ldpest.open_reports(tmp_path / "missing.nc")
    with pytest.raises(ParameterError, match="scheduler maps the parts of a report file"):
        ldpest.estimate(reports, scheduler="threads")


@pytest.mark.parametrize("suffix", [".nc", ".zarr", ".csv", ".parquet"])
def test_load_reads_every_part_into_the_reports_written(tmp_path, suffix):
    reports = _reports(n=10000, name="randomized-response")
    source = ldpest.open_reports(_write(reports, tmp_path / f"reports{suffix}"), part_bytes=1000)
    assert len(source) > 2
    loaded = source.load()
    assert loaded.mechanism == reports.mechanism and np.array_equal(loaded.values, reports.values)
