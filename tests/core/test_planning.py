"""The "auto" chooser and the accuracy planner (ldpest.engine.planning, `ldpest plan`)."""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest
from plugin_fixtures import EXAMPLE_PLUGIN, pip_install_target
from typer.testing import CliRunner

import ldpest
from ldpest.cli import app
from ldpest.engine.planning import frequency_oracle_names, plan

GRID_D = [2, 10, 100, 10_000]
GRID_EPSILON = [0.1, 0.5, 1.0, 2.0, 4.0, 8.0]
Z = 5.0


def textbook_oue_worst_case(d: int, epsilon: float) -> float:
    """Wang et al.'s OUE: p = 1/2, q = 1/(e^eps + 1); summed variance peaks at the uniform theta."""
    p, q = 0.5, 1 / (math.exp(epsilon) + 1)
    pi = q + (p - q) / d
    return d * pi * (1 - pi) / (p - q) ** 2


@pytest.mark.parametrize("d", GRID_D)
def test_auto_is_never_worse_than_rr_oue_and_subset_selection(d):
    categories = list(range(d))
    for epsilon in GRID_EPSILON:
        chosen = ldpest.mechanism("auto", epsilon=epsilon, categories=categories)
        rivals = [ldpest.mechanism(name, epsilon=epsilon, categories=categories).worst_case_variance()
                  for name in ("randomized-response", "subset-selection")]
        best = min(*rivals, textbook_oue_worst_case(d, epsilon))
        assert chosen.worst_case_variance() <= best * (1 + 1e-9), (d, epsilon, chosen.name)


def test_auto_records_its_choice_in_the_spec():
    chosen = ldpest.mechanism("auto", epsilon=1.0, categories=list("abcdefghij"))
    assert chosen.name == "subset-selection" and chosen.spec["subset_size"] == 3
    reports = chosen.privatize(list("abcabc"), rng=np.random.default_rng(0))
    assert reports.spec == chosen.spec and ldpest.mechanism_from_spec(reports.spec) == chosen
    assert ldpest.mechanism("auto", epsilon=8.0, categories=["yes", "no"]).name == "randomized-response"


def test_auto_takes_epsilon_and_categories_only():
    with pytest.raises(ldpest.ParameterError, match="epsilon and categories only; got also subset_size"):
        ldpest.mechanism("auto", epsilon=1.0, categories=["a", "b"], subset_size=1)
    with pytest.raises(ldpest.ParameterError, match="epsilon"):
        ldpest.mechanism("auto", categories=["a", "b"])
    with pytest.raises(ldpest.ParameterError):
        ldpest.mechanism("auto", epsilon=-1.0, categories=["a", "b"])


class _Declared(ldpest.FrequencyOracle, ldpest.Mechanism):
    """A third-party oracle that declares a (fictitious) tiny variance."""

    name = "third-party-oracle"
    family = "multinomial"
    default_estimator = "frequency"

    def __init__(self, *, epsilon, categories):
        self._set_params(epsilon=epsilon, categories=list(categories))

    def encode_data(self, data):
        return self.encode_labels(data)

    def _privatize(self, codes, rng):
        return codes

    def encode_reports(self, values):
        return self.encode_labels(values, "reports")

    def frequency_statistics(self, reports):
        return {"counts": np.bincount(reports, minlength=len(self.categories))}

    def frequency_estimate(self, stats, n):
        return stats["counts"] / n, np.full(len(self.categories), 0.1)

    def worst_case_variance(self):
        return 1e-9

    def worst_case_category_variance(self):
        return 1e-9

    def report_bits(self):
        return 1.0


class _Silent(_Declared):
    name = "silent-oracle"
    worst_case_variance = ldpest.FrequencyOracle.worst_case_variance


class _ThirdParty:
    @ldpest.hookimpl
    def register_mechanisms(self, register):
        register(_Declared)
        register(_Silent)


def test_third_party_oracles_that_declare_their_variance_take_part(fresh_registry):
    ldpest.register_plugin(_ThirdParty(), name="third-party")
    names = frequency_oracle_names()
    assert "third-party-oracle" in names and "silent-oracle" not in names
    assert ldpest.mechanism("auto", epsilon=1.0, categories=["a", "b", "c"]).name == "third-party-oracle"


def test_the_example_oue_plugin_takes_part_once_installed(tmp_path, monkeypatch, fresh_registry):
    monkeypatch.syspath_prepend(str(pip_install_target(EXAMPLE_PLUGIN, tmp_path / "site")))
    sys.modules.pop("ldpest_oue", None)
    ldpest.reset_registry()
    assert "optimized-unary-encoding" in frequency_oracle_names()
    oue = ldpest.mechanism("optimized-unary-encoding", epsilon=2.0, categories=list(range(100)))
    assert oue.worst_case_variance() == pytest.approx(textbook_oue_worst_case(100, 2.0), rel=1e-12)
    table = plan(d=100, epsilon=2.0, n=10_000)
    assert "optimized-unary-encoding" in set(table["mechanism"])


# --- figures against simulation ----------------------------------------------------------------
def _simulated_estimates(mech, theta, n, reps, rng):
    """theta_hat over reps: the exact aggregate simulation where one exists, else privatise."""
    if hasattr(mech, "simulate_frequency_statistics"):
        return np.array([mech.frequency_estimate(mech.simulate_frequency_statistics(theta, n, rng), n)[0]
                         for _ in range(reps)])
    data = rng.choice(len(theta), size=n * reps, p=theta)
    values = mech.privatize(data, rng=rng).values
    return np.array([mech.frequency_estimate(mech.frequency_statistics(values[r * n:(r + 1) * n]), n)[0]
                     for r in range(reps)])


@pytest.mark.parametrize("d,epsilon,reps", [(2, 1.0, 40_000), (10, 0.5, 20_000), (10, 8.0, 20_000),
                                            (100, 1.0, 2_000), (100, 4.0, 2_000)])
def test_auto_worst_case_variance_matches_simulation_within_3_percent(d, epsilon, reps):
    """The worst case of every oracle auto picks here is attained at the uniform distribution
    (tests/plugins/test_frequency_oracles.py); the summed variance of theta_hat simulated there
    is within 3% of the declared figure, and 3% is more than 5 Monte Carlo standard errors."""
    rng = np.random.default_rng(11)
    mech = ldpest.mechanism("auto", epsilon=epsilon, categories=list(range(d)))
    uniform = np.full(d, 1 / d)
    assert mech.worst_case_variance() == pytest.approx(mech.frequency_variance(uniform).sum(), rel=1e-12)
    n = 100
    estimates = _simulated_estimates(mech, uniform, n, reps, rng)
    simulated = estimates.var(axis=0, ddof=1).sum() * n
    monte_carlo_se = math.sqrt(2 / (reps - 1)) * np.sqrt((mech.frequency_variance(uniform) ** 2).sum())
    assert Z * monte_carlo_se < 0.03 * mech.worst_case_variance()
    assert abs(simulated / mech.worst_case_variance() - 1) < 0.03, (mech.name, simulated, mech.worst_case_variance())


def _worst_single_theta(mech, d):
    """The distribution, on a fine grid, at which category 0 has its largest variance: mass t on
    category 0 and the rest on category 1 (the same Hadamard block when blocks hold several
    categories) or spread evenly over the others."""
    t = np.linspace(0, 1, 4001)[:, None]
    to_one = t * np.eye(d)[0] + (1 - t) * np.eye(d)[1]
    spread = t * np.eye(d)[0] + (1 - t) * np.append(0, np.full(d - 1, 1 / (d - 1)))
    candidates = np.concatenate([to_one, spread])
    return candidates[np.argmax([mech.frequency_variance(theta)[0] for theta in candidates])]


@pytest.mark.parametrize("name,d,epsilon", [("randomized-response", 5, 1.0), ("subset-selection", 10, 1.0),
                                            ("local-hashing", 10, 2.0), ("hadamard-response", 12, 3.0),
                                            ("unary-randomized-response", 6, 0.5)])
def test_planner_standard_error_matches_simulation_within_3_percent(name, d, epsilon):
    n, reps = 100, 20_000
    [row] = plan(name, d=d, epsilon=epsilon, n=n).to_dict("records")
    mech = ldpest.mechanism(name, epsilon=epsilon, categories=list(range(d)))
    theta = _worst_single_theta(mech, d)
    assert mech.frequency_variance(theta)[0] == pytest.approx(mech.worst_case_category_variance(), rel=1e-5)
    estimates = _simulated_estimates(mech, theta, n, reps, np.random.default_rng(5))[:, 0]
    simulated = estimates.std(ddof=1)
    assert Z * row["stderr"] / math.sqrt(2 * (reps - 1)) < 0.03 * row["stderr"]
    assert abs(simulated / row["stderr"] - 1) < 0.03, (simulated, row["stderr"])


def test_planner_solves_for_n_and_epsilon_minimally():
    [row] = plan("subset-selection", d=50, epsilon=1.0, stderr=0.01).to_dict("records")
    mech = ldpest.mechanism("subset-selection", epsilon=1.0, categories=list(range(50)))
    assert math.sqrt(mech.worst_case_category_variance() / row["n"]) <= 0.01
    assert math.sqrt(mech.worst_case_category_variance() / (row["n"] - 1)) > 0.01
    [row] = plan("randomized-response", d=4, n=10_000, stderr=0.01).to_dict("records")
    at = lambda e: math.sqrt(ldpest.mechanism("randomized-response", epsilon=e,  # noqa: E731
                                              categories=list(range(4))).worst_case_category_variance() / 10_000)
    assert at(row["epsilon"]) <= 0.01 < at(row["epsilon"] / 1.002)


def test_planner_table_marks_the_auto_choice_and_report_sizes():
    table = plan(d=100, epsilon=1.0, n=10_000)
    assert set(frequency_oracle_names()) == set(table["mechanism"])
    assert table.loc[table["auto"], "mechanism"].tolist() == ["subset-selection"]
    bits = dict(zip(table["mechanism"], table["report_bits"], strict=True))
    assert bits["randomized-response"] == pytest.approx(math.log2(100)) and bits["unary-randomized-response"] == 100


@pytest.mark.parametrize("kwargs,message", [
    ({"d": 10, "epsilon": 1.0}, "exactly two of epsilon, n and stderr"),
    ({"d": 10, "epsilon": 1.0, "n": 10, "stderr": 0.1}, "exactly two"),
    ({"epsilon": 1.0, "n": 10}, "needs d"),
    ({"d": 10, "n": 10, "stderr": 1e-6}, "no epsilon up to 30 reaches"),
    ({"d": 10, "epsilon": 1.0, "n": 0}, "n must be"),
])
def test_planner_bad_requests_are_clear_errors(kwargs, message):
    with pytest.raises(ldpest.ParameterError, match=message):
        plan("subset-selection", **kwargs)


def test_planner_refuses_unknown_mechanisms():
    with pytest.raises(ldpest.ParameterError, match="not a frequency oracle that declares its variance"):
        plan("laplace-histogram", d=10, epsilon=1.0, n=10)


def test_cli_plan_prints_a_table_and_writes_json(tmp_path):
    runner = CliRunner()
    out = tmp_path / "plan.json"
    result = runner.invoke(app, ["plan", "-d", "100", "-e", "1", "--n", "1e5", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "subset-selection" in result.stdout and "<- auto" in result.stdout
    records = json.loads(out.read_text())
    assert {r["mechanism"] for r in records} == set(frequency_oracle_names())
    solved = runner.invoke(app, ["plan", "-d", "20", "-m", "auto", "--stderr", "0.01", "-e", "2", "--json"])
    [row] = json.loads(solved.stdout)
    assert row["auto"] and row["n"] == plan("auto", d=20, epsilon=2.0, stderr=0.01)["n"][0]


@pytest.mark.parametrize("args,fragment", [
    (["plan", "-d", "10", "-e", "1"], "exactly two"),
    (["plan", "-d", "10", "-e", "1", "--n", "2.5"], "--n must be a whole number"),
    (["plan", "-d", "10", "-e", "1", "--n", "10", "-o", "x.csv"], "written as .json"),
    (["plan", "-d", "10", "-e", "1", "--n", "10", "-m", "nope"], "not a frequency oracle"),
])
def test_cli_plan_bad_input_is_one_line(args, fragment, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ldpest: error: ") and fragment in lines[0], result.stderr
    assert not list(tmp_path.iterdir())


def test_cli_privatize_with_auto_says_what_it_chose(tmp_path):
    data = tmp_path / "answers.csv"
    data.write_text("answer\n" + "\n".join(["yes", "no", "maybe"] * 100) + "\n")
    out = tmp_path / "reports.nc"
    result = CliRunner().invoke(app, ["privatize", str(data), "-c", "answer", "-m", "auto", "-e", "1",
                                      "--categories", "yes,no,maybe", "-o", str(out), "--seed", "1"])
    assert result.exit_code == 0, result.output
    chosen = ldpest.mechanism("auto", epsilon=1.0, categories=["yes", "no", "maybe"])
    assert f"auto chose {chosen.name}" in result.stderr
    assert ldpest.read_reports(out).spec == chosen.spec


def test_planner_refuses_sizes_it_cannot_serve_with_clear_errors(tmp_path):
    """Issue 26: -d 1000000000 was a MemoryError with no message, --n 1e400 an internal error."""
    with pytest.raises(ldpest.ParameterError, match="up to 10,000,000 categories"):
        plan(d=10 ** 9, epsilon=1.0, n=10 ** 6)
    import subprocess
    import sys
    from pathlib import Path

    cli = str(Path(sys.executable).with_name("ldpest"))
    for args, fragment in ((["-d", "1000000000", "-e", "1", "--n", "1e6"], "up to 10,000,000"),
                           (["-d", "10", "-e", "1", "--n", "1e400"], "--n must be")):
        done = subprocess.run([cli, "plan", *args], capture_output=True, text=True)
        assert done.returncode == 2 and fragment in done.stderr and "internal error" not in done.stderr


def test_subset_selection_report_size_from_log_gamma():
    from ldpest_multinomial.subset import log2_binomial

    assert log2_binomial(2, 1) == 1.0  # exact where it matters: ties with randomized response at d = 2
    for d, k in ((20_000, 3), (50_000, 2_000), (100_000, 30_000)):
        assert log2_binomial(d, k) == pytest.approx(math.log2(math.comb(d, k)), rel=1e-12)
