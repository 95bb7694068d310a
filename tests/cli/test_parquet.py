"""Parquet report files (issue 15: one way in): written by `privatize`, read by `estimate` on the
streaming path and, row group by row group, on dask; reports from other tools with options."""

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_cli_safety import fails_cleanly, run, snapshot

import ldpest
from ldpest.engine import pipeline

THETA = np.array([0.2, 0.5, 0.3])


@pytest.fixture
def answers(tmp_path):
    path = tmp_path / "answers.csv"
    values = np.random.default_rng(0).choice(["yes", "no", "maybe"], 30000, p=THETA)
    path.write_text("answer\n" + "\n".join(values) + "\n")
    return path


def _privatize(answers, out, *extra):
    made = run("privatize", answers, "-c", "answer", "-m", "randomized-response", "-e", "1", "--categories",
               "yes,no,maybe", "-o", out, "--seed", "5", "--no-progress", *extra)
    assert made.exit_code == 0, made.output


def _json(*args):
    done = run("estimate", *args, "--json", "--no-progress")
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def test_parquet_reports_carry_their_spec_and_estimate_like_csv_and_netcdf(answers, tmp_path, monkeypatch):
    monkeypatch.setattr(pipeline, "RAW_BLOCK_BYTES", 8 * 7000)  # several row groups
    for suffix in (".parquet", ".csv", ".nc"):
        _privatize(answers, tmp_path / f"reports{suffix}")
    table = pq.read_table(tmp_path / "reports.parquet")
    assert pq.ParquetFile(tmp_path / "reports.parquet").metadata.num_row_groups == 5
    assert pa.types.is_dictionary(table.schema.field("report").type)
    assert json.loads(table.schema.metadata[b"ldpest-spec"])["name"] == "randomized-response"
    assert table.schema.metadata[b"ldpest-rng"] == b"numpy-seeded"
    results = {suffix: _json(tmp_path / f"reports{suffix}") for suffix in (".parquet", ".csv", ".nc")}
    assert results[".parquet"]["data_vars"] == results[".csv"]["data_vars"] == results[".nc"]["data_vars"]
    unprojected = np.array(results[".parquet"]["data_vars"]["unprojected"]["data"])
    stderr = np.array(results[".parquet"]["data_vars"]["stderr"]["data"])
    assert np.all(np.abs(unprojected - THETA) < 5 * stderr)


@pytest.mark.parametrize("scheduler", ["synchronous", "processes"])
def test_dask_reads_each_row_group_once_and_equals_streaming(answers, tmp_path, monkeypatch, scheduler):
    monkeypatch.setattr(pipeline, "RAW_BLOCK_BYTES", 8 * 7000)
    path = tmp_path / "reports.parquet"
    _privatize(answers, path)
    reads = []
    if scheduler == "synchronous":
        original = pq.ParquetFile.read_row_group
        monkeypatch.setattr(pq.ParquetFile, "read_row_group",
                            lambda self, i, **kw: reads.append(i) or original(self, i, **kw))
    streamed = _json(path)
    reads.clear()
    mapped = _json(path, "--scheduler", scheduler)
    assert mapped["data_vars"] == streamed["data_vars"]
    if scheduler == "synchronous":
        assert sorted(reads) == [0, 1, 2, 3, 4]


def test_parquet_from_another_tool_with_codes_and_bit_columns(tmp_path):
    rng = np.random.default_rng(2)
    mech = ldpest.mechanism("randomized-response", epsilon=1.0, categories=["yes", "no", "maybe"])
    reports = mech.privatize(rng.choice(["yes", "no", "maybe"], 20000, p=THETA), rng=rng)
    codes = tmp_path / "codes.parquet"
    pq.write_table(pa.table({"r": reports.values.astype(np.int16)}), codes)  # 0-based positions
    result = _json(codes, "-m", "randomized-response", "-e", "1", "--categories", "yes,no,maybe", "--codes", "0-based")
    assert result["data_vars"]["unprojected"]["data"] == ldpest.estimate(reports)["unprojected"].values.tolist()
    unary = ldpest.mechanism("unary-randomized-response", epsilon=1.0, categories=["yes", "no", "maybe"])
    bits = unary.privatize(rng.choice(["yes", "no", "maybe"], 20000, p=THETA), rng=rng)
    wide = tmp_path / "bits.parquet"
    pq.write_table(pa.table({f"b{j}": bits.values[:, j] for j in range(3)}), wide)
    result = _json(wide, "-m", "unary-randomized-response", "-e", "1", "--categories", "yes,no,maybe")
    assert result["data_vars"]["unprojected"]["data"] == ldpest.estimate(bits)["unprojected"].values.tolist()


def test_bad_parquet_input_names_the_row_and_writes_nothing(tmp_path):
    path = tmp_path / "holes.parquet"
    pq.write_table(pa.table({"answer": ["yes", None, "no"]}), path)
    out = tmp_path / "result.nc"
    before = snapshot(tmp_path)
    fails_cleanly(run("estimate", path, "-m", "randomized-response", "-e", "1", "--categories", "yes,no", "-o", out),
                  "holes.parquet, row 2", "missing a value")
    unknown = tmp_path / "unknown.parquet"
    pq.write_table(pa.table({"answer": ["yes", "no", "perhaps"]}), unknown)
    fails_cleanly(run("estimate", unknown, "-m", "randomized-response", "-e", "1", "--categories", "yes,no"),
                  "unknown.parquet, row 3", "'perhaps'")
    fails_cleanly(run("estimate", unknown, "-c", "other", "-m", "randomized-response", "-e", "1", "--categories",
                      "yes,no"), "no column 'other'; columns are: answer")
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"not parquet")
    fails_cleanly(run("estimate", broken, "-m", "randomized-response", "-e", "1", "--categories", "yes,no"),
                  "not a readable Parquet file")
    fails_cleanly(run("estimate", unknown, "--no-header", "-m", "randomized-response", "-e", "1",
                      "--categories", "yes,no"), "--no-header: for CSV files only")
    assert snapshot(tmp_path) == {**before, "unknown.parquet": unknown.read_bytes(),
                                  "broken.parquet": b"not parquet"}


def test_privatize_to_parquet_is_atomic(answers, tmp_path):
    out = tmp_path / "reports.parquet"
    out.write_bytes(b"old")
    failed = run("privatize", answers, "-c", "nope", "-m", "randomized-response", "-e", "1", "--categories",
                 "yes,no,maybe", "-o", out)
    assert failed.exit_code == 2 and out.read_bytes() == b"old"


def test_zarr_reports_stream_without_a_scheduler_and_parquet_raw_data_privatise(tmp_path):
    mech = ldpest.mechanism("randomized-response", epsilon=1.0, categories=["yes", "no", "maybe"])
    reports = mech.privatize(np.random.default_rng(3).choice(["yes", "no", "maybe"], 5000, p=THETA), rng=4)
    reports.to_zarr(tmp_path / "reports.zarr")
    result = _json(tmp_path / "reports.zarr")
    assert result["data_vars"]["unprojected"]["data"] == ldpest.estimate(reports)["unprojected"].values.tolist()
    raw = tmp_path / "raw.parquet"
    pq.write_table(pa.table({"answer": np.random.default_rng(5).choice(["yes", "no", "maybe"], 20000, p=THETA)}), raw)
    out = tmp_path / "reports.parquet"
    made = run("privatize", raw, "-c", "answer", "-m", "randomized-response", "-e", "2", "--categories",
               "yes,no,maybe", "-o", out, "--no-progress")
    assert made.exit_code == 0, made.output
    estimated = _json(out)
    unprojected = np.array(estimated["data_vars"]["unprojected"]["data"])
    assert np.all(np.abs(unprojected - THETA) < 5 * np.array(estimated["data_vars"]["stderr"]["data"]))
    fails_cleanly(run("estimate", tmp_path / "reports.zarr", "--raw", "-c", "x", "-m", "laplace", "-e", "1",
                      "--categories", "a,b"), "--raw reads raw data from CSV or Parquet")


def test_raw_parquet_tunes_auto_sizes_to_its_row_count(tmp_path):
    raw = tmp_path / "points.parquet"
    pq.write_table(pa.table({"x": np.random.default_rng(6).beta(2, 5, 4000)}), raw)
    done = run("estimate", raw, "--raw", "-c", "x", "-m", "laplace-histogram", "-e", "1", "-p", "low=[0]",
               "-p", "high=[1]", "-p", "bins=\"auto\"", "--seed", "1", "--json", "--no-progress")
    assert done.exit_code == 0, done.output
    spec = json.loads(json.loads(done.stdout)["attrs"]["mechanism_spec"])
    assert spec["expected_n"] == 4000
