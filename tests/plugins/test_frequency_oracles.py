"""Local hashing, subset selection and Hadamard response (docs/frequency-oracles.md).

Privacy is proven on the implemented channels (integer thresholds, exact
fractions) at every epsilon; the samplers are shown to decide at those
thresholds; unbiasedness is exact over the enumerated channel; mean and
variance are checked by Monte Carlo against the declared variance with
tolerances derived from it (tests/stats_helpers.py).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from rng_helpers import ScriptedWords
from stats_helpers import assert_mean_matches, assert_variance_matches

import ldpest
from ldpest.privacy.exact import WORD, keep_threshold, ratio_within, shared_keep_threshold
from ldpest.stats.transforms import fwht
from ldpest.testing import check_estimator, check_mechanism
from ldpest_multinomial.hadamard import _block_masses
from ldpest_multinomial.hashing import MERSENNE_31, is_prime

WIDE_EPSILONS = [1e-6, 0.01, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 36.7, 44.0, 50.0, 709.0, 710.0, 1e5]
SMALL = [  # (name, d, params): channels small enough to enumerate
    ("local-hashing", 3, {"hash_range": 3, "prime": 5}),
    ("local-hashing", 4, {"hash_range": 2, "prime": 7}),
    ("subset-selection", 5, {}),
    ("subset-selection", 6, {"subset_size": 3}),
    ("subset-selection", 5, {"report_form": "indices"}),  # multi-freq-ldpy's form: the positions of the set
    ("subset-selection", 6, {"subset_size": 3, "report_form": "indices"}),
    ("hadamard-response", 3, {}),
    ("hadamard-response", 7, {"blocks": 2}),
    ("hadamard-response", 10, {"blocks": 3}),
    ("hadamard-response", 10, {"layout": "pure-ldp"}),  # pure-ldp's blocks of b - 1, empty ones kept
    ("hadamard-response", 5, {"layout": "pure-ldp"}),
]


def make(name, d, epsilon=1.0, **params):
    return ldpest.mechanism(name, epsilon=epsilon, categories=list(range(d)), **params)


# --- privacy of the implemented channel, at every epsilon ----------------------------------
@pytest.mark.parametrize("epsilon", WIDE_EPSILONS)
@pytest.mark.parametrize("name,d,params", SMALL)
def test_channels_hold_exactly_at_every_epsilon(name, d, params, epsilon):
    channel = make(name, d, epsilon, **params).channel()
    assert channel.exact
    assert channel.satisfies(epsilon)  # rows sum to exactly 1, every ratio <= e^epsilon, proven
    assert min(min(row) for row in channel.matrix) > 0


@pytest.mark.parametrize("epsilon", [0.01, 1.0, 3.0, 20.0])
def test_thresholds_are_the_largest_proven_ones(epsilon):
    """One more unit of probability on the favoured outputs would break the bound (or the
    threshold saturated at 2^64 - 1, where the channel is more private than asked)."""
    hadamard = make("hadamard-response", 10, epsilon, blocks=3)
    s, K = hadamard._layout.half, hadamard.symbols
    subset = make("subset-selection", 9, epsilon)
    d, omega = 9, subset.subset_size
    for t, holds in ((hadamard._in, lambda t: ratio_within(t * (K - s), (WORD - t) * s, epsilon)),
                     (subset._in, lambda t: ratio_within(t * (d - omega), (WORD - t) * omega, epsilon))):
        assert holds(t)
        assert t == WORD - 1 or not holds(t + 1)
    hashing = make("local-hashing", 9, epsilon)
    g = hashing.hash_range
    assert hashing._keep == shared_keep_threshold(epsilon, g - 1)[0]
    assert 0 <= keep_threshold(epsilon, g - 1) - hashing._keep < g - 1  # the largest proven, lowered a little


@pytest.mark.parametrize("epsilon", [0.5, 36.7, 50.0])
def test_samplers_decide_exactly_at_their_thresholds(epsilon):
    hashing = make("local-hashing", 5, epsilon, hash_range=3)
    # the seeds a and c take the first two words (their top 31 bits: 0 gives a = 1, c = 0), the response the third
    kept = hashing.privatize([2], rng=ScriptedWords([0, 0, hashing._keep - 1])).values[0]
    moved = hashing.privatize([2], rng=ScriptedWords([0, 0, hashing._keep])).values[0]
    assert kept[:2].tolist() == moved[:2].tolist() == [1, 0]
    assert kept[2] == hashing.hash(kept[0], kept[1], 2) and moved[2] != hashing.hash(moved[0], moved[1], 2)

    subset = make("subset-selection", 6, epsilon, subset_size=2)
    # the table sampler's coin is words_below: a 16-bit head tied with the threshold's, then a 48-bit tail
    head, tail = subset._in >> 48, subset._in & ((1 << 48) - 1)
    assert subset.privatize([4], rng=ScriptedWords([head, (tail - 1) << 16])).values[0, 4] == 1
    assert subset.privatize([4], rng=ScriptedWords([head, tail << 16])).values[0, 4] == 0

    hadamard = make("hadamard-response", 7, epsilon, blocks=2)
    member = hadamard.channel().matrix[4] == hadamard.symbol_probabilities[0]
    assert member[hadamard.privatize([4], rng=ScriptedWords([hadamard._in - 1])).values[0]]
    assert not member[hadamard.privatize([4], rng=ScriptedWords([hadamard._in])).values[0]]


@pytest.mark.parametrize("name,d,params", SMALL)
def test_debiasing_is_exactly_unbiased_over_the_channel(name, d, params):
    """E[theta_hat | x] = e_x: the one-report estimate summed over every output of the channel."""
    mech = make(name, d, 1.5, **params)
    channel = mech.channel()
    stats = [mech.frequency_statistics(np.asarray([z])) for z in channel.outputs]
    single = np.array([mech.frequency_estimate(s, 1)[0] for s in stats])
    np.testing.assert_allclose(channel.probabilities() @ single, np.eye(d), atol=1e-9)


def test_local_hashing_collision_probability_is_exact_by_enumeration():
    """kappa = P(h(x) = h(j)), counted over every seed of a small prime, for every pair x != j."""
    mech = make("local-hashing", 5, hash_range=3, prime=7)
    a, c = np.meshgrid(np.arange(1, 7), np.arange(7), indexing="ij")
    for x in range(5):
        for j in range(x + 1, 5):
            same = mech.hash(a.ravel(), c.ravel(), x) == mech.hash(a.ravel(), c.ravel(), j)
            assert Fraction(int(same.sum()), same.size) == mech.collision_probability


def test_local_hashing_support_counts_match_the_direct_hash():
    """Over three decoding blocks (2^15 rows each): the counts and the per-report support."""
    mech = make("local-hashing", 37, 2.0)
    reports = mech.privatize(np.random.default_rng(1).integers(0, 37, 70_000), rng=np.random.default_rng(2)).values
    direct = mech.hash(reports[:, 0, None], reports[:, 1, None], np.arange(37)[None, :]) == reports[:, 2, None]
    np.testing.assert_array_equal(mech.support_counts(reports), direct.sum(axis=0))
    np.testing.assert_array_equal(mech.report_support(reports), direct)


def test_hadamard_transform_matches_the_matrix():
    rows = np.arange(16)
    matrix = 1 - 2 * (np.bitwise_count(rows[:, None] & rows[None, :]) & 1).astype(np.int64)
    values = np.random.default_rng(0).integers(-50, 50, (3, 16))
    np.testing.assert_array_equal(fwht(values), values @ matrix.T)


@pytest.mark.parametrize("loads,c", [([1, 1, 1], 0.7), ([3, 3, 2], 0.05), ([4, 2, 1, 1], 1.3), ([5], 2.0),
                                     ([2, 1], 4.3e15), ([3, 3, 2], 5.9e15), ([7, 1, 1], 1e300)])
def test_hadamard_worst_case_block_masses_are_the_water_filling_optimum(loads, c):
    """Theta maximises sum_m (c L_m Theta_m - Theta_m^2 / L_m) on the simplex: KKT holds exactly, at
    an epsilon near 0 too (c ~ 1 / epsilon^2, where a bisection used to give 0 / 0)."""
    loads = np.array(loads)
    theta = _block_masses(loads, c)
    assert np.all(np.isfinite(theta)) and np.all(theta >= 0) and math.isclose(theta.sum(), 1.0, rel_tol=1e-12)
    active = theta > 0
    # the gradient c L_m - 2 Theta_m / L_m is one value lam on the active blocks and at most lam elsewhere;
    # exact in rationals: with S1, S2 the integer sums of the active loads, c L_m - lam = (c (L_m S1 - S2) + 2) / S1
    s1, s2 = int(loads[active].sum()), int((loads[active] ** 2).sum())
    for load, mass in zip(loads, theta, strict=True):
        slack = c * (int(load) * s1 - s2) + 2
        if mass > 0:
            assert math.isclose(mass, load * slack / (2 * s1), rel_tol=1e-12)
        else:
            assert slack <= 0
    if c < 100:  # and an independent optimiser agrees where it can resolve the objective
        from scipy.optimize import minimize

        def objective(t):
            return -float(np.sum(c * loads * t - t ** 2 / loads))

        found = minimize(objective, np.full(len(loads), 1 / len(loads)), method="SLSQP",
                         bounds=[(0, 1)] * len(loads), constraints={"type": "eq", "fun": lambda t: t.sum() - 1},
                         options={"ftol": 1e-14, "maxiter": 500})
        assert -objective(theta) >= -found.fun - 1e-9
        np.testing.assert_allclose(theta, found.x, atol=1e-5)


def test_hadamard_sets_are_half_rows_that_meet_in_quarters():
    mech = make("hadamard-response", 10, blocks=2)
    member = mech.channel().matrix == mech.symbol_probabilities[0]
    s = mech._layout.half
    assert (member.sum(axis=1) == s).all()
    overlaps = member.astype(int) @ member.T.astype(int)
    same_block = mech._block_of[:, None] == mech._block_of[None, :]
    expected = np.where(same_block, s // 2, 0)
    np.fill_diagonal(expected, s)
    np.testing.assert_array_equal(overlaps, expected)


# --- Monte Carlo against the declared mean and variance -----------------------------------
MONTE_CARLO = [
    ("local-hashing", 8, 1.0, {}),
    ("local-hashing", 8, 3.0, {}),
    ("subset-selection", 8, 0.5, {}),
    ("subset-selection", 8, 1.0, {"subset_size": 3}),
    ("hadamard-response", 8, 1.0, {}),
    ("hadamard-response", 12, 4.0, {}),
]


def _estimates(mech, theta, n, reps, rng):
    data = rng.choice(len(theta), size=n * reps, p=theta)
    reports = mech.privatize(data, rng=rng).values
    return np.array([mech.frequency_estimate(mech.frequency_statistics(reports[r * n:(r + 1) * n]), n)[0]
                     for r in range(reps)])


@pytest.mark.parametrize("name,d,epsilon,params", MONTE_CARLO)
def test_unbiased_with_the_declared_variance(name, d, epsilon, params):
    rng = np.random.default_rng(20260)
    theta = rng.dirichlet(np.ones(d))
    n, reps = 400, 1500
    mech = make(name, d, epsilon, **params)
    estimates = _estimates(mech, theta, n, reps, rng)
    variance = mech.frequency_variance(theta) / n
    assert_mean_matches(estimates, theta, variance)
    assert_variance_matches(estimates, variance)


def test_hadamard_exact_simulation_has_the_declared_law():
    rng = np.random.default_rng(7)
    mech = make("hadamard-response", 12, 4.0)
    theta = rng.dirichlet(np.ones(12))
    n, reps = 300, 3000
    est = ldpest.estimator("frequency", projection="none")
    fast = np.array([est.finalize(est.simulate(mech, theta, n, rng))["unprojected"].values for _ in range(reps)])
    variance = mech.frequency_variance(theta) / n
    assert_mean_matches(fast, theta, variance)
    assert_variance_matches(fast, variance)


@pytest.mark.parametrize("name,d,epsilon,params", MONTE_CARLO)
def test_worst_cases_bound_the_variance_and_are_attained(name, d, epsilon, params):
    mech = make(name, d, epsilon, **params)
    rng = np.random.default_rng(3)
    totals = [mech.frequency_variance(t).sum() for t in rng.dirichlet(np.ones(d) * 0.3, 500)]
    singles = [mech.frequency_variance(t).max() for t in rng.dirichlet(np.ones(d) * 0.3, 500)]
    worst, single = mech.worst_case_variance(), mech.worst_case_category_variance()
    assert max(totals) <= worst * (1 + 1e-12) and max(singles) <= single * (1 + 1e-12)
    uniform = mech.frequency_variance(np.full(d, 1 / d)).sum()
    if name != "hadamard-response":  # symmetric concave: attained at the uniform distribution
        assert uniform == pytest.approx(worst, rel=1e-12)
    else:  # attained by the water-filling block masses, spread evenly inside each block
        layout = mech._layout
        assert worst >= uniform
        best = max(mech.frequency_variance(_block_spread(mech, m)).sum() for m in range(layout.blocks))
        assert worst >= best * (1 - 1e-12)


def _block_spread(mech, block):
    theta = (mech._block_of == block).astype(float)
    return theta / theta.sum()


# --- the conformance kit and the report formats --------------------------------------------
LABELS = ["a", "b", "c"] * 40


@pytest.mark.parametrize("name,params", [
    ("local-hashing", {"hash_range": 3, "prime": 11}),  # exact channel
    ("local-hashing", {}),  # the default prime: distribution tests
    ("subset-selection", {}),
    ("hadamard-response", {}),
])
def test_conformance_kit_passes(name, params):
    mech = ldpest.mechanism(name, epsilon=1.0, categories=["a", "b", "c"], **params)
    check_mechanism(mech, LABELS)
    check_estimator(ldpest.estimator("frequency"), mech, LABELS, reps=200)
    check_estimator(ldpest.estimator("frequency-likelihood"), mech, LABELS, reps=200)


@pytest.mark.parametrize("name", ["local-hashing", "subset-selection", "hadamard-response"])
def test_csv_and_netcdf_report_files_give_the_same_estimate(name, tmp_path):
    from typer.testing import CliRunner

    from ldpest.cli import app

    data = tmp_path / "answers.csv"
    answers = np.random.default_rng(0).choice(["yes", "no", "maybe"], 3000, p=[0.5, 0.3, 0.2])
    data.write_text("answer\n" + "\n".join(answers) + "\n")
    runner = CliRunner()
    estimates = []
    for suffix in (".csv", ".nc"):
        out = tmp_path / f"reports{suffix}"
        made = runner.invoke(app, ["privatize", str(data), "-c", "answer", "-m", name, "-e", "2",
                                   "--categories", "yes,no,maybe", "-o", str(out), "--seed", "5"])
        assert made.exit_code == 0, made.output
        if suffix == ".csv":
            with pytest.warns(UserWarning, match="seeded generator"):  # made with --seed
                reports = _read(out)
        else:
            reports = _read(out)
        assert reports.mechanism == ldpest.mechanism(name, epsilon=2.0, categories=["yes", "no", "maybe"])
        estimates.append((reports.values, ldpest.estimate(reports)["unprojected"].values))
    np.testing.assert_array_equal(estimates[0][0], estimates[1][0])  # same seed, same reports
    np.testing.assert_array_equal(estimates[0][1], estimates[1][1])


def _read(path):
    """Reports from a .nc file, or from a CSV report file with its spec line (in one piece)."""
    if path.suffix == ".nc":
        return ldpest.read_reports(path)
    return ldpest.open_reports(path).load()


def test_local_hashing_csv_names_its_fields(tmp_path):
    mech = make("local-hashing", 4)
    reports = mech.privatize([0, 1, 2, 3], rng=np.random.default_rng(0))
    path = tmp_path / "r.csv"
    ldpest.io.writers.write_reports_csv(reports, path)
    assert path.read_text().splitlines()[1:3] == ["#ldpest-rng numpy", "hash_a,hash_c,value"]
    np.testing.assert_array_equal(_read(path).values, reports.values)


# --- bad input ------------------------------------------------------------------------------
@pytest.mark.parametrize("name,params,message", [
    ("local-hashing", {"prime": 12}, "prime must be a prime"),
    ("local-hashing", {"prime": 3}, "prime must be a prime"),  # smaller than d = 5
    ("local-hashing", {"hash_range": 1}, "hash_range"),
    ("local-hashing", {"hash_range": 2 ** 21}, r"at most 2\^20"),
    ("subset-selection", {"subset_size": 5}, "between 1 and d - 1"),
    ("subset-selection", {"subset_size": 0}, "subset_size"),
    ("hadamard-response", {"blocks": 6}, "between 1 and d"),
])
def test_bad_parameters_are_clear_errors(name, params, message):
    with pytest.raises(ldpest.ParameterError, match=message):
        make(name, 5, **params)


@pytest.mark.parametrize("name,values,message", [
    ("local-hashing", [[0, 1, 1]], "hash_a outside 1..2147483646"),
    ("local-hashing", [[1, 1, 99]], "value outside 0..20"),  # g = round(e^3 + 1) = 21
    ("local-hashing", [[1, 1]], "3 fields"),
    ("local-hashing", [[1.5, 1, 1]], "must be integers"),
    ("subset-selection", [[1, 1, 0, 0, 0]], "subset_size = 1 ones"),
    ("subset-selection", [[2, 0, 0, 0, 0]], "must be 0/1"),
    ("hadamard-response", [99], "not symbols"),
    ("hadamard-response", [[1, 2]], "1-D array"),
])
def test_reports_that_do_not_match_the_mechanism_are_refused(name, values, message):
    mech = make(name, 5, 3.0)
    with pytest.raises(ldpest.DataError, match=message):
        ldpest.Reports.from_array(np.asarray(values), mech)


def test_primality_check():
    assert [p for p in range(60) if is_prime(p)] == [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59]
    assert is_prime(MERSENNE_31) and not is_prime(MERSENNE_31 - 2) and not is_prime(3215031751)  # a strong pseudoprime


def test_report_sizes():
    assert make("hadamard-response", 100, 1.0).report_bits() == math.log2(make("hadamard-response", 100, 1.0).symbols)
    assert make("subset-selection", 10, 1.0, subset_size=3).report_bits() == pytest.approx(math.log2(120))
    assert make("local-hashing", 10, 1.0).report_bits() == pytest.approx(62 + 2)


@pytest.mark.parametrize("g", [2, 3, 21, 1000, 2 ** 20])
@pytest.mark.parametrize("prime", [MERSENNE_31, 2 ** 31 - 19, 1048583])
def test_hash_buckets_are_exact_at_every_boundary(g, prime):
    """The float bucketing floor(g r / P) equals the integer one at both sides of every bucket edge."""
    if prime < g:
        pytest.skip("the prime must be at least g")
    mech = make("local-hashing", 2, hash_range=g, prime=prime)
    edges = mech._lower[1:-1].astype(np.uint64)
    residues = np.concatenate([edges, edges - np.uint64(1), np.arange(1000, dtype=np.uint64),
                               np.uint64(prime) - np.arange(1, 1000, dtype=np.uint64)])
    exact = (residues * np.uint64(g) // np.uint64(prime)).astype(np.int64)
    np.testing.assert_array_equal(mech._bucket(residues), exact)


@pytest.mark.parametrize("sampler", ["table", "floyd", "coin"])
@pytest.mark.parametrize("d,omega", [(5, 1), (6, 2), (6, 3), (7, 5)])
def test_every_subset_sampler_draws_the_channel_from_every_input(sampler, d, omega, monkeypatch):
    """The table of subsets, Floyd's algorithm and the coin sampler each sample the enumerated channel
    (chi-square over every subset, from every input, p > 1e-6 at a fixed seed)."""
    from scipy import stats as scipy_stats

    import ldpest_multinomial.subset as subset

    monkeypatch.setattr(subset, "_sampler", lambda d, omega: sampler)
    mech = make("subset-selection", d, 0.8, subset_size=omega)
    channel = mech.channel()
    index = {tuple(row): i for i, row in enumerate(channel.outputs.tolist())}
    rng = np.random.default_rng(17)
    for x in range(d):
        values = mech.privatize(np.full(60_000, x), rng=rng).values
        counts = np.bincount([index[tuple(row)] for row in values.tolist()], minlength=len(index))
        expected = channel.probabilities()[x] * counts.sum()
        assert scipy_stats.chisquare(counts, expected).pvalue > 1e-6


@pytest.mark.parametrize("d,epsilon,expected", [(20, 1.0, "table"), (64, 4.0, "table"), (65, 4.0, "floyd"),
                                                (24, 0.05, "table"), (28, 0.05, "floyd"), (1000, 0.1, "coin")])
def test_the_subset_sampler_is_chosen_by_the_size_of_its_table(d, epsilon, expected):
    import ldpest_multinomial.subset as subset

    mech = make("subset-selection", d, epsilon)
    assert subset._sampler(d, mech.subset_size) == expected


@pytest.mark.parametrize("d,omega,x", [(40, 2, 0), (40, 2, 39), (64, 3, 17), (64, 3, 63)])
def test_the_table_sampler_in_64_bit_masks_has_the_declared_inclusions(d, omega, x):
    """Above d = 32 the masks are uint64 (too many subsets to enumerate the channel): every report has omega
    members, x is in it with probability p and every other category with q (5 standard errors, 10^5 reports)."""
    import ldpest_multinomial.subset as subset

    mech = make("subset-selection", d, 1.0, subset_size=omega)
    assert subset._sampler(d, omega) == "table" and subset._subset_table(d, omega).dtype == np.uint64
    n = 100_000
    bits = mech.privatize(np.full(n, x), rng=np.random.default_rng(9)).values
    assert (bits.sum(axis=1) == omega).all()
    p, q = (float(value) for value in mech.inclusion_probabilities)
    rates = bits.mean(axis=0)
    assert abs(rates[x] - p) < 5 * math.sqrt(p * (1 - p) / n)
    others = np.delete(rates, x)
    assert np.all(np.abs(others - q) < 5 * math.sqrt(q * (1 - q) / n))


def test_the_subset_table_holds_every_subset_once():
    import ldpest_multinomial.subset as subset

    for d, omega in [(2, 1), (5, 2), (20, 5), (33, 2), (64, 1)]:
        table = subset._subset_table(d, omega)
        with_x = math.comb(d - 1, omega - 1)
        assert table.size == with_x + math.comb(d - 1, omega) and table.dtype == (np.uint32 if d <= 32 else np.uint64)
        assert len(set(table[:with_x].tolist())) == with_x and len(set(table[with_x:].tolist())) == table.size - with_x
        sizes = [bin(mask).count("1") for mask in table.tolist()]
        assert sizes == [omega - 1] * with_x + [omega] * (table.size - with_x)
        assert max(table.tolist()) < 1 << (d - 1)


ORACLES = ["randomized-response", "unary-randomized-response", "subset-selection", "hadamard-response",
           "local-hashing", "laplace"]


@pytest.mark.parametrize("name", ORACLES)
@pytest.mark.parametrize("epsilon", [50.0, 709.0])
@pytest.mark.parametrize("n", [1, 10])
def test_standard_errors_are_never_zero_at_large_epsilon(name, epsilon, n):
    """Issue 23: where the implemented keep probability rounds to 1.0 in float64, standard errors
    were exactly 0 (randomized response, subset selection, Hadamard from epsilon 50; unary and local
    hashing from 709) and intervals had zero width.  They now come from the exact complement."""
    import warnings

    mechanism = ldpest.mechanism(name, epsilon=epsilon, categories=[0, 1, 2])
    for data in (np.zeros(n, int), np.arange(n) % 2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ldpest.EstimateWarning)  # n = 1: uninformative by design
            result = ldpest.confidence_interval(ldpest.estimate(mechanism.privatize(data, rng=1)), 0.95)
        assert np.all(result["stderr"].values > 0), result["stderr"].values
        assert np.all(result["upper"].values > result["lower"].values)
        truth = np.bincount(data, minlength=3) / n
        assert np.all((result["lower"].values <= truth) & (truth <= result["upper"].values))
