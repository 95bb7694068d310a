"""Shuffle amplification (issue 25, part 1; docs/accounting.md): the published values, an exact
enumeration that the computed pair matches, FMT's condition, each mechanism's (p, beta, q), the
plan, the CLI and bad input."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import ldpest
from ldpest.contract.base import channel_variation_ratio
from ldpest.privacy.shuffle import (
    VariationRatio,
    clone_epsilon,
    closed_form_epsilon,
    closed_form_valid,
    pair_epsilon,
    variation_ratio_epsilon,
)

LDPEST = str(Path(sys.executable).with_name("ldpest"))


def close(value, expected):
    """The issue's tolerance: within 3% or 0.0002, whichever is larger."""
    return abs(value - expected) <= max(0.03 * abs(expected), 0.0002)


def reference_olh(epsilon):
    """Wang et al.'s table for local hashing with g = round(e^eps + 1) (ldpest's default g):
    ``beta = (e^eps - 1) / (e^eps + g - 1)``, collisions not counted."""
    p = math.exp(epsilon)
    g = round(p + 1)
    return VariationRatio(p, (p - 1) / (p + g - 1), p)


def krr(epsilon, d=100):
    return ldpest.mechanism("randomized-response", epsilon=epsilon, categories=list(range(d)))


# n, epsilon0, delta, generic, k-RR d = 100, OLH, FMT closed form (None: not valid there)
TABLE = [(10 ** 6, 4, 1e-6, 0.0344, 0.0200, 0.0239, 0.2016),
         (10 ** 4, 8, 1e-6, 8.00, 4.67, 1.84, None),
         (10 ** 6, 1, 1e-8, 0.0050, 0.0009, 0.0040, None)]


@pytest.mark.parametrize(("n", "epsilon0", "delta", "generic", "k_rr", "olh", "closed"), TABLE)
def test_the_published_values(n, epsilon0, delta, generic, k_rr, olh, closed):
    assert close(variation_ratio_epsilon(VariationRatio.generic(epsilon0), n, delta)[1], generic)
    assert close(ldpest.shuffle_epsilon(krr(epsilon0), n, delta).bounds["variation-ratio"][1], k_rr)
    assert close(variation_ratio_epsilon(reference_olh(epsilon0), n, delta)[1], olh)
    if closed is None:
        assert closed_form_epsilon(epsilon0, n, delta) is None or epsilon0 == 1
    else:
        assert close(closed_form_epsilon(epsilon0, n, delta), closed)


def test_fmt_numerical_bound_lies_in_their_bracket():
    lower, upper = clone_epsilon(4, 10 ** 6, 1e-6)
    assert 0.0492 * 0.97 <= lower <= upper <= 0.0501 * 1.03 and upper - lower < 1e-6


def test_no_amplification_where_none_is_shown():
    bound = ldpest.shuffle_epsilon(8.0, 10 ** 4, 1e-6)
    assert close(bound.epsilon, 8.0) and bound.bounds["clones, closed form"] == (None, None)


def exact_krr_epsilon(n, epsilon, d, delta):
    """The shuffled k-RR reports of (x_0, x_2, ..., x_2) against (x_1, x_2, ..., x_2), by
    enumeration: the multiset is the counts; only (N_0, N_1) differ in law between the two."""
    mech = krr(epsilon, d)
    keep, other = mech.p, mech.q
    grid = np.arange(n + 1)
    # the others: (A_0, A_1) multinomial(n - 1; other, other, rest)
    a0 = stats.binom.pmf(grid, n - 1, other)[:, None]
    trials = np.maximum((n - 1) - grid[:, None], 0)  # rows past n - 1 have no mass (a0 = 0 there)
    a1 = stats.binom.pmf(grid[None, :], trials, other / (1 - other))
    others = a0 * a1
    shifted_0 = np.roll(others, 1, axis=0)
    shifted_0[0] = 0
    shifted_1 = np.roll(others, 1, axis=1)
    shifted_1[:, 0] = 0
    rest = 1 - keep - other
    first = keep * shifted_0 + other * shifted_1 + rest * others
    second = other * shifted_0 + keep * shifted_1 + rest * others
    return pair_epsilon(first.ravel(), second.ravel(), delta)


@pytest.mark.parametrize(("n", "epsilon", "d", "delta"), [(20, 2.0, 3, 1e-3), (60, 1.0, 5, 1e-4),
                                                         (200, 3.0, 10, 1e-5), (400, 0.5, 3, 1e-6)])
def test_the_computed_pair_is_the_exact_shuffle_of_krr(n, epsilon, d, delta):
    """k-RR realises the variation-ratio pair: the epsilon enumerated from the multinomial counts
    of two neighbouring data sets lies in the computed bracket (so the lower bound is one)."""
    exact = exact_krr_epsilon(n, epsilon, d, delta)
    bound = ldpest.shuffle_epsilon(krr(epsilon, d), n, delta)
    lower, upper = bound.bounds["variation-ratio"]
    assert lower - 1e-6 <= exact <= upper + 1e-6
    assert bound.lower <= exact + 1e-6 and bound.epsilon >= exact - 1e-6


def test_a_pair_with_a_wrong_threshold_would_be_caught():
    """The enumeration can tell: a bound computed for a weaker mechanism (a larger beta) is not
    inside the exact value's bracket."""
    n, epsilon, d, delta = 200, 3.0, 10, 1e-5
    exact = exact_krr_epsilon(n, epsilon, d, delta)
    mech = krr(epsilon, d).variation_ratio()
    looser = VariationRatio(mech.p, mech.beta * 1.2, mech.q)
    assert variation_ratio_epsilon(looser, n, delta)[0] > exact + 1e-3


@pytest.mark.parametrize("n", [10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6])
@pytest.mark.parametrize("delta", [1e-4, 1e-6, 1e-9])
def test_fmt_condition_with_log_2_over_delta_holds_numerically(n, delta):
    """apple/ml-shuffling-amplification#1: the code checks log(4 / delta), the paper log(2 /
    delta).  Between the two, and at the paper's edge, the closed form stays above FMT's own
    numerical bound (proven), so the paper's weaker condition is the one ldpest applies."""
    strict = math.log(n / (16 * math.log(4 / delta)))
    paper = math.log(n / (16 * math.log(2 / delta)))
    for epsilon0 in (max(strict, 0.01), (max(strict, 0.01) + paper) / 2, paper):
        assert closed_form_valid(epsilon0, n, delta)
        assert closed_form_epsilon(epsilon0, n, delta) >= clone_epsilon(epsilon0, n, delta)[1]
    assert not closed_form_valid(paper + 1e-9, n, delta)
    assert closed_form_epsilon(paper + 1e-9, n, delta) is None


@pytest.mark.parametrize("epsilon", [0.5, 2.0, 6.0])
def test_each_mechanisms_parameters_hold_on_its_channel(epsilon):
    """The closed forms of k-RR, unary and local hashing against their enumerated channels: ``p``
    at least the worst ratio, ``beta`` at least every total variation, and not looser than 1e-9."""
    cases = [krr(epsilon, 4), ldpest.mechanism("unary-randomized-response", epsilon=epsilon, categories=list(range(4))),
             ldpest.mechanism("local-hashing", epsilon=epsilon, categories=list(range(4)), prime=5,
                              hash_range=3)]
    for mech in cases:
        declared, enumerated = mech.variation_ratio(), channel_variation_ratio(mech.channel())
        assert declared.p >= enumerated.p * (1 - 1e-12) and declared.beta >= enumerated.beta * (1 - 1e-12)
        assert declared.beta <= enumerated.beta * (1 + 1e-9) + 1e-15
        assert declared.p <= math.exp(epsilon) * (1 + 1e-12)


def test_local_hashing_counts_collisions_and_is_tighter_than_the_table():
    mech = ldpest.mechanism("local-hashing", epsilon=1.0, categories=list(range(100)))
    own = ldpest.shuffle_epsilon(mech, 10 ** 6, 1e-8).bounds["variation-ratio"][1]
    table = variation_ratio_epsilon(reference_olh(1.0), 10 ** 6, 1e-8)[1]
    kappa = float(mech.collision_probability)
    assert own < table and mech.variation_ratio().beta == pytest.approx((1 - kappa) * reference_olh(1.0).beta,
                                                                        rel=1e-9)


@pytest.mark.parametrize("name", ["hadamard-response", "duchi"])
def test_other_mechanisms_take_their_channel_or_the_generic_parameters(name):
    params = {"categories": list(range(6))} if name == "hadamard-response" else {"low": 0, "high": 1}
    mech = ldpest.mechanism(name, epsilon=1.5, **params)
    found = mech.variation_ratio()
    assert found.p <= math.exp(1.5) * (1 + 1e-12) and found.beta <= math.tanh(0.75) * (1 + 1e-12)
    bound = ldpest.shuffle_epsilon(mech, 10 ** 5, 1e-6)
    assert bound.lower is None or bound.lower <= bound.epsilon
    assert bound.epsilon <= bound.bounds["variation-ratio, generic"][1] + 1e-12


@pytest.mark.parametrize(("epsilon0", "n", "delta"), [(0.1, 10, 1e-3), (1.0, 1000, 1e-6), (30.0, 10 ** 5, 1e-6),
                                                      (1e-4, 2, 0.5)])
def test_bounds_are_ordered_at_the_edges(epsilon0, n, delta):
    for local in (epsilon0, krr(epsilon0, 3)):
        bound = ldpest.shuffle_epsilon(local, n, delta)
        assert 0 <= bound.epsilon <= epsilon0 * (1 + 1e-12)
        for low, high in bound.bounds.values():
            assert high is None or low is None or low <= high
        if bound.lower is not None:
            assert bound.lower <= bound.epsilon + 1e-9
        json.dumps(bound.to_dict())


@pytest.mark.parametrize(("args", "message"), [((4.0, 1, 1e-6), "n must be"), ((4.0, 10.5, 1e-6), "n must be"),
                                               ((4.0, 100, 0.0), "delta must"), ((4.0, 100, 1.0), "delta must"),
                                               ((-1.0, 100, 1e-6), "epsilon"), (("rr", 100, 1e-6), "mechanism")])
def test_bad_input_is_refused(args, message):
    with pytest.raises(ldpest.ParameterError, match=message):
        ldpest.shuffle_epsilon(*args)


def test_the_plan_solves_for_n_and_for_epsilon0():
    row = ldpest.plan_shuffle(0.1, 1e-6, epsilon=4.0)
    assert row["solved_for"] == "n" and row["central_epsilon"] <= 0.1
    fewer = ldpest.shuffle_epsilon(4.0, int(row["n"] * 0.99), 1e-6)
    assert fewer.epsilon > 0.1
    row = ldpest.plan_shuffle(0.05, 1e-6, n=10 ** 5, mechanism="randomized-response", categories=list(range(100)))
    assert row["solved_for"] == "epsilon0" and row["central_epsilon"] <= 0.05
    more = ldpest.shuffle_epsilon(krr(row["epsilon0"] * 1.01), 10 ** 5, 1e-6)
    assert more.epsilon > 0.05
    with pytest.raises(ldpest.ParameterError, match="not both"):
        ldpest.plan_shuffle(0.1, 1e-6, epsilon=4.0, n=100)


def test_the_cli_plans_and_refuses(tmp_path):
    done = subprocess.run([LDPEST, "plan", "--shuffle", "0.1", "--delta", "1e-6", "--epsilon", "4", "--json"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["central_epsilon"] <= 0.1
    done = subprocess.run([LDPEST, "plan", "--shuffle", "0.05", "--delta", "1e-6", "--epsilon", "4", "--n", "1e6",
                           "-m", "randomized-response", "-d", "100"], capture_output=True, text=True)
    assert done.returncode == 0 and "0.019792" in done.stdout and "target 0.05: met" in done.stdout
    kept = tmp_path / "plan.json"
    kept.write_text("old")
    for bad, message in ((["--shuffle", "0.1", "--epsilon", "4"], "--delta"),
                         (["--shuffle", "0.1", "--delta", "2", "--epsilon", "4"], "delta must"),
                         (["--shuffle", "0.1", "--delta", "1e-6", "--n", "1e400"], "--n must"),
                         (["--shuffle", "0.1", "--delta", "1e-6", "-e", "4", "-m", "randomized-response"], "-d")):
        done = subprocess.run([LDPEST, "plan", *bad, "-o", str(kept)], capture_output=True, text=True)
        assert done.returncode != 0 and message in done.stderr and "Traceback" not in done.stderr
        assert kept.read_text() == "old"
