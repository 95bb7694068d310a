"""Local hashing with the peers' hash family (hash_family="xxh32", issue 26): the vectorised hash
is the xxhash package's, privacy holds for every seed, the estimate is unbiased with its declared
variance, and pure-ldp's and multi-freq-ldpy's own clients and estimators agree with ldpest."""

from __future__ import annotations

import json
import warnings
from fractions import Fraction

import numpy as np
import pytest
import xxhash
from peer_helpers import run_peer_json
from stats_helpers import assert_mean_matches, assert_variance_matches

import ldpest
from ldpest.testing import check_mechanism
from ldpest.util.xxh32 import xxh32
from ldpest_multinomial.xxh32 import xxh32_decimal

EPSILONS = [1e-6, 0.01, 0.5, 1.0, 2.0, 5.0, 20.0, 50.0, 709.0, 1e5]


def olh(epsilon=1.0, d=4, **params):
    return ldpest.mechanism("local-hashing", epsilon=epsilon, categories=list(range(d)), hash_family="xxh32", **params)


def test_the_vectorised_hash_is_xxhash_on_decimal_strings():
    rng = np.random.default_rng(1)
    values = np.concatenate([np.arange(12_000), rng.integers(0, 10 ** 15, 2_000)])  # every length 1..15
    seeds = rng.integers(0, 2 ** 63, values.size, dtype=np.int64).astype(np.uint64)
    expected = [xxhash.xxh32(str(int(v)).encode(), seed=int(s)).intdigest() for v, s in zip(values, seeds, strict=True)]
    assert xxh32_decimal(values, seeds).tolist() == expected
    for value in (0, 9, 10, 1234, 98765):  # one category under many seeds (the decoding path)
        assert xxh32_decimal(value, seeds[:500]).tolist() == [xxhash.xxh32(str(value).encode(), seed=int(s)).intdigest()
                                                             for s in seeds[:500]]
    assert int(xxh32_decimal(12, 5)) == xxhash.xxh32(b"12", seed=5).intdigest()
    with pytest.raises(ValueError, match="0..10"):
        xxh32_decimal(-1, 0)


def test_the_scalar_reference_is_xxhash_for_every_short_length():
    """The kit's reference (ldpest.util.xxh32) against the package, every length 0..15 and seeds past 2^32."""
    rng = np.random.default_rng(2)
    for length in range(16):
        for _ in range(40):
            data = rng.integers(0, 256, length, dtype=np.uint8).tobytes()
            seed = int(rng.integers(0, 2 ** 63))
            assert xxh32(data, seed) == xxhash.xxh32(data, seed=seed).intdigest(), (data, seed)
    with pytest.raises(ValueError, match="fewer than 16 bytes"):
        xxh32(bytes(16), 0)


def test_collisions_of_the_family_are_one_in_g_within_binomial_error():
    """The estimator's model (module docstring of hashing.py): P(h_s(x) = h_s(j)) = 1 / g for x != j.
    Measured over 2^20 seeds for 200 pairs at g = 2, 3, 5: every z below 5.5, and their squares sum
    like a chi-square with 600 degrees of freedom."""
    seeds = np.arange(1 << 20, dtype=np.uint32) * np.uint32(2654435761)  # 2^20 distinct seeds, spread
    rng = np.random.default_rng(4)
    pairs = [tuple(rng.choice(10_000, 2, replace=False)) for _ in range(200)]
    zs = []
    for g in (2, 3, 5):
        for x, j in pairs:
            same = np.count_nonzero(xxh32_decimal(int(x), seeds) % g == xxh32_decimal(int(j), seeds) % g)
            n = seeds.size
            zs.append((same - n / g) / np.sqrt(n * (1 / g) * (1 - 1 / g)))
    zs = np.array(zs)
    assert np.max(np.abs(zs)) < 5.5
    from scipy.stats import chi2
    assert chi2.sf(np.sum(zs ** 2), zs.size) > 1e-6


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_every_seeds_channel_is_proven(epsilon):
    mech = olh(epsilon, d=5, hash_range=3)
    for seed in (0, 1, 2 ** 32 - 1, 123_456_789):
        channel = mech.seeded_channel(seed)
        assert channel.exact and channel.rows_sum_to_one()
        assert channel.satisfies(epsilon)
    with pytest.raises(ldpest.ParameterError, match="seeded_channel"):
        mech.channel()


def test_the_sampler_draws_the_seeded_channel():
    """Given its seed, each report keeps h_s(x) with probability keep / 2^64 and is uniform over the
    other g - 1 values otherwise: counted over 2 10^5 reports of one value, against the exact law."""
    mech = olh(1.0, d=6, hash_range=4)
    reports = mech.privatize(np.full(200_000, 3), rng=5).values
    hashed = mech.xxh32_hash(reports[:, 1].astype(np.uint64), 3)
    keep = float(Fraction(mech._keep, 2 ** 64))
    kept = reports[:, 0] == hashed
    assert_mean_matches(kept.astype(float), keep, keep * (1 - keep), what="P(keep)")
    offset = (reports[~kept, 0] - hashed[~kept]) % 4  # 1..3, uniform
    counts = np.bincount(offset, minlength=4)[1:]
    expected = counts.sum() / 3
    assert np.all(np.abs(counts - expected) < 5 * np.sqrt(expected * (2 / 3)))
    seeds = reports[:, 1]
    assert seeds.min() >= 0 and seeds.max() < 2 ** 32
    assert abs(seeds.mean() / 2 ** 32 - 0.5) < 5 * np.sqrt(1 / 12 / seeds.size)


def test_the_kit_passes_with_distribution_privacy_and_the_audit():
    check_mechanism(olh(1.0, d=3), [0, 1, 2] * 40)


@pytest.mark.parametrize("n", [1, 10, 30, 5000])
def test_unbiased_with_the_declared_variance(n):
    theta = np.array([0.55, 0.3, 0.15, 0.0])
    mech = olh(1.5, d=4)
    rng = np.random.default_rng(n)
    reps = 400 if n <= 30 else 150
    estimates = []
    for _ in range(reps):
        data = rng.choice(4, n, p=theta)
        with warnings.catch_warnings():  # small n: uninformative (or inconsistent) estimates are expected
            warnings.simplefilter("ignore", ldpest.EstimateWarning)
            estimates.append(ldpest.estimate(mech.privatize(data, rng=rng))["unprojected"].values)
    estimates = np.array(estimates)
    p, q = float(mech.support_probabilities[0]), float(mech.support_probabilities[1])
    pi = q + (p - q) * theta
    variances = pi * (1 - pi) / (n * (p - q) ** 2)
    for j in range(4):
        assert_mean_matches(estimates[:, j], theta[j], variances[j], what=f"theta_{j}")
        assert_variance_matches(estimates[:, j], variances[j], what=f"var theta_{j}")


def test_reports_of_other_shapes_are_refused_with_a_message():
    mech = olh(1.0, d=4)
    with pytest.raises(ldpest.DataError, match="2 fields \\(value, seed\\)"):
        ldpest.Reports.from_array(np.zeros((3, 3), dtype=int), mech)
    with pytest.raises(ldpest.DataError, match="value outside 0..3"):
        ldpest.Reports.from_array(np.array([[4, 17]]), mech)
    with pytest.raises(ldpest.DataError, match="seed outside"):
        ldpest.Reports.from_array(np.array([[1, -5]]), mech)
    with pytest.raises(ldpest.ParameterError, match="prime belongs to the universal"):
        olh(1.0, prime=7)
    with pytest.raises(ldpest.ParameterError, match="hash_family must be one of universal, xxh32"):
        ldpest.mechanism("local-hashing", epsilon=1.0, categories=[0, 1], hash_family="murmur")


PEER_SCRIPT = r"""
import json, sys
import numpy as np
from pure_ldp.frequency_oracles.local_hashing import LHClient, LHServer
from multi_freq_ldpy.pure_frequency_oracles.LH import LH_Client, LH_Aggregator_MI

people = np.random.default_rng(11).choice(6, size=3000, p=[0.3, 0.25, 0.2, 0.15, 0.1, 0.0])
out = {}
for name, g_params in (("olh", {"use_olh": True}), ("blh", {"g": 2})):
    client, server = LHClient(epsilon=2.0, d=6, **g_params), LHServer(epsilon=2.0, d=6, **g_params)
    reports = [client.privatise(int(x) + 1) for x in people]
    for report in reports:
        server.aggregate(report)
    out["pure-ldp-" + name] = {"g": client.g, "reports": [[int(y), int(s)] for y, s in reports],
                               "estimate": [server.estimate(i + 1, suppress_warnings=True) / len(people)
                                            for i in range(6)]}
reports = [LH_Client(int(x), 6, 2.0) for x in people]
out["mfl-olh"] = {"g": int(round(np.exp(2.0))) + 1, "reports": [[int(y), int(s)] for y, s in reports],
                  "estimate": LH_Aggregator_MI(reports, 6, 2.0).tolist()}
json.dump(out, sys.stdout)
"""


@pytest.fixture(scope="module")
def peers():
    return run_peer_json(PEER_SCRIPT)


@pytest.mark.parametrize("case", ["pure-ldp-olh", "pure-ldp-blh", "mfl-olh"])
def test_the_peers_reports_give_the_peers_estimates(peers, case):
    """Their clients' reports, estimated by ldpest: the same numbers as their own estimators
    (pure-ldp's unbiased counts / n; multi-freq-ldpy's clipped and renormalised ones), and
    within 5 standard errors of the truth."""
    made = peers[case]
    mech = olh(2.0, d=6, hash_range=made["g"])
    result = ldpest.estimate(ldpest.Reports.from_array(np.array(made["reports"], dtype=np.int64), mech))
    unprojected = result["unprojected"].values
    if case.startswith("mfl"):
        clipped = unprojected.clip(0)
        np.testing.assert_allclose(clipped / clipped.sum(), made["estimate"], rtol=1e-9, atol=1e-12)
    else:
        np.testing.assert_allclose(unprojected, made["estimate"], rtol=1e-9, atol=1e-12)
    truth = np.array([0.3, 0.25, 0.2, 0.15, 0.1, 0.0])
    assert np.all(np.abs(unprojected - truth) < 5 * result["stderr"].values)


def test_ldpest_reports_give_the_same_estimate_in_pure_ldp(peers, tmp_path):
    """The other direction: reports made by ldpest, decoded by pure-ldp's LHServer."""
    mech = olh(2.0, d=6, hash_range=peers["pure-ldp-olh"]["g"])
    reports = mech.privatize(np.random.default_rng(3).choice(6, 2000), rng=3).values
    path = tmp_path / "reports.json"
    path.write_text(json.dumps(reports.tolist()))
    script = ("import json, sys\nfrom pure_ldp.frequency_oracles.local_hashing import LHServer\n"
              f"server = LHServer(epsilon=2.0, d=6, g={mech.hash_range})\n"
              "reports = json.load(open(sys.argv[1]))\n"
              "[server.aggregate((y, s)) for y, s in reports]\n"
              "print(json.dumps([server.estimate(i + 1, suppress_warnings=True) / len(reports) for i in range(6)]))")
    theirs = run_peer_json(script, str(path))
    result = ldpest.estimate(ldpest.Reports.from_array(reports, mech))
    np.testing.assert_allclose(result["unprojected"].values, theirs, rtol=1e-9, atol=1e-12)
