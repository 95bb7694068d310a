"""Repeated collection (issue 25, part 2; docs/accounting.md): RAPPOR, L-GRR, L-OSUE and dBitFlipPM,
their epsilon_1 and epsilon_inf proven by the conformance kit at several epsilons, the kit's
longitudinal checks failing on broken probes, memoisation across runs, and the estimators (unbiased
within 5 standard errors, standard errors calibrated, never 0)."""

import json
import math
import os
import stat

import numpy as np
import pytest

import ldpest
from ldpest import ClientState, DataError, ParameterError
from ldpest.testing import check_mechanism, mechanism_checks
from ldpest_longitudinal import DBitFlip, LongitudinalGRR, LongitudinalOSUE, Rappor


def google_rappor_guarantees(p, q, f, h):
    """google/rappor's ComputePrivacyGuarantees (analysis/R/util.R), in floats."""
    q_star = 0.5 * f * (p + q) + (1 - f) * q
    p_star = 0.5 * f * (p + q) + (1 - f) * p
    epsilon_1 = h * math.log(q_star * (1 - p_star) / (p_star * (1 - q_star)))
    epsilon_inf = 2 * h * math.log((1 - 0.5 * f) / (0.5 * f))
    return epsilon_1, epsilon_inf


@pytest.mark.parametrize("p, q, f, h, epsilon_1, epsilon_inf", [
    (0.39, 0.61, 0.45, 2, 0.973, 4.947),
    (0.25, 0.75, 0.5, 1, 1.022, 2.197),
])
def test_rappor_reproduces_compute_privacy_guarantees(p, q, f, h, epsilon_1, epsilon_inf):
    mechanism = ldpest.mechanism("rappor", prob_p=p, prob_q=q, prob_f=f, num_hashes=h)
    assert round(mechanism.epsilon, 3) == epsilon_1
    assert round(mechanism.epsilon_inf, 3) == epsilon_inf
    reference = google_rappor_guarantees(p, q, f, h)
    # the declared values are the formulas at the implemented 64-bit probabilities, rounded up
    assert mechanism.epsilon == pytest.approx(reference[0], rel=1e-12)
    assert mechanism.epsilon_inf == pytest.approx(reference[1], rel=1e-12)


def kit_cases():
    cases = []
    for epsilon, epsilon_inf in ((0.1, 0.5), (1.0, 4.0), (6.0, 12.0)):
        labels = list("abcd")
        cases.append((LongitudinalGRR(epsilon=epsilon, epsilon_inf=epsilon_inf, categories=labels), labels * 40))
        cases.append((LongitudinalOSUE(epsilon=epsilon, epsilon_inf=epsilon_inf, categories=labels), labels * 40))
        rappor = Rappor(epsilon=epsilon, epsilon_inf=epsilon_inf, num_bloombits=8, num_hashes=2, num_cohorts=2)
        cases.append((rappor, rappor.representatives()))
        cases.append((DBitFlip(epsilon=epsilon, categories=[0, 1, 2, 3], d=2), [0, 1, 2, 3] * 40))
    rappor = Rappor(prob_p=0.39, prob_q=0.61, prob_f=0.45, num_bloombits=6, num_hashes=2, num_cohorts=3)
    cases.append((rappor, rappor.representatives()))
    cases.append((DBitFlip(epsilon=2.0, categories=list("abcde"), d=1), list("abcde") * 40))
    counter = DBitFlip(epsilon=1.0, low=0, high=100, buckets=4, d=2)  # numbers: the raw-to-bucket step checked
    cases.append((counter, [0.0, 24.9, 25.0, 60.0, 99.9, 100.0] * 20))
    return cases


@pytest.mark.parametrize("mechanism, data", kit_cases(), ids=lambda x: getattr(x, "spec_json", "data"))
def test_conformance_kit_proves_both_guarantees(mechanism, data):
    report = check_mechanism(mechanism, data)
    names = [result.name for result in report.results]
    assert {"exact_privacy", "permanent_privacy", "memoised"} <= set(names)
    assert mechanism.permanent().channel().satisfies(mechanism.epsilon_inf)
    assert mechanism.channel().satisfies(mechanism.epsilon)


# -- the kit's longitudinal checks fail on broken probes -------------------------------------------------
class LeakyPermanent(LongitudinalGRR):
    """Its permanent sampler keeps the truth always: epsilon_inf is infinite, not what its channel says."""

    def _permanent(self, codes, words):
        words("response", self.memo_keys(codes), 1)
        return codes.astype(self.index_dtype)


class ForgetfulMemo(LongitudinalGRR):
    """Draws its permanent response from fresh OS randomness, whatever the secret."""

    def _permanent(self, codes, words):
        return super()._permanent(codes, ldpest.privacy.memo.fresh_words(np.random.default_rng()))


class SecretIgnored(LongitudinalGRR):
    """Keys its permanent response by the value alone: every user with one value answers the same."""

    def _permanent(self, codes, words):
        fixed = ClientState({"everyone": b"\x00" * 32}).keyed(["everyone"] * len(codes), self.memo_scope)
        return super()._permanent(codes, fixed)


class KeyedLawWrong(LongitudinalGRR):
    """Fresh permanent responses are right, keyed ones keep the truth too often."""

    def _permanent(self, codes, words):
        out = super()._permanent(codes, words)
        if words.__qualname__.startswith("ClientState"):
            keep = words("extra", self.memo_keys(codes), 1)[:, 0] < np.uint64(1 << 62)
            out = np.where(keep, codes, out).astype(self.index_dtype)
        return out


class OverClaims(LongitudinalGRR):
    """Declares epsilon_inf below its epsilon."""

    @property
    def epsilon_inf(self):
        return 0.5


def failed_checks(mechanism, data):
    report = check_mechanism(mechanism, data, raise_on_failure=False)
    return {result.name: result.message for result in report.failures}


@pytest.mark.parametrize("probe, check, words", [
    (LeakyPermanent, "permanent_privacy", "permanent response fails"),
    (ForgetfulMemo, "memoised", "did not repeat|different permanent responses"),
    (SecretIgnored, "memoised", "does not depend on the secret"),
    (KeyedLawWrong, "memoised", "law"),
    (OverClaims, "permanent_privacy", "exceeds epsilon_inf"),
])
def test_longitudinal_checks_fail_on_broken_probes(probe, check, words):
    import re

    labels = list("abcd")
    mechanism = probe(epsilon=1.0, epsilon_inf=3.0, categories=labels)
    failures = failed_checks(mechanism, labels * 40)
    assert check in failures, failures
    assert re.search(words, failures[check])
    honest = failed_checks(LongitudinalGRR(epsilon=1.0, epsilon_inf=3.0, categories=labels), labels * 40)
    assert honest == {}


# -- memoisation ---------------------------------------------------------------------------------------
def test_memoised_responses_repeat_across_runs_through_the_state_file(tmp_path):
    mechanism = LongitudinalGRR(epsilon=1.0, epsilon_inf=3.0, categories=list("abcd"))
    path = tmp_path / "state.json"
    values, users = np.array(list("abcd") * 50), [f"u{i}" for i in range(200)]
    state = ClientState.open(path)
    first = mechanism.memoised_permanent(mechanism.encode_data(values), users, state)
    state.save()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    again = ClientState.open(path)
    assert len(again) == 200 and not again.changed
    second = mechanism.memoised_permanent(mechanism.encode_data(values), users, again)
    np.testing.assert_array_equal(first, second)
    # another epsilon_1 keeps the permanent responses; another epsilon_inf draws new ones
    same_scope = LongitudinalGRR(epsilon=2.0, epsilon_inf=3.0, categories=list("abcd"))
    assert same_scope.memo_scope == mechanism.memo_scope
    assert LongitudinalGRR(epsilon=1.0, epsilon_inf=4.0, categories=list("abcd")).memo_scope != mechanism.memo_scope


def test_many_rounds_reveal_the_permanent_response_not_the_value():
    """Averaging 400 memoised rounds recovers each user's permanent response, which differs from
    the value with probability 1 - p1: the value stays protected at epsilon_inf."""
    mechanism = LongitudinalGRR(epsilon=1.0, epsilon_inf=2.0, categories=list("abcd"))
    users = [f"u{i}" for i in range(300)]
    values = np.array(["a"] * 300)
    state = ClientState()
    rounds = np.stack([mechanism.privatize_memoised(values, users, state, rng=seed).values for seed in range(400)])
    majority = np.array([np.bincount(rounds[:, i], minlength=4).argmax() for i in range(300)])
    permanent = mechanism.memoised_permanent(mechanism.encode_data(values), users, state)
    np.testing.assert_array_equal(majority, permanent)
    p1 = float(mechanism.permanent_channel().dense()[0, 0])
    changed = np.mean(majority != 0)
    assert abs(changed - (1 - p1)) < 5 * math.sqrt(p1 * (1 - p1) / 300)


def test_client_state_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "something else"}))
    with pytest.raises(DataError, match="not an ldpest client state"):
        ClientState.open(bad)
    mechanism = LongitudinalGRR(epsilon=1.0, epsilon_inf=3.0, categories=list("ab"))
    with pytest.raises(DataError, match="users must name"):
        mechanism.privatize_memoised(["a", "b"], users=["u"], state=ClientState())
    with pytest.raises(ParameterError, match="ClientState"):
        mechanism.privatize_memoised(["a"], users=["u"], state={})
    with pytest.raises(ParameterError, match="no file"):
        ClientState().save()


# -- parameters -----------------------------------------------------------------------------------------
def test_bad_parameters_are_refused():
    with pytest.raises(ParameterError, match="below epsilon_inf"):
        LongitudinalGRR(epsilon=2.0, epsilon_inf=2.0, categories=list("ab"))
    with pytest.raises(ParameterError, match="below epsilon_inf"):
        LongitudinalOSUE(epsilon=3.0, epsilon_inf=2.0, categories=list("ab"))
    with pytest.raises(ParameterError, match="not both"):
        Rappor(prob_p=0.3, prob_q=0.7, prob_f=0.5, epsilon=1.0, epsilon_inf=2.0)
    with pytest.raises(ParameterError, match="not both"):
        Rappor(prob_p=0.3, prob_q=0.7)
    with pytest.raises(ParameterError, match="strictly between 0 and 1"):
        Rappor(prob_p=0.3, prob_q=0.7, prob_f=0.0)
    with pytest.raises(ParameterError, match="must differ"):
        Rappor(prob_p=0.5, prob_q=0.5, prob_f=0.5)
    with pytest.raises(ParameterError, match="exceeds"):
        DBitFlip(epsilon=1.0, categories=[0, 1], d=3)
    with pytest.raises(ParameterError, match="candidates"):
        ldpest.estimator("rappor")


def test_rappor_in_epsilon_form_meets_both_epsilons():
    mechanism = Rappor(epsilon=1.0, epsilon_inf=4.0, num_hashes=2)
    probabilities = mechanism.probabilities
    implied = google_rappor_guarantees(probabilities["p"], probabilities["q"], probabilities["f"], 2)
    assert implied[0] <= 1.0 + 1e-12 and implied[0] == pytest.approx(1.0, abs=1e-9)
    assert implied[1] <= 4.0 + 1e-12 and implied[1] == pytest.approx(4.0, abs=1e-9)


# -- estimators -----------------------------------------------------------------------------------------
THETA = np.array([0.45, 0.3, 0.15, 0.1, 0.0])
LABELS = list("abcde")


def frequency_mechanisms():
    return [LongitudinalGRR(epsilon=1.0, epsilon_inf=3.0, categories=LABELS),
            LongitudinalOSUE(epsilon=1.0, epsilon_inf=3.0, categories=LABELS),
            DBitFlip(epsilon=1.0, categories=LABELS, d=2)]


@pytest.mark.parametrize("mechanism", frequency_mechanisms(), ids=lambda m: m.name)
def test_frequency_estimates_are_unbiased_and_calibrated(mechanism):
    """Fixed data (exact frequencies THETA), 300 privatisations of n = 2000: the mean estimate is
    within 5 standard errors of THETA, and the spread matches the declared variance within 5
    standard errors of a standard deviation (relative 1 / sqrt(2 R))."""
    rng = np.random.default_rng(5)
    n, repeats = 2000, 300
    data = np.repeat(LABELS, (THETA * n).astype(int))
    estimates, stderrs = [], []
    for _ in range(repeats):
        result = ldpest.estimate(mechanism.privatize(data, rng=rng))
        estimates.append(result["unprojected"].values)
        stderrs.append(result["stderr"].values)
    estimates, stderrs = np.array(estimates), np.array(stderrs)
    declared = np.sqrt(mechanism.frequency_variance(THETA) / n)
    assert np.all(np.abs(estimates.mean(axis=0) - THETA) < 5 * declared / math.sqrt(repeats))
    spread = estimates.std(axis=0, ddof=1)
    assert np.all(np.abs(spread / declared - 1) < 5 / math.sqrt(2 * repeats))
    assert np.all(np.abs(stderrs.mean(axis=0) / declared - 1) < 0.05)


def test_rappor_estimates_candidates_unbiased_with_calibrated_errors():
    mechanism = Rappor(epsilon=2.0, epsilon_inf=5.0, num_bloombits=32, num_hashes=2, num_cohorts=1)
    estimator = ldpest.estimator("rappor", candidates=LABELS)
    rng = np.random.default_rng(7)
    n, repeats = 4000, 200
    data = np.repeat(LABELS, (THETA * n).astype(int))
    results = [ldpest.estimate(mechanism.privatize(data, rng=rng), estimator) for _ in range(repeats)]
    estimates = np.array([r["probability"].values for r in results])
    stderrs = np.array([r["stderr"].values for r in results])
    typical = stderrs.mean(axis=0)
    assert np.all(np.abs(estimates.mean(axis=0) - THETA) < 5 * typical / math.sqrt(repeats))
    assert np.all(np.abs(estimates.std(axis=0, ddof=1) / typical - 1) < 5 / math.sqrt(2 * repeats) + 0.02)


def test_rappor_with_cohorts_recovers_frequencies():
    mechanism = Rappor(prob_p=0.39, prob_q=0.61, prob_f=0.45, num_bloombits=32, num_hashes=2, num_cohorts=8)
    candidates = [f"site{i}.example" for i in range(10)]
    theta = np.array([0.3, 0.2, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05, 0.0])
    n = 200_000
    data = np.repeat(candidates, (theta * n).astype(int))
    result = ldpest.estimate(mechanism.privatize(data, rng=11), ldpest.estimator("rappor", candidates=candidates))
    z = (result["probability"].values - theta) / result["stderr"].values
    assert np.all(np.abs(z) < 5), z


def test_rappor_refuses_candidates_it_cannot_separate():
    mechanism = Rappor(epsilon=1.0, epsilon_inf=3.0, num_bloombits=4, num_hashes=2)
    reports = mechanism.privatize(["a", "b"] * 50, rng=1)
    with pytest.raises(DataError, match="not linearly independent"):
        ldpest.estimate(reports, ldpest.estimator("rappor", candidates=[f"c{i}" for i in range(12)]))


@pytest.mark.parametrize("n", [1, 10, 30])
@pytest.mark.parametrize("epsilons", [(0.05, 0.1), (1.0, 3.0), (40.0, 60.0)])
def test_standard_errors_are_never_zero(n, epsilons):
    epsilon, epsilon_inf = epsilons
    for mechanism in (LongitudinalGRR(epsilon=epsilon, epsilon_inf=epsilon_inf, categories=LABELS),
                      LongitudinalOSUE(epsilon=epsilon, epsilon_inf=epsilon_inf, categories=LABELS),
                      DBitFlip(epsilon=epsilon, categories=LABELS, d=2)):
        with np.errstate(all="raise"):
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ldpest.EstimateWarning)  # tiny n: uninformative, by design
                result = ldpest.estimate(mechanism.privatize(["a"] * n, rng=3))
        assert np.all(result["stderr"].values > 0), (mechanism.name, result["stderr"].values)


def test_reports_of_the_wrong_form_are_refused():
    rappor = Rappor(epsilon=1.0, epsilon_inf=3.0, num_bloombits=4, num_hashes=1, num_cohorts=2)
    with pytest.raises(DataError, match="cohort"):
        ldpest.Reports.from_array(np.array([[2, 0, 1, 0, 1]]), rappor)
    with pytest.raises(DataError, match="0/1"):
        ldpest.Reports.from_array(np.array([[1, 0, 2, 0, 1]]), rappor)
    flip = DBitFlip(epsilon=1.0, categories=LABELS, d=2)
    with pytest.raises(DataError, match="distinct buckets"):
        ldpest.Reports.from_array(np.array([[1, 1, 0, 1]]), flip)
    names = [check.name for check in mechanism_checks(flip, LABELS * 4)]
    assert len(names) == 11 and {"permanent_privacy", "memoised", "frequency_moments"} <= set(names), names


def test_dbitflip_counts_a_counter_in_equal_buckets():
    counter = DBitFlip(epsilon=2.0, low=0, high=60, buckets=3, d=1)
    assert counter.categories == ["[0, 20)", "[20, 40)", "[40, 60]"]
    np.testing.assert_array_equal(counter.encode_data([0, 19.99, 20, 59.9, 60]), [0, 0, 1, 2, 2])
    with pytest.raises(DataError, match=r"outside \[0, 60\]"):
        counter.encode_data([61])
    with pytest.raises(DataError, match="NaN"):
        counter.encode_data([float("nan")])
    with pytest.raises(ParameterError, match="not both"):
        DBitFlip(epsilon=1.0, categories=[0, 1], low=0, high=1, buckets=2)
    with pytest.raises(ParameterError, match="low < high"):
        DBitFlip(epsilon=1.0, low=1, high=1, buckets=2)
    minutes = np.random.default_rng(4).uniform(0, 60, 30_000)
    result = ldpest.estimate(counter.privatize(minutes, rng=5))
    truth = np.bincount(counter.encode_data(minutes), minlength=3) / len(minutes)
    assert np.all(np.abs(result["unprojected"].values - truth) < 5 * result["stderr"].values)
    assert list(result["category"].values) == counter.categories
