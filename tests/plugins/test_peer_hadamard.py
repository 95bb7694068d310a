"""pure-ldp's Hadamard response (issue 26): at epsilon > 1 its client puts b - 1 categories in each
block, keeps empty blocks and permutes the input. ``layout="pure-ldp"`` reads those reports: the
estimate is pure-ldp's own, with the categories in the order of its ``server.hr.reverse``; the
channel of that layout is proven at every epsilon (tests/plugins/test_frequency_oracles.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from peer_helpers import run_peer_json

import ldpest
from ldpest_multinomial.hadamard import pure_ldp_layout

PEER_SCRIPT = r"""
import json, random, sys
import numpy as np
from pure_ldp.frequency_oracles.hadamard_response import HadamardResponseClient, HadamardResponseServer

random.seed(26)  # pure-ldp draws from the global generators: seeded, the reports are the same every run
np.random.seed(26)
out = {}
for d, epsilon in ((100, 2.0), (10, 2.0), (12, 0.5), (40, 5.0), (7, 9.0)):
    theta = np.random.default_rng(d).dirichlet(np.ones(d))
    people = np.random.default_rng(1).choice(d, size=20000, p=theta)
    server = HadamardResponseServer(epsilon, d)
    client = HadamardResponseClient(epsilon, d, server.get_hash_funcs())
    reports = [int(client.privatise(int(x) + 1)) for x in people]
    for report in reports:
        server.aggregate(report)
    reverse = [int(r) for r in server.hr.reverse] if epsilon > 1 else list(range(d))
    out[f"{d},{epsilon}"] = {"reports": reports, "reverse": reverse, "theta": theta.tolist(),
                             "symbols": int(server.hr.outsz),
                             "estimate": [server.estimate(i + 1, suppress_warnings=True) / len(people)
                                          for i in range(d)]}
json.dump(out, sys.stdout)
"""


@pytest.fixture(scope="module")
def peers():
    return run_peer_json(PEER_SCRIPT)


CASES = ["100,2.0", "10,2.0", "12,0.5", "40,5.0", "7,9.0"]


@pytest.mark.parametrize("case", CASES)
def test_pure_ldp_reports_give_pure_ldps_estimate_within_5_standard_errors(peers, case):
    made = peers[case]
    d, epsilon = int(case.split(",")[0]), float(case.split(",")[1])
    labels = [f"item{i + 1}" for i in range(d)]
    in_symbol_order = [labels[made["reverse"][s]] for s in range(d)]  # symbol s stands for index reverse[s]
    mech = ldpest.mechanism("hadamard-response", epsilon=epsilon, categories=in_symbol_order, layout="pure-ldp")
    assert mech.symbols == made["symbols"]
    result = ldpest.estimate(ldpest.Reports.from_array(np.array(made["reports"]), mech))
    by_label = result["unprojected"].to_series()
    ours = np.array([by_label[label] for label in labels])
    np.testing.assert_allclose(ours, made["estimate"], rtol=1e-9, atol=1e-12)
    stderr = result["stderr"].to_series()
    z = (ours - np.array(made["theta"])) / np.array([stderr[label] for label in labels])
    assert np.max(np.abs(z)) < 5


def test_reading_pure_ldp_reports_with_ldpests_layout_is_what_went_wrong(peers):
    """The failure this option mends: at d = 100, epsilon = 2, ldpest's layout with pure-ldp's 4
    blocks has the same 128 symbols (so nothing is refused) but 25 categories per block, not 31:
    the estimate is far off."""
    made = peers["100,2.0"]
    labels = [f"item{i + 1}" for i in range(100)]
    in_symbol_order = [labels[made["reverse"][s]] for s in range(100)]
    default = ldpest.mechanism("hadamard-response", epsilon=2.0, categories=in_symbol_order, blocks=4)
    assert default.symbols == made["symbols"]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ldpest.EstimateWarning)
        wrong = ldpest.estimate(ldpest.Reports.from_array(np.array(made["reports"]), default))
    def chi_square(result):
        estimate, stderr = result["unprojected"].to_series(), result["stderr"].to_series()
        return sum(((estimate[label] - t) / stderr[label]) ** 2 for label, t in zip(labels, made["theta"], strict=True))

    right = ldpest.mechanism("hadamard-response", epsilon=2.0, categories=in_symbol_order, layout="pure-ldp")
    from scipy.stats import chi2
    assert chi2.sf(chi_square(ldpest.estimate(ldpest.Reports.from_array(np.array(made["reports"]), right))), 100) > 1e-4
    assert chi2.sf(chi_square(wrong), 100) < 1e-12


@pytest.mark.parametrize("d,epsilon,blocks,width", [(100, 2.0, 4, 32), (10, 2.0, 4, 4), (12, 0.5, 1, 16),
                                                     (7, 9.0, 8, 2), (3, 1.0, 1, 4), (3, 1.0000001, 2, 4)])
def test_the_layout_follows_pure_ldps_rule(d, epsilon, blocks, width):
    layout = pure_ldp_layout(d, epsilon)
    assert (layout.blocks, layout.width) == (blocks, width)
    assert layout.loads.sum() == d
    assert layout.load == (width - 1 if epsilon > 1 else d)


def test_layout_and_blocks_together_are_refused():
    with pytest.raises(ldpest.ParameterError, match="do not give blocks"):
        ldpest.mechanism("hadamard-response", epsilon=2.0, categories=list(range(5)), layout="pure-ldp", blocks=2)
    with pytest.raises(ldpest.ParameterError, match="layout must be 'ldpest' or 'pure-ldp'"):
        ldpest.mechanism("hadamard-response", epsilon=2.0, categories=list(range(5)), layout="k2k")
