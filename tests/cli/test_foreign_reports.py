"""Reports made by other tools (issue 12): files without a header row, 0-/1-based category
codes, bit-vector columns and design keep probabilities instead of epsilon.  The page with the
real libraries' outputs is tested in tests/docs/test_other_libraries.py."""

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from test_cli_safety import fails_cleanly, run, snapshot

import ldpest
from ldpest import DataError, ParameterError

THETA = np.array([0.5, 0.3, 0.15, 0.05])


def _privatized(name, n=20_000, seed=3, **params):
    rng = np.random.default_rng(seed)
    mech = ldpest.mechanism(name, categories=list("abcd"), **params)
    people = rng.choice(4, size=n, p=THETA)
    return mech, mech.privatize(np.array(list("abcd"))[people], rng=rng)


def _estimate_json(*args):
    result = run("estimate", *args, "--json", "--no-progress")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _within_5_se(result):
    unprojected = np.array(result["data_vars"]["unprojected"]["data"])
    stderr = np.array(result["data_vars"]["stderr"]["data"])
    assert np.all(np.abs(unprojected - THETA) < 5 * stderr), (unprojected, stderr)


@pytest.mark.parametrize("base", [0, 1])
def test_headerless_category_codes(tmp_path, base):
    mech, reports = _privatized("randomized-response", epsilon=1.0)
    path = tmp_path / "codes.csv"
    np.savetxt(path, reports.values + base, fmt="%d")
    result = _estimate_json(path, "--no-header", "-m", "randomized-response", "-e", "1", "--categories", "a,b,c,d",
                            "--codes", f"{base}-based")
    assert result["coords"]["category"]["data"] == list("abcd")
    assert result["attrs"]["n"] == 20_000
    _within_5_se(result)
    by_column = _estimate_json(path, "--no-header", "-c", "1", "-m", "randomized-response", "-e", "1",
                               "--categories", "a,b,c,d", "--codes", f"{base}-based")
    assert by_column["data_vars"]["unprojected"] == result["data_vars"]["unprojected"]


def test_headerless_bit_vectors_are_read_whole_and_as_floats(tmp_path):
    mech, reports = _privatized("unary-randomized-response", epsilon=1.0)
    path = tmp_path / "bits.csv"
    np.savetxt(path, reports.values.astype(float), delimiter=",")  # numpy's default: 1.000000000000000000e+00
    result = _estimate_json(path, "--no-header", "-m", "unary-randomized-response", "-e", "1", "--categories",
                            "a,b,c,d")
    expected = ldpest.estimate(reports)
    assert np.array_equal(result["data_vars"]["unprojected"]["data"], expected["unprojected"].values)
    _within_5_se(result)


def test_design_keep_probability_gives_the_same_estimate_as_its_epsilon(tmp_path):
    mech, reports = _privatized("randomized-response", keep=0.7)
    path = tmp_path / "answers.csv"
    path.write_text("answer\n" + "\n".join(reports.labels()) + "\n")
    by_keep = _estimate_json(path, "-m", "randomized-response", "-p", "keep=0.7", "--categories", "a,b,c,d")
    by_epsilon = _estimate_json(path, "-m", "randomized-response", "-e", repr(math.log(7)), "--categories", "a,b,c,d")
    assert by_keep["data_vars"] == by_epsilon["data_vars"]
    assert by_keep["attrs"]["epsilon"] == math.log(7)


def test_bad_codes_name_the_line_and_suggest_the_option(tmp_path):
    path = tmp_path / "codes.csv"
    path.write_text("0\n1\n3\n4\n")
    before = snapshot(tmp_path)
    out = tmp_path / "result.nc"
    fails_cleanly(run("estimate", path, "--no-header", "-m", "randomized-response", "-e", "1", "--categories",
                      "a,b,c,d", "--codes", "0-based", "-o", out),
                  "codes.csv, line 4:", "1 value(s) outside", "0-based category codes", ": 4")
    fails_cleanly(run("estimate", path, "--no-header", "-m", "randomized-response", "-e", "1", "--categories",
                      "a,b,c,d,e"), "codes.csv, line 1:", "add --codes 0-based")
    fails_cleanly(run("estimate", path, "--no-header", "-m", "randomized-response", "-e", "1", "--categories",
                      "a,b,c,d", "--codes", "2-based"), "--codes must be one of labels, 0-based, 1-based")
    words = tmp_path / "words.csv"
    words.write_text("a\nb\n")
    fails_cleanly(run("estimate", words, "--no-header", "-m", "randomized-response", "-e", "1", "--categories", "a,b",
                      "--codes", "0-based"), "words.csv, line 1:", "'a'", "not an integer")
    assert snapshot(tmp_path) == {**before, "words.csv": b"a\nb\n"}


def test_codes_and_no_header_are_refused_where_they_cannot_apply_and_work_on_dask(tmp_path):
    mech, reports = _privatized("unary-randomized-response", epsilon=1.0, n=100)
    bits = tmp_path / "bits.csv"
    np.savetxt(bits, reports.values, fmt="%d", delimiter=",")
    fails_cleanly(run("estimate", bits, "--no-header", "-m", "unary-randomized-response", "-e", "1", "--categories",
                      "a,b,c,d", "--codes", "0-based"), "--codes names categories",
                  "'unary-randomized-response' reports are numbers")
    nc = tmp_path / "reports.nc"
    reports.to_netcdf(nc)
    fails_cleanly(run("estimate", nc, "--no-header"), "--no-header: for CSV files only")
    options = ["--no-header", "-m", "unary-randomized-response", "-e", "1", "--categories", "a,b,c,d"]
    mapped = _estimate_json(bits, *options, "--scheduler", "threads")  # one way in: dask reads the same parts
    assert mapped["data_vars"] == _estimate_json(bits, *options)["data_vars"]


def test_privatize_reads_headerless_coded_raw_data(tmp_path):
    data = tmp_path / "people.csv"
    people = np.random.default_rng(5).choice(4, size=20_000, p=THETA)
    np.savetxt(data, people + 1, fmt="%d")
    out = tmp_path / "reports.csv"
    made = run("privatize", data, "--no-header", "-c", "1", "-m", "randomized-response", "-e", "2",
               "--categories", "a,b,c,d", "--codes", "1-based", "-o", out, "--no-progress")
    assert made.exit_code == 0, made.output
    _within_5_se(_estimate_json(out))


def test_a_headerless_file_counts_every_row_and_reports_emptiness(tmp_path):
    from ldpest.engine.pipeline import count_rows
    from ldpest.io import CsvSource

    path = tmp_path / "three.csv"
    path.write_text("1,0\n0,1\n1,1\n")
    source = CsvSource.open(path, header=False)
    assert source.columns == ["1", "2"] and source.line_of(0) == 1
    assert count_rows(path, header=False) == 3 and count_rows(path) == 2
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(DataError, match="empty .no row"):
        CsvSource.open(empty, header=False)


# --- Python ------------------------------------------------------------------------------------
@pytest.mark.parametrize("d", [2, 3, 10, 1000])
@pytest.mark.parametrize("keep", [0.6, 0.75, 0.9, 0.999999])
def test_randomized_response_keep_maps_to_its_epsilon(d, keep):
    mech = ldpest.mechanism("randomized-response", keep=keep, categories=list(range(d)))
    exact_ratio = Fraction(keep) * (d - 1) / (1 - Fraction(keep))
    assert mech.epsilon == pytest.approx(math.log(exact_ratio), rel=1e-15)
    assert abs(mech.p - keep) < 1e-15
    assert ldpest.mechanism_from_spec(mech.spec) == mech and "keep" not in mech.spec


@pytest.mark.parametrize("f", [0.1, 0.5, 0.95, 1.0 - 1e-9])
def test_unary_keep_is_opendps_bitvec_design(f):
    """OpenDP's make_randomized_response_bitvec(f) with max_weight 1: epsilon = 2 ln((2 - f) / f)."""
    mech = ldpest.mechanism("unary-randomized-response", keep=1 - f / 2, categories=list("abcd"))
    assert mech.epsilon == pytest.approx(2 * math.log((2 - f) / f), rel=1e-12)
    assert abs(mech.p - (1 - f / 2)) < 1e-15


@pytest.mark.parametrize("name", ["randomized-response", "unary-randomized-response"])
@pytest.mark.parametrize("params, message", [
    ({}, "give epsilon or keep"), ({"epsilon": 1.0, "keep": 0.9}, "not both"), ({"keep": 1.0}, "strictly between"),
    ({"keep": 0.5}, "strictly between"), ({"keep": "0.9"}, "strictly between"), ({"keep": True}, "strictly between"),
    ({"keep": float("nan")}, "strictly between"),
])
def test_keep_errors(name, params, message):
    with pytest.raises(ParameterError, match=message):
        ldpest.mechanism(name, categories=["a", "b"], **params)


def test_reports_from_codes_in_python():
    mech = ldpest.mechanism("randomized-response", epsilon=1.0, categories=["x", "y", "z"])
    reports = ldpest.Reports.from_array(np.array([0, 2, 2, 1]), mech, codes="0-based")
    assert reports.labels().tolist() == ["x", "z", "z", "y"]
    with pytest.raises(DataError, match="outside"):
        ldpest.Reports.from_array(np.array([1, 2, 3, 4]), mech, codes="0-based")
    with pytest.raises(ParameterError, match="codes must be one of"):
        ldpest.Reports.from_array(np.array([1]), mech, codes="zero")
    unary = ldpest.mechanism("unary-randomized-response", epsilon=1.0, categories=["x", "y"])
    with pytest.raises(DataError, match="not single categories"):
        ldpest.Reports.from_array(np.array([0, 1]), unary, codes="0-based")
