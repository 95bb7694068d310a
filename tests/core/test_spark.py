"""Spark (issue 28): a DataFrame of reports is reduced per partition with mapInArrow, tree-reduced,
and finalised on the driver; the result equals the in-memory estimate bit for bit, whatever the
partitions. The mechanism is given or read from a Parquet report file's metadata; the CLI reaches
it with --scheduler local[2]. Runs Spark in local[2] (pyspark from the [spark] extra, Java from
Debian's openjdk-17-jre-headless, both installed by scripts/setup.sh)."""

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ldpest
import ldpest.engine.spark as spark_engine
from ldpest.engine.spark import read_parquet, session

LDPEST = str(Path(sys.executable).with_name("ldpest"))
CASES = [
    ("randomized-response", {"categories": ["car", "bus", "bike"]},
     lambda rng, n: rng.choice(["car", "bus", "bike"], n)),
    ("unary-randomized-response", {"categories": [1, 2, 3, 4]}, lambda rng, n: rng.integers(1, 5, n)),
    ("subset-selection", {"categories": list(range(7)), "subset_size": 3}, lambda rng, n: rng.integers(0, 7, n)),
    ("hadamard-response", {"categories": list(range(6))}, lambda rng, n: rng.integers(0, 6, n)),
    ("local-hashing", {"categories": list(range(20))}, lambda rng, n: rng.integers(0, 20, n)),
    ("laplace-histogram", {"low": [0.0], "high": [1.0], "bins": 5}, lambda rng, n: rng.beta(2, 5, n)),
    # reports of a small declared alphabet: counted by Spark like labels
    ("duchi", {"low": 0.0, "high": 1.0}, lambda rng, n: rng.beta(2, 5, n)),
    ("piecewise", {"low": -1.0, "high": 2.0, "square_share": 0.4}, lambda rng, n: rng.uniform(-1, 2, n)),
    ("haar-histogram", {"low": 0.0, "high": 1.0, "bins": 16}, lambda rng, n: rng.beta(2, 5, n)),
    ("linf-sampling", {"basis": "walsh", "k": 3}, lambda rng, n: rng.beta(2, 5, n)),
]


@pytest.fixture(scope="module")
def spark():
    try:
        import pyspark  # noqa: F401
    except ImportError:
        if os.environ.get("LDPEST_REQUIRE_SPARK"):
            pytest.fail("pyspark is missing: scripts/setup.sh installs the [spark] extra and Java")
        pytest.skip("the [spark] extra is not installed (scripts/setup.sh installs it)")
    active = session("local[2]")
    yield active
    active.stop()


def frame_of(spark, reports, partitions: int):
    mech = reports.mechanism
    values = reports.values
    if mech.report_kind == "label":
        table = pd.DataFrame({"report": np.asarray(mech.categories, dtype=object)[values].astype(str)
                              if not all(isinstance(c, int) for c in mech.categories)
                              else np.asarray(mech.categories)[values]})
    else:
        flat = np.asarray(values).reshape(len(values), -1)
        table = pd.DataFrame(flat.astype(np.int64) if flat.dtype.kind in "iub" else flat, columns=mech.report_columns())
    return spark.createDataFrame(table).repartition(partitions)


@pytest.mark.parametrize("name,params,draw", CASES, ids=[c[0] for c in CASES])
def test_the_spark_estimate_is_the_in_memory_one_bit_for_bit(spark, name, params, draw):
    mech = ldpest.mechanism(name, epsilon=1.0, **params)
    reports = mech.privatize(draw(np.random.default_rng(1), 5000), rng=2)
    expected = ldpest.estimate(reports)
    for partitions in (1, 3, 7):
        result = ldpest.estimate(frame_of(spark, reports, partitions), mechanism=mech)
        assert set(result.data_vars) == set(expected.data_vars)
        for variable in expected.data_vars:
            assert np.array_equal(result[variable].values, expected[variable].values), (variable, partitions)
        assert result.attrs["n"] == 5000


@pytest.mark.parametrize("name,epsilon", [("subset-selection", 2.0), ("local-hashing", 4.0)])  # the latter's
def test_an_estimator_of_several_passes_reads_the_frame_once_per_pass_bit_for_bit(spark, name, epsilon):
    # supports go by category (SparseSupports) on the executors
    mech = ldpest.mechanism(name, epsilon=epsilon, categories=list(range(8)))
    reports = mech.privatize(np.random.default_rng(1).choice(8, 4000, p=np.exp(-np.arange(8)) / np.exp(
        -np.arange(8)).sum()), rng=2)
    assert_passes_agree(spark, reports, mech, "frequency-likelihood")


def test_a_parquet_report_file_carries_its_mechanism_to_spark_and_to_the_command_line(spark, tmp_path):
    data = tmp_path / "answers.csv"
    answers = np.random.default_rng(3).choice(["yes", "no"], 20_000, p=[0.3, 0.7])
    data.write_text("answer\n" + "\n".join(answers) + "\n")
    reports = tmp_path / "reports.parquet"
    made = subprocess.run([LDPEST, "privatize", str(data), "-c", "answer", "-m", "randomized-response", "-e", "1",
                           "--categories", "yes,no", "-o", str(reports), "--no-progress"],
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    expected = ldpest.estimate(ldpest.open_reports(reports))
    on_spark = ldpest.estimate(read_parquet(spark, reports))
    assert np.array_equal(on_spark["unprojected"].values, expected["unprojected"].values)
    cli = subprocess.run([LDPEST, "estimate", str(reports), "--scheduler", "local[2]", "--json", "--no-progress"],
                         capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["data_vars"]["unprojected"]["data"] == expected["unprojected"].values.tolist()


COUNTED = [
    ("randomized-response", {"categories": list(range(12))}, None),
    ("piecewise", {"low": 0.0, "high": 1.0}, None),
    ("piecewise", {"low": 0.0, "high": 1.0, "square_share": 0.4}, "variance"),  # two columns: x and x^2
    ("linf-sampling", {"basis": "walsh", "k": 3}, None),  # reports of two columns
]


@pytest.mark.parametrize("name, params, estimator", COUNTED)
def test_counted_reports_give_the_statistics_of_the_reports_they_stand_for(name, params, estimator):
    """Counted reports reach Python as (distinct report, count): ``_counted_statistics`` (doubling along the
    binary digits of the counts) equals the statistics of the rebuilt multiset, whatever the counts (zeros,
    ones, one large run, a single row), for one- and two-column reports."""
    mechanism = ldpest.mechanism(name, epsilon=1.0, **params)
    chosen = ldpest.estimator(estimator or mechanism.default_estimator or "frequency")
    generator = np.random.default_rng(5)
    reports = mechanism.encode_reports(mechanism.privatize(generator.uniform(size=2000) if mechanism.data_kind ==
                                                           "number" else generator.integers(0, 12, 2000),
                                                           rng=6).values)
    distinct = np.unique(reports, axis=0)
    for _ in range(12):
        rows = generator.permutation(len(distinct))[:generator.integers(1, len(distinct) + 1)]
        values = distinct[rows]
        counts = generator.integers(0, 30, len(values))
        counts[generator.integers(len(counts))] = generator.choice([0, 1, 1000])
        if counts.sum() == 0:
            assert spark_engine._counted_statistics(chosen, mechanism, values, counts) is None
            continue
        expected = chosen.aggregate_values(mechanism, np.repeat(values, counts, axis=0))
        found = spark_engine._counted_statistics(chosen, mechanism, values, counts)
        assert found.n == expected.n == counts.sum()
        assert set(found.arrays) == set(expected.arrays)
        for key, array in expected.arrays.items():
            assert np.array_equal(np.asarray(found.arrays[key]), np.asarray(array)), key
    assert spark_engine._counted_statistics(chosen, mechanism, distinct[:0], np.zeros(0, np.int64)) is None


def test_counts_beyond_what_could_be_rebuilt_are_exact():
    """Counts of 2^40 and more: randomized response's statistics are the count of each label, so the
    statistics of the counted reports are those counts exactly (int64, no float rounding)."""
    mechanism = ldpest.mechanism("randomized-response", epsilon=1.0, categories=list(range(5)))
    values = np.array([3, 0, 4], dtype=np.uint8)
    counts = np.array([(1 << 40) + 1, (1 << 52) + 3, 7], dtype=np.int64)
    found = spark_engine._counted_statistics(ldpest.estimator("frequency"), mechanism, values, counts)
    assert found.n == int(counts.sum())
    (statistic,) = found.arrays.values()
    assert np.asarray(statistic).tolist() == [(1 << 52) + 3, 0, 0, (1 << 40) + 1, 7]


def test_counting_settings_hold_only_while_spark_counts(spark, monkeypatch):
    """Spark counts equal reports with its vectorised aggregation map and one shuffle partition per core;
    the session's own settings are back afterwards, set or not, and after an error too."""
    conf = spark.conf
    mechanism = ldpest.mechanism("randomized-response", epsilon=1.0, categories=list(range(4)))
    frame = frame_of(spark, mechanism.privatize(np.arange(400) % 4, rng=1), 2)
    settings = spark_engine._counting_settings(frame)
    assert settings == {"spark.sql.codegen.aggregate.map.vectorized.enable": "true",
                        "spark.sql.shuffle.partitions": str(spark.sparkContext.defaultParallelism)}
    conf.set("spark.sql.shuffle.partitions", "1")  # never more partitions than the session's own setting
    assert spark_engine._counting_settings(frame)["spark.sql.shuffle.partitions"] == "1"
    conf.set("spark.sql.shuffle.partitions", "7")
    during = []
    original = spark_engine.estimate_spark.__globals__["_sql_conf"]

    def recording(frame, wanted):
        during.append(dict(wanted))
        return original(frame, wanted)
    monkeypatch.setattr(spark_engine, "_sql_conf", recording)
    ldpest.estimate(frame, mechanism=mechanism)
    assert during == [settings]
    assert conf.get("spark.sql.shuffle.partitions") == "7"
    assert conf.get("spark.sql.codegen.aggregate.map.vectorized.enable", None) in (None, "false")
    with original(frame, settings):
        assert {key: conf.get(key) for key in settings} == settings
    assert conf.get("spark.sql.shuffle.partitions") == "7"
    with pytest.raises(RuntimeError), original(frame, settings):
        raise RuntimeError("inside")
    assert conf.get("spark.sql.shuffle.partitions") == "7"
    conf.unset("spark.sql.shuffle.partitions")


def test_spark_counts_the_reports_of_mechanisms_with_a_small_alphabet():
    counted = [ldpest.mechanism("randomized-response", epsilon=1, categories=list(range(5))),
               ldpest.mechanism("piecewise", epsilon=1, low=0, high=1),
               ldpest.mechanism("haar-histogram", epsilon=1, low=0, high=1, bins=1 << 14),
               ldpest.mechanism("linf-sampling", epsilon=1, basis="walsh", k=16)]
    not_counted = [ldpest.mechanism("local-hashing", epsilon=1, categories=list(range(5))),
                   ldpest.mechanism("laplace-series", epsilon=1, basis="walsh", k=2),
                   ldpest.mechanism("linf-sampling", epsilon=1, basis="walsh", k=17),  # 2^17 sign vectors
                   ldpest.mechanism("unary-randomized-response", epsilon=1, categories=list(range(5)))]
    for mech in counted:
        assert spark_engine.counts_equal_reports(mech, mech.report_columns()), mech.name
    for mech in not_counted:
        assert not spark_engine.counts_equal_reports(mech, mech.report_columns()), mech.name


@pytest.mark.parametrize("name,params,estimator", [
    ("piecewise", {"low": 0.0, "high": 10.0, "square_share": 0.5}, "variance"),
    ("square-wave", {"low": 0.0, "high": 10.0}, "ems"),
    ("haar-histogram", {"low": 0.0, "high": 10.0, "bins": 32}, "quantile"),
    ("hybrid", {"low": 0.0, "high": 10.0}, "mean"),
])
def test_counted_numbers_give_every_estimator_its_in_memory_result(spark, name, params, estimator):
    mech = ldpest.mechanism(name, epsilon=2.0, **params)
    reports = mech.privatize(np.random.default_rng(7).gamma(2.0, 1.5, 4000).clip(0, 10), rng=8)
    expected = ldpest.estimate(reports, estimator)
    result = ldpest.estimate(frame_of(spark, reports, 3), estimator, mechanism=mech)
    for variable in expected.data_vars:
        assert np.array_equal(result[variable].values, expected[variable].values), variable
    assert result.attrs == expected.attrs


def test_counted_numbers_are_checked_like_the_reports_themselves(spark):
    mech = ldpest.mechanism("piecewise", epsilon=1.0, low=0.0, high=1.0)
    codes = np.arange(60) % 7
    codes[13] = mech.report_alphabet_size()  # one past the last code
    with pytest.raises(ldpest.DataError, match="on Spark: "):
        ldpest.estimate(spark.createDataFrame(pd.DataFrame({"report": codes})).repartition(2), mechanism=mech)
    missing = pd.DataFrame({"report": np.arange(60) % 7}).astype("Int64")
    missing.iloc[5, 0] = pd.NA
    with pytest.raises(ldpest.DataError, match="on Spark: .*missing"):
        ldpest.estimate(spark.createDataFrame(missing).repartition(2), mechanism=mech)


@pytest.mark.parametrize("name, params, values", [
    ("duchi", {"low": 0.0, "high": 1.0}, lambda rng, n: rng.beta(2, 5, n)),
    ("duchi", {"low": 0.0, "high": 1.0}, lambda rng, n: np.zeros(n)),  # may give one code only at large epsilon
    ("randomized-response", {"categories": [3, 4]}, lambda rng, n: rng.choice([3, 4], n)),
])
@pytest.mark.parametrize("epsilon", [1.0, 40.0])
def test_reports_of_two_values_are_counted_by_one_aggregation(spark, monkeypatch, name, params, values, epsilon):
    """Reports that take at most two adjacent integer values (duchi's codes, two integer categories) are counted
    from one aggregation (count, least, greatest, sum) and turned into statistics on the driver: the result
    is the in-memory one bit for bit, at n = 1, 10, 30 and 300, with one value or two, and no Python task runs."""
    mech = ldpest.mechanism(name, epsilon=epsilon, **params)
    counted = []
    original = spark_engine._two_adjacent_values
    monkeypatch.setattr(spark_engine, "_two_adjacent_values", lambda *a: counted.append(original(*a)) or counted[-1])
    from pyspark.sql import DataFrame
    monkeypatch.setattr(DataFrame, "mapInArrow", None)  # no Python task on the executors
    for n in (1, 10, 30, 300):
        reports = mech.privatize(values(np.random.default_rng(n), n), rng=n)
        with warnings.catch_warnings():  # a few reports are uninformative, and both estimates say so
            warnings.simplefilter("ignore", ldpest.EstimateWarning)
            expected = ldpest.estimate(reports)
            found = ldpest.estimate(frame_of(spark, reports, 3), mechanism=mech)
        assert counted[-1] is not None and sum(counted[-1][1]) == n
        for key in expected.data_vars:
            np.testing.assert_array_equal(found[key].values, expected[key].values)


def test_reports_of_two_values_are_checked_like_the_reports_themselves(spark):
    """A value outside the codes, even within two adjacent integers, is named; three values or a missing one go
    to Spark's count and its check; no rows is said."""
    mech = ldpest.mechanism("duchi", epsilon=1.0, low=0.0, high=1.0)

    def frame(codes):
        return spark.createDataFrame(pd.DataFrame({"report": codes})).repartition(2)
    for codes, message in (([1, 2] * 10, "on Spark: .*got np.int64\\(2\\)$"),
                           ([3] * 5, "on Spark: .*got np.int64\\(3\\)$"),
                           ([0, 1, 2] * 5, "on Spark: .*got np.int64\\(2\\)"),
                           ([0, 1, 1 << 62, 1 << 62], f"on Spark: .*got np.int64\\({1 << 62}\\)")):  # a sum overflows
        with pytest.raises(ldpest.DataError, match=message):
            ldpest.estimate(frame(np.array(codes, dtype=np.int64)), mechanism=mech)
    missing = pd.DataFrame({"report": np.arange(20) % 2}).astype("Int64")
    missing.iloc[5, 0] = pd.NA
    with pytest.raises(ldpest.DataError, match="on Spark: .*missing"):
        ldpest.estimate(spark.createDataFrame(missing).repartition(2), mechanism=mech)
    empty = spark.createDataFrame([], "report long")
    with pytest.raises(ldpest.DataError, match="no reports"):
        ldpest.estimate(empty, mechanism=mech)


def test_spark_errors_are_ldpests_own(spark, tmp_path):
    mech = ldpest.mechanism("randomized-response", epsilon=1.0, categories=["a", "b"])
    bad = spark.createDataFrame(pd.DataFrame({"report": ["a", "b", "z"] * 10})).repartition(2)
    with pytest.raises(ldpest.DataError, match="on Spark: .*outside the declared categories"):
        ldpest.estimate(bad, mechanism=mech)
    with pytest.raises(ldpest.ParameterError, match="needs its mechanism"):
        ldpest.estimate(bad)
    missing = spark.createDataFrame(pd.DataFrame({"report": ["a", None, "b"] * 10})).repartition(2)
    with pytest.raises(ldpest.DataError, match="on Spark: .*missing a value"):
        ldpest.estimate(missing, mechanism=mech)
    empty = spark.createDataFrame([], "report string")
    with pytest.raises(ldpest.DataError, match="no reports"):
        ldpest.estimate(empty, mechanism=mech)
    with pytest.raises(ldpest.DataError, match="no column 'answer'"):
        ldpest.estimate(bad, mechanism=mech, columns=["answer"])
    csv = tmp_path / "reports.csv"
    csv.write_text("report\na\n")
    done = subprocess.run([LDPEST, "estimate", str(csv), "-m", "randomized-response", "-e", "1", "--categories", "a,b",
                           "--scheduler", "local[2]"], capture_output=True, text=True)
    assert done.returncode == 2 and "Spark reads Parquet report files" in done.stderr


def test_bit_columns_are_summed_by_spark_where_they_are_stored(spark, monkeypatch):
    """Unary and subset-selection bits in integer or boolean columns: one aggregation in the JVM (the spy sees
    it), the same result bit for bit; double columns go through Arrow and Python, with the same result."""
    calls = []
    summed = spark_engine._bit_column_statistics
    monkeypatch.setattr(spark_engine, "_bit_column_statistics", lambda *args: calls.append(1) or summed(*args))
    for name, params in [("unary-randomized-response", {"categories": list(range(5))}),
                         ("subset-selection", {"categories": list(range(6)), "subset_size": 2})]:
        mech = ldpest.mechanism(name, epsilon=1.0, **params)
        reports = mech.privatize(np.random.default_rng(2).integers(0, len(params["categories"]), 3000), rng=3)
        expected = ldpest.estimate(reports)
        bits = pd.DataFrame(np.asarray(reports.values), columns=mech.report_columns())
        for table, through_jvm in [(bits.astype(np.int8), True), (bits.astype(bool), True),
                                   (bits.astype(np.float64), False)]:
            calls.clear()
            result = ldpest.estimate(spark.createDataFrame(table).repartition(3), mechanism=mech)
            assert len(calls) == int(through_jvm), (name, table.dtypes.iloc[0])
            for variable in expected.data_vars:
                assert np.array_equal(result[variable].values, expected[variable].values), (name, variable)
    # the likelihood's passes need the reports themselves: not summed
    calls.clear()
    ldpest.estimate(spark.createDataFrame(bits.astype(np.int8)), "frequency-likelihood", mechanism=mech)
    assert not calls


def test_summed_bit_columns_are_checked_like_the_reports_themselves(spark):
    unary = ldpest.mechanism("unary-randomized-response", epsilon=1.0, categories=["a", "b", "c"])
    columns = unary.report_columns()
    good = np.array([[0, 1, 0], [1, 1, 0], [0, 0, 0]] * 10)

    def frame(values):
        return spark.createDataFrame(pd.DataFrame(values, columns=columns).astype("Int64")).repartition(2)

    two = good.copy()
    two[7, 1] = 2
    with pytest.raises(ldpest.DataError, match=f"must be 0/1; column '{columns[1]}' holds values from 0 to 2"):
        ldpest.estimate(frame(two), mechanism=unary)
    huge = good.copy()
    huge[5, :2] = 1 << 62  # their sum overflows a long: refused as a value, not a Spark overflow error
    ansi = spark.conf.get("spark.sql.ansi.enabled", None)
    with pytest.raises(ldpest.DataError, match=f"must be 0/1; column '{columns[0]}' holds values from 0 to {1 << 62}"):
        ldpest.estimate(frame(huge), mechanism=unary)
    assert spark.conf.get("spark.sql.ansi.enabled", None) == ansi
    missing = pd.DataFrame(good, columns=columns).astype("Int64")
    missing.iloc[4, 2] = pd.NA
    with pytest.raises(ldpest.DataError, match=f"column '{columns[2]}' has 1 missing value"):
        ldpest.estimate(spark.createDataFrame(missing), mechanism=unary)
    with pytest.raises(ldpest.DataError, match="no reports"):
        ldpest.estimate(spark.createDataFrame([], ", ".join(f"`{c}` long" for c in columns)), mechanism=unary)
    subsets = ldpest.mechanism("subset-selection", epsilon=1.0, categories=["a", "b", "c"], subset_size=1)
    with pytest.raises(ldpest.DataError, match="must hold 1 ones each; they hold 0 to 2"):
        ldpest.estimate(frame(good), mechanism=subsets)
    half = pd.DataFrame(good, columns=columns).astype(np.float64)
    half.iloc[3, 0] = 0.5  # not an integer column: checked value by value in Python
    with pytest.raises(ldpest.DataError, match="on Spark: .*must be 0/1"):
        ldpest.estimate(spark.createDataFrame(half), mechanism=unary)


def test_the_likelihood_of_histogram_cells_is_the_same_on_spark(spark):
    mech = ldpest.mechanism("oracle-histogram", epsilon=2.0, oracle="unary-randomized-response", low=[0], high=[1],
                            bins=5)
    reports = mech.privatize(np.random.default_rng(3).beta(2, 5, 3000) * 1.1, rng=4)
    assert_passes_agree(spark, reports, mech, "histogram-likelihood")


def assert_passes_agree(spark, reports, mech, estimator):
    """The estimate of several passes on a Spark frame equals the in-memory one bit for bit."""
    expected = ldpest.estimate(reports, estimator)
    assert expected.attrs["mle_passes"] >= 3
    result = ldpest.estimate(frame_of(spark, reports, 3), estimator, mechanism=mech)
    for variable in expected.data_vars:
        assert np.array_equal(result[variable].values, expected[variable].values), variable
    assert result.attrs == expected.attrs


@pytest.mark.parametrize("n", [1, 10, 30])
def test_counted_numbers_at_small_n_and_extreme_epsilon_are_the_in_memory_result(spark, n):
    """n = 1, 10, 30 spread over 3 partitions (some empty), every datum on the upper bound, at a tiny and a large
    epsilon: the counted path gives the in-memory result bit for bit, with the same warnings."""
    for epsilon in (1e-3, 50.0):
        for name, params in [("duchi", {}), ("haar-histogram", {"bins": 8})]:
            mech = ldpest.mechanism(name, epsilon=epsilon, low=0.0, high=1.0, **params)
            reports = mech.privatize(np.ones(n), rng=3)
            with warnings.catch_warnings(record=True) as in_memory:  # Haar levels without a report warn
                warnings.simplefilter("always", ldpest.EstimateWarning)
                expected = ldpest.estimate(reports)
            with warnings.catch_warnings(record=True) as on_spark:
                warnings.simplefilter("always", ldpest.EstimateWarning)
                result = ldpest.estimate(frame_of(spark, reports, 3), mechanism=mech)
            assert [str(w.message) for w in on_spark] == [str(w.message) for w in in_memory]
            for variable in expected.data_vars:
                assert np.array_equal(result[variable].values, expected[variable].values, equal_nan=True), (
                    name, epsilon, variable)


LATTICE_CASES = [("laplace", {"categories": ["a", "b", "c", "d"]}, "frequency",
                  lambda rng, n: rng.choice(["a", "b", "c", "d"], n, p=[0.7, 0.2, 0.1, 0.0])),
                 ("laplace-histogram", {"low": [0.0], "high": [1.0], "bins": 5}, "histogram-mean",
                  lambda rng, n: rng.beta(2, 5, n)),
                 ("oracle-histogram", {"oracle": "laplace", "low": [0.0], "high": [1.0], "bins": 4}, "histogram-mean",
                  lambda rng, n: rng.beta(2, 5, n)),
                 ("laplace-histogram", {"low": [0.0], "high": [1.0], "bins": 5}, "histogram-cdf",  # counts at most 1/2
                  lambda rng, n: rng.beta(2, 5, n))]


@pytest.mark.parametrize("name, params, estimator_name, draw", LATTICE_CASES,
                         ids=[f"{case[0]}-{case[2]}" for case in LATTICE_CASES])
@pytest.mark.parametrize("epsilon", [2.5e-4, 0.05, 1.0, 40.0, 1000.0])  # the smallest and largest accepted too
def test_lattice_columns_are_summed_by_spark_where_they_are_stored(spark, monkeypatch, name, params, estimator_name,
                                                                    draw, epsilon):
    """One-hot Laplace reports and Laplace histogram cells (laplace-histogram, and oracle-histogram with the laplace
    oracle), double columns on the noise's lattice: Spark sums them in long lattice units (or, for histogram-cdf,
    counts the values at most 1/2) in one aggregation, no Python task runs (mapInArrow is gone), and the result is
    the in-memory one bit for bit, at n = 1, 10, 30 and 3000 over 3 partitions (some empty), at a small, a middle
    and a large epsilon."""
    summed = []
    original = spark_engine._number_column_statistics
    monkeypatch.setattr(spark_engine, "_number_column_statistics",
                        lambda *a: summed.append(original(*a)) or summed[-1])
    from pyspark.sql import DataFrame
    monkeypatch.setattr(DataFrame, "mapInArrow", None)
    mech = ldpest.mechanism(name, epsilon=epsilon, **params)
    estimator = ldpest.estimator(estimator_name)
    ansi = spark.conf.get("spark.sql.ansi.enabled", None)  # off while Spark sums, then as it was
    for n in (1, 10, 30, 3000):
        reports = mech.privatize(draw(np.random.default_rng(n), n), rng=n)
        with warnings.catch_warnings():  # a few reports are uninformative, and both estimates say so
            warnings.simplefilter("ignore", ldpest.EstimateWarning)
            expected = ldpest.estimate(reports, estimator)
            found = ldpest.estimate(frame_of(spark, reports, 3), estimator, mechanism=mech)
        assert summed[-1] is not None and summed[-1][0] == n
        in_memory = estimator.aggregate(reports).arrays
        assert set(summed[-1][1]) == set(in_memory)
        for key, value in in_memory.items():
            assert (value == summed[-1][1][key]) if isinstance(value, ldpest.ExactSum) else np.array_equal(
                value, summed[-1][1][key]), key
        for variable in expected.data_vars:
            assert np.array_equal(found[variable].values, expected[variable].values), (n, variable)
        assert found.attrs == expected.attrs
        assert spark.conf.get("spark.sql.ansi.enabled", None) == ansi


def test_lattice_columns_off_the_lattice_or_too_large_go_through_python_with_the_same_result(spark, monkeypatch):
    """A value off the lattice, one of 2^62 steps or more (even where the column's sum would fit a long), and sums
    that overflow a long fall back to every report
    through Arrow: the same result as in memory.  NaN, infinities, a missing value and no rows are refused as the
    reports' own check refuses them."""
    mech = ldpest.mechanism("laplace", epsilon=1.0, categories=["a", "b", "c"])
    values = np.asarray(mech.privatize(np.random.default_rng(4).choice(["a", "b", "c"], 200), rng=5).values)
    step = mech.noise.step
    summed = []
    original = spark_engine._lattice_column_sums
    monkeypatch.setattr(spark_engine, "_lattice_column_sums", lambda *a: summed.append(original(*a)) or summed[-1])

    def frame(table):
        return spark.createDataFrame(pd.DataFrame(table, columns=mech.report_columns())).repartition(2)

    off, large = values.copy(), values.copy()
    off[17, 1] += step / 4
    large[:, 2] = 0.0
    large[3:5, 2] = 2.0 ** 63 * step, -2.0 ** 62 * step  # a long saturates at the first, and the sum fits
    for table in (off, large):
        summed.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ldpest.EstimateWarning)
            expected = ldpest.estimate(ldpest.Reports.from_array(table, mech))
            found = ldpest.estimate(frame(table), mechanism=mech)
        assert summed == [None]
        for variable in expected.data_vars:
            assert np.array_equal(found[variable].values, expected[variable].values), variable
    overflowing = values[:4].copy()
    overflowing[:3, 0] = 1.5 * 2.0 ** 61 * step  # each fits a long; the three sum beyond 2^63 - 1 units
    summed.clear()
    unprojected = ldpest.estimator("frequency", projection="none")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ldpest.EstimateWarning)
        expected = ldpest.estimate(ldpest.Reports.from_array(overflowing, mech), unprojected)
        found = ldpest.estimate(frame(overflowing), unprojected, mechanism=mech)
    assert summed == [None]
    for variable in expected.data_vars:
        assert np.array_equal(found[variable].values, expected[variable].values), variable
    from pyspark.sql import functions as F
    column = mech.report_columns()[1]
    for bad in (float("nan"), float("inf")):  # pandas' NaN would arrive as a missing value: Spark's own here
        spoilt = frame(values).withColumn(column, F.when(F.col(column) > 1, F.lit(bad)).otherwise(F.col(column)))
        with pytest.raises(ldpest.DataError, match="on Spark: reports: .* NaN or infinite"):
            ldpest.estimate(spoilt, mechanism=mech)
    missing = values.copy()
    missing[5, 1] = np.nan  # a missing value in Spark
    with pytest.raises(ldpest.DataError, match=f"on Spark: column '{column}' is missing a value"):
        ldpest.estimate(frame(missing), mechanism=mech)
    with pytest.raises(ldpest.DataError, match="no reports"):
        ldpest.estimate(spark.createDataFrame([], ", ".join(f"`{c}` double" for c in mech.report_columns())),
                        mechanism=mech)


def test_threshold_counts_of_values_that_are_not_numbers_go_through_python(spark):
    """histogram-cdf of Laplace cells: NaN, an infinity and a missing value make Spark's counts stand aside, and the
    reports' own check names them; an infinity that the counts would take as at most 1/2 (minus infinity) too."""
    from pyspark.sql import functions as F
    mech = ldpest.mechanism("laplace-histogram", epsilon=1.0, low=[0.0], high=[1.0], bins=3)
    values = np.asarray(mech.privatize(np.random.default_rng(6).beta(2, 5, 200), rng=7).values)
    column = mech.report_columns()[2]
    frame = spark.createDataFrame(pd.DataFrame(values, columns=mech.report_columns())).repartition(2)
    for bad in (float("nan"), float("inf"), -float("inf")):
        spoilt = frame.withColumn(column, F.when(F.col(column) > 1, F.lit(bad)).otherwise(F.col(column)))
        with pytest.raises(ldpest.DataError, match="on Spark: reports: .* NaN or infinite"):
            ldpest.estimate(spoilt, "histogram-cdf", mechanism=mech)
    missing = values.copy()
    missing[8, 2] = np.nan  # a missing value in Spark
    with pytest.raises(ldpest.DataError, match=f"on Spark: column '{column}' is missing a value"):
        ldpest.estimate(spark.createDataFrame(pd.DataFrame(missing, columns=mech.report_columns())), "histogram-cdf",
                        mechanism=mech)


@pytest.mark.parametrize("family", ["universal", "xxh32"])
def test_local_hashing_reports_out_of_range_are_refused_as_the_reports_own_check_refuses_them(spark, family):
    """Universal family: a = 0, c = P, value = g, a value far beyond a long's products (which wraps, with ANSI mode
    off, and is then refused); xxh32: value = -1, value = g, seed = -1; and a missing value: Spark's counts stand
    aside and the reports' own check names the column."""
    mech = ldpest.mechanism("local-hashing", epsilon=1.0, categories=list(range(6)), hash_family=family)
    values = np.asarray(mech.privatize(np.arange(60) % 6, rng=8).values)
    g = mech.params["hash_range"]
    if family == "universal":
        bad_cells = ((0, 0), (1, mech.params["prime"]), (2, g), (0, 1 << 62))
    else:
        bad_cells = ((0, -1), (0, g), (1, -1))
    for column, bad in bad_cells:
        spoilt = values.copy()
        spoilt[7, column] = bad
        table = pd.DataFrame(spoilt, columns=mech.report_columns())
        with pytest.raises(ldpest.DataError, match=f"on Spark: .*{mech.report_columns()[column]} outside"):
            ldpest.estimate(spark.createDataFrame(table).repartition(2), mechanism=mech)
    missing = pd.DataFrame(values, columns=mech.report_columns()).astype("Int64")
    missing.iloc[4, 1] = pd.NA
    with pytest.raises(ldpest.DataError, match="on Spark: .*missing"):
        ldpest.estimate(spark.createDataFrame(missing), mechanism=mech)


def hashed_reports(mech, n: int):
    """n local-hashing reports of a skewed truth; for the xxh32 family with the peers' 63-bit seeds (so their low
    32 bits and the products that wrap in longs are exercised) and half of them supporting nothing in view."""
    d, rng = len(mech.categories), np.random.default_rng(n)
    reports = mech.privatize(np.minimum(rng.geometric(0.3, n) - 1, d - 1), rng=n)
    if mech.hash_family == "universal":
        return reports
    values = np.asarray(reports.values).copy()
    values[:, 1] = rng.integers(0, 1 << 63, n, dtype=np.int64)
    values[:, 0] = mech.xxh32_hash(values[:, 1].astype(np.uint64), rng.integers(0, d, n))
    values[: n // 2, 0] = rng.integers(0, mech.params["hash_range"], n // 2)
    return ldpest.Reports.from_array(values, mech)


@pytest.mark.parametrize(("family", "epsilon"), [("universal", epsilon) for epsilon in (1e-3, 0.05, 1.0, 40.0, 700.0)]
                         + [("xxh32", epsilon) for epsilon in (1e-3, 1.0, 700.0)])
def test_local_hashing_supports_are_counted_by_spark_for_few_categories(spark, monkeypatch, family, epsilon):
    """Local hashing's reports over at most HASHED_IN_PLACE categories, universal (hash_a, hash_c, value) or the
    peers' xxh32 (value, seed): Spark computes the hashes and counts every category's supports itself in one
    aggregation, no Python task runs, and the result is the in-memory one bit for bit at n = 1, 10, 30 and 3000
    over 3 partitions; one category more goes through Arrow, with the same result."""
    counted = []
    counter = "_linear_hash_statistics" if family == "universal" else "_xxh32_statistics"
    original = getattr(spark_engine, counter)
    monkeypatch.setattr(spark_engine, counter, lambda *a: counted.append(original(*a)) or counted[-1])
    from pyspark.sql import DataFrame
    arrow = DataFrame.mapInArrow
    for d in (3, spark_engine.HASHED_IN_PLACE, spark_engine.HASHED_IN_PLACE + 1):
        monkeypatch.setattr(DataFrame, "mapInArrow", None if d <= spark_engine.HASHED_IN_PLACE else arrow)
        mech = ldpest.mechanism("local-hashing", epsilon=epsilon, categories=list(range(d)), hash_family=family)
        for n in (1, 10, 30, 3000):
            reports = hashed_reports(mech, n)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ldpest.EstimateWarning)
                expected = ldpest.estimate(reports)
                found = ldpest.estimate(frame_of(spark, reports, 3), mechanism=mech)
            if d <= spark_engine.HASHED_IN_PLACE:
                assert counted[-1] is not None and counted[-1][0] == n
                supports = mech.frequency_statistics(np.asarray(reports.values))["support"]
                assert np.array_equal(counted[-1][1]["support"], supports)
            else:
                assert counted[-1] is None
            for variable in expected.data_vars:
                assert np.array_equal(found[variable].values, expected[variable].values), (d, n, variable)
            assert found.attrs == expected.attrs


def test_spark_xxh32_columns_are_the_reference_for_inputs_of_every_length(spark):
    """The column expressions of XXH32 against :func:`ldpest.util.xxh32.xxh32` for decimal inputs of 1 to 15 digits
    (so the 4-byte rounds too, which few categories never reach) under 63-bit seeds."""
    from pyspark.sql import functions as F

    from ldpest.util.xxh32 import xxh32

    rng = np.random.default_rng(6)
    inputs = [0, 9, 10, 99, 123, 1234, 12345, 999999, 1234567, 12345678, 10 ** 14 + 7, 10 ** 15 - 1]
    seeds = np.concatenate([[0, 1, (1 << 32) - 1, 1 << 32, (1 << 63) - 1], rng.integers(0, 1 << 63, 200)])
    frame = spark.createDataFrame(pd.DataFrame({"s": seeds})).repartition(2)
    with spark_engine._sql_conf(frame, spark_engine._NO_ANSI):
        rows = frame.select("s", *spark_engine._xxh32_columns(F.col("s"), inputs)).collect()
    assert len(rows) == seeds.size
    for row in rows:
        assert list(row[1:]) == [xxh32(str(value).encode(), row[0]) for value in inputs], row[0]
