"""The privacy ledger (issue 25, part 3; docs/accounting.md): sequential composition per user and
period, memoised reports counted once per value up to epsilon_inf, refusal over budget with
nothing written for the refused, the CLI's exit status and file safety, concurrent writers, and
estimates per round and over rounds."""

import json
import multiprocessing
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ldpest
from ldpest import DataError, ParameterError
from ldpest.engine.ledger import Ledger, ledger_transaction, period_of

LDPEST = str(Path(sys.executable).with_name("ldpest"))
RR = ldpest.mechanism("randomized-response", epsilon=1.0, categories=["a", "b"])
LGRR = ldpest.mechanism("l-grr", epsilon=1.0, epsilon_inf=2.5, categories=["a", "b", "c"])


def test_apple_budget_sixteen_reports_a_day_and_it_renews():
    """Apple's deployment: epsilon 1 per report, at most 16 per day; the 17th is refused, the next
    day the budget is whole again."""
    ledger = Ledger()
    charges = ledger.charges(RR, ["u"] * 16, budget=16, per="day", at="2026-12-04T09:00")
    assert charges.allowed.all() and not charges.refused
    ledger.record(charges)
    assert ledger.spent("u", "2026-12-04") == 16.0
    again = ledger.charges(RR, ["u"], budget=16, per="day", at="2026-12-04T23:59")
    assert again.refused == {"u": 17.0} and not again.allowed.any()
    assert "would exceed the budget of 16 for 2026-12-04" in again.message()
    tomorrow = ledger.charges(RR, ["u"], budget=16, per="day", at="2026-12-05T00:01")
    assert tomorrow.allowed.all() and tomorrow.period == "2026-12-05"


def test_sums_are_exact_enough_for_decimal_epsilons():
    ledger = Ledger()
    tenth = ldpest.mechanism("randomized-response", epsilon=0.1, categories=["a", "b"])
    charges = ledger.charges(tenth, ["u"] * 10, budget=1.0, per="all")
    assert charges.allowed.all()  # 0.1 added ten times is 0.9999999999999999 or 1.0000000000000002


def test_a_user_over_budget_gets_nothing_others_get_everything():
    ledger = Ledger()
    charges = ledger.charges(RR, ["a", "b", "a", "b", "b"], budget=2, per="day", at="2026-12-04")
    np.testing.assert_array_equal(charges.allowed, [True, False, True, False, False])
    assert charges.refused == {"b": 3.0}
    ledger.record(charges)
    assert ledger.spent("a", "2026-12-04") == 2.0 and ledger.spent("b") == {}


def test_memoised_reports_cost_at_most_epsilon_inf_per_value():
    """m reports of one value cost min(m epsilon_1, epsilon_inf): 1, 1, 0.5, then nothing; a new
    value starts again; the cap holds across periods and runs."""
    ledger = Ledger()
    charges = ledger.charges(LGRR, ["u"] * 5, ["a"] * 5, budget=100, memoised=True, at="2026-12-04")
    np.testing.assert_allclose(charges.charge, [1, 1, 0.5, 0, 0])
    ledger.record(charges)
    later = ledger.charges(LGRR, ["u"] * 3, ["a", "b", "b"], budget=100, memoised=True, at="2026-12-05")
    np.testing.assert_allclose(later.charge, [0, 1, 1])
    unmemoised = ledger.charges(LGRR, ["u"] * 5, ["a"] * 5, budget=100, at="2026-12-05")
    np.testing.assert_allclose(unmemoised.charge, [1] * 5)
    with pytest.raises(ParameterError, match="no permanent response"):
        ledger.charges(RR, ["u"], ["a"], budget=1, memoised=True)


def test_the_ledger_stores_no_value(tmp_path):
    ledger = Ledger()
    ledger.record(ledger.charges(LGRR, ["u"], ["secret-answer"], budget=10, memoised=True))
    ledger.save(tmp_path / "ledger.json")
    text = (tmp_path / "ledger.json").read_text()
    assert "secret-answer" not in text
    reopened = Ledger.open(tmp_path / "ledger.json")
    assert reopened.charges(LGRR, ["u"] * 2, ["secret-answer"] * 2, budget=10, memoised=True).charge.tolist() == \
        [1.0, 0.5]


def test_periods_and_bad_input(tmp_path):
    assert period_of("2026-12-04T10:00", "day") == "2026-12-04"
    assert period_of("2026-12-04", "week") == "2026-W49"
    assert period_of("2026-12-04", "month") == "2026-12"
    assert period_of("2026-12-04", "year") == "2026"
    assert period_of("2026-12-04", "all") == "all"
    assert period_of("2026-12-04T23:30-05:00", "day") == "2026-12-05"  # UTC
    with pytest.raises(ParameterError, match="per must be one of"):
        period_of("2026-12-04", "hour")
    with pytest.raises(ParameterError, match="not an ISO date"):
        period_of("yesterday", "day")
    with pytest.raises(ParameterError, match="budget must be a positive"):
        Ledger().charges(RR, ["u"], budget=0)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "ldpest-ledger"}))
    with pytest.raises(DataError, match="not an ldpest ledger"):
        Ledger.open(bad)


def _charge_once(path: str) -> None:
    with ledger_transaction(path) as ledger:
        ledger.record(ledger.charges(RR, ["u"], budget=1000, per="all"))


def test_two_writers_lose_no_charge(tmp_path):
    path = str(tmp_path / "ledger.json")
    context = multiprocessing.get_context("spawn")
    with context.Pool(2) as pool:
        pool.map(_charge_once, [path] * 40)
    assert Ledger.open(path).spent("u", "all") == 40.0


# -- the CLI -----------------------------------------------------------------------------------------
def write_day(path: Path, users: list[str], answers: list[str]) -> Path:
    path.write_text("user,answer\n" + "".join(f"{u},{a}\n" for u, a in zip(users, answers, strict=True)))
    return path


def privatize(tmp_path, data, output, *extra):
    return subprocess.run([LDPEST, "privatize", str(data), "-c", "answer", "--user-column", "user", "-o", str(output),
                           "--seed", "1", "--at", "2026-12-04", *extra], capture_output=True, text=True,
                          cwd=tmp_path)


def test_cli_refuses_over_budget_users_and_writes_the_others(tmp_path):
    data = write_day(tmp_path / "day.csv", ["u1"] * 3 + ["u2"] * 1, ["a", "b", "a", "b"])
    options = ["-m", "randomized-response", "-e", "2", "--categories", "a,b", "--ledger", "ledger.json",
               "--budget", "4"]
    result = privatize(tmp_path, data, tmp_path / "out.nc", *options)
    assert result.returncode == 3, result.stderr
    assert result.stderr.strip().splitlines()[-1] == \
        "ldpest: error: 1 user(s) would exceed the budget of 4 for 2026-12-04: 'u1' (6); no report made for them"
    assert "Traceback" not in result.stderr
    reports = ldpest.read_reports(tmp_path / "out.nc")
    assert reports.n == 1
    ledger = Ledger.open(tmp_path / "ledger.json")
    assert ledger.spent("u2", "2026-12-04") == 2.0 and ledger.spent("u1") == {}
    before = (tmp_path / "ledger.json").read_text()
    # everyone refused: nothing written, the ledger unchanged, one line, exit 2
    everyone = write_day(tmp_path / "again.csv", ["u2"] * 2, ["a", "a"])
    result = privatize(tmp_path, everyone, tmp_path / "none.csv", *options)
    assert result.returncode == 2 and "nothing written" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "none.csv").exists()
    assert (tmp_path / "ledger.json").read_text() == before


def test_cli_memoised_rounds_and_ledger_query(tmp_path):
    data = write_day(tmp_path / "day.csv", ["u1", "u2", "u3"], ["a", "b", "c"])
    options = ["-m", "l-grr", "-e", "1", "-p", "epsilon_inf=2.5", "--categories", "a,b,c", "--state", "state.json",
               "--ledger", "ledger.json", "--budget", "16"]
    rounds = []
    for i in range(4):
        result = privatize(tmp_path, data, tmp_path / f"round{i}.nc", *options)
        assert result.returncode == 0, result.stderr
        rounds.append(ldpest.read_reports(tmp_path / f"round{i}.nc"))
    ledger = Ledger.open(tmp_path / "ledger.json")
    assert ledger.spent("u1", "2026-12-04") == 2.5  # 1 + 1 + 0.5 + 0: capped at epsilon_inf
    shown = subprocess.run([LDPEST, "ledger", str(tmp_path / "ledger.json"), "--user", "u1"], capture_output=True,
                           text=True)
    assert shown.returncode == 0 and "2026-12-04" in shown.stdout and "2.5" in shown.stdout
    state = json.loads((tmp_path / "state.json").read_text())
    assert sorted(state["secrets"]) == ["u1", "u2", "u3"]
    with pytest.warns(ldpest.EstimateWarning, match="uninformative"):  # 3 reports a round
        result = ldpest.estimate_rounds(rounds)
    assert result.sizes["round"] == 4 and "over_rounds" in result


def test_cli_bad_options(tmp_path):
    data = write_day(tmp_path / "day.csv", ["u1"], ["a"])
    base = ["-m", "randomized-response", "-e", "1", "--categories", "a,b"]
    result = subprocess.run([LDPEST, "privatize", str(data), "-c", "answer", "-o", "x.csv", *base, "--ledger", "l.json",
                             "--budget", "3"], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 2 and "--user-column" in result.stderr
    result = privatize(tmp_path, data, tmp_path / "x.csv", *base, "--ledger", "l.json")
    assert result.returncode == 2 and "--budget" in result.stderr
    result = privatize(tmp_path, data, tmp_path / "x.csv", *base, "--state", "s.json")
    assert result.returncode == 2 and "no permanent response" not in result.stderr and "has none" in result.stderr
    result = subprocess.run([LDPEST, "privatize", str(data), "-c", "answer", "--user-column", "who", "-o", "x.csv",
                             *base], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 2 and "who" in result.stderr and "Traceback" not in result.stderr
    for name in ("x.csv", "l.json", "s.json"):
        assert not (tmp_path / name).exists()


# -- estimates per round and over rounds --------------------------------------------------------------
def test_over_rounds_stderr_bounds_the_spread_of_memoised_rounds():
    """Memoised rounds are correlated: the average over rounds has a standard deviation above the
    independent-rounds value, and at most the reported bound (200 repetitions, 5 standard errors of
    a standard deviation)."""
    mechanism = ldpest.mechanism("l-grr", epsilon=2.0, epsilon_inf=3.0, categories=["a", "b", "c"])
    values = np.array(["a"] * 300 + ["b"] * 200 + ["c"] * 100)
    users = [f"u{i}" for i in range(len(values))]
    averages, bounds = [], []
    rng = np.random.default_rng(3)
    for _ in range(200):
        state = ldpest.ClientState()
        result = ldpest.estimate_rounds([mechanism.privatize_memoised(values, users, state, rng=rng) for _ in range(4)])
        averages.append(result["over_rounds"].values)
        bounds.append(result["over_rounds_stderr"].values)
    spread, bound = np.std(averages, axis=0, ddof=1), np.mean(bounds, axis=0)
    assert np.all(spread <= bound * (1 + 5 / np.sqrt(400)))
    assert np.all(spread > bound / 2 * (1 - 5 / np.sqrt(400)))  # well above independent rounds' bound / 2


def test_estimate_rounds_refuses_mixed_mechanisms():
    a = RR.privatize(["a", "b"], rng=1)
    b = ldpest.mechanism("randomized-response", epsilon=2.0, categories=["a", "b"]).privatize(["a"], rng=1)
    with pytest.raises(DataError, match="different mechanisms"):
        ldpest.estimate_rounds([a, b])
    with pytest.raises(DataError, match="no rounds"):
        ldpest.estimate_rounds([])
