"""Subset selection reported as index lists (report_form="indices", issue 26): multi-freq-ldpy's
``SS_Client`` form, read without bit vectors of d columns; the estimate is its ``SS_Aggregator_MI``
before clipping. Its client puts the true category first whenever the set holds it, so only the
set is private: ldpest reads sets and writes them ascending."""

from __future__ import annotations

import numpy as np
import pytest
from peer_helpers import run_peer_json

import ldpest

PEER_SCRIPT = r"""
import json, sys
import numpy as np
from multi_freq_ldpy.pure_frequency_oracles.SS import SS_Client, SS_Aggregator_MI

out = {}
for k, epsilon in ((8, 1.0), (40, 2.0)):
    theta = np.random.default_rng(k).dirichlet(np.ones(k) * 2)
    people = np.random.default_rng(2).choice(k, size=5000, p=theta)
    np.random.seed(3)
    reports = [SS_Client(int(x), k, epsilon) for x in people]
    out[f"{k},{epsilon}"] = {"people": people.tolist(), "theta": theta.tolist(),
                             "reports": [[int(v) for v in r] for r in reports],
                             "estimate": SS_Aggregator_MI(reports, k, epsilon).tolist()}
json.dump(out, sys.stdout)
"""


@pytest.fixture(scope="module")
def peers():
    return run_peer_json(PEER_SCRIPT)


@pytest.mark.parametrize("case", ["8,1.0", "40,2.0"])
def test_multi_freq_ldpy_index_lists_give_its_estimate(peers, case):
    made = peers[case]
    k, epsilon = int(case.split(",")[0]), float(case.split(",")[1])
    sub_k = int(max(1, np.rint(k / (np.exp(epsilon) + 1))))  # multi-freq-ldpy's subset size
    mech = ldpest.mechanism("subset-selection", epsilon=epsilon, categories=list(range(k)), subset_size=sub_k,
                            report_form="indices")
    reports = ldpest.Reports.from_array(np.array(made["reports"]), mech)
    result = ldpest.estimate(reports, ldpest.estimator("frequency", projection="positive"))  # its Norm-Mul
    unprojected = result["unprojected"].values
    np.testing.assert_allclose(result["probability"].values, made["estimate"], rtol=1e-9, atol=1e-12)
    assert np.all(np.abs(unprojected - made["theta"]) < 5 * result["stderr"].values)


def test_multi_freq_ldpys_order_reveals_the_answer_and_ldpests_does_not(peers):
    """Why only the set is read and written: the first position of a multi-freq-ldpy report is the
    true answer whenever the set holds it (probability p_v, about 0.47 here), against
    1 / subset_size by chance if the order were random; ldpest's positions are ascending."""
    made = peers["8,1.0"]
    first = np.array([r[0] for r in made["reports"]]) == np.array(made["people"])
    p_v = 2 * np.e / (2 * np.e + 8 - 2)
    assert abs(first.mean() - p_v) < 5 * np.sqrt(p_v * (1 - p_v) / first.size)
    ours = ldpest.mechanism("subset-selection", epsilon=1.0, categories=list(range(8)), subset_size=2,
                            report_form="indices").privatize(np.array(made["people"]), rng=1).values
    assert np.all(np.diff(ours, axis=1) > 0)


def test_index_lists_at_large_d_are_small_and_estimate_like_bit_vectors():
    d, n = 10_000, 20_000
    theta = np.random.default_rng(5).dirichlet(np.ones(d))
    data = np.random.default_rng(6).choice(d, n, p=theta)
    indices = ldpest.mechanism("subset-selection", epsilon=6.0, categories=list(range(d)), report_form="indices")
    reports = indices.privatize(data, rng=7)
    assert reports.values.shape == (n, indices.subset_size)
    assert reports.values.nbytes == n * indices.subset_size * 2  # uint16 positions, not n d bytes of bits
    result = ldpest.estimate(reports)
    assert result["unprojected"].size == d
    z = (result["unprojected"].values - theta) / result["stderr"].values  # d nearly independent z-scores
    assert abs(z.mean()) < 5 / np.sqrt(d)
    assert abs(z.var() - 1) < 5 * np.sqrt(2 / d)


def test_bad_index_lists_are_refused_with_a_message():
    mech = ldpest.mechanism("subset-selection", epsilon=1.0, categories=list(range(6)), subset_size=2,
                            report_form="indices")
    with pytest.raises(ldpest.DataError, match="subset_size = 2 positions"):
        ldpest.Reports.from_array(np.zeros((3, 6), dtype=int), mech)
    with pytest.raises(ldpest.DataError, match="name a category twice"):
        ldpest.Reports.from_array(np.array([[1, 2], [3, 3]]), mech)
    with pytest.raises(ldpest.DataError, match="outside 0..5"):
        ldpest.Reports.from_array(np.array([[1, 6]]), mech)
    with pytest.raises(ldpest.ParameterError, match="report_form must be 'bits' or 'indices'"):
        ldpest.mechanism("subset-selection", epsilon=1.0, categories=list(range(6)), report_form="sets")
