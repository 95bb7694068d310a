"""Privacy of what the code implements, computed exactly (docs/privacy.md).

Every check here reads the sampler's own tables and integer thresholds (the
words it compares, the alias arrays it indexes) and computes the implemented
law in integer or rational arithmetic; likelihood ratios are compared with
e^epsilon by :func:`ldpest.privacy.exact.ratio_within`, a proof.  Epsilons span every
regime the code accepts, including those where float probabilities round to
0 or 1.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from rng_helpers import ScriptedWords

import ldpest
from ldpest.privacy.alias import TOTAL_BITS
from ldpest.privacy.discrete_laplace import DiscreteLaplaceLaw
from ldpest.privacy.exact import WORD, keep_threshold, ratio_within, smallest_threshold
from ldpest.privacy.noise import LatticeLaplace
from ldpest_series import linf

WIDE_EPSILONS = [1e-6, 0.01, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 36.7, 40.0, 44.0, 50.0, 100.0, 709.0, 710.0, 1e5]
TOTAL = 1 << TOTAL_BITS


# --- the proof primitive ----------------------------------------------------------------
def test_ratio_within_decides_at_the_twentieth_digit():
    # e = 2.71828182845904523536...
    assert ratio_within(271828182845904523, 10 ** 17, 1.0)
    assert not ratio_within(271828182845904524, 10 ** 17, 1.0)
    assert ratio_within(0, 5, -1.0) and not ratio_within(1, 0, 1e300)
    assert ratio_within(10, 1, 1.0, power=0)  # (10)^0 = 1 <= e
    assert not ratio_within(2, 1, 1.0, power=2)  # 4 > e


@pytest.mark.parametrize("epsilon", WIDE_EPSILONS)
@pytest.mark.parametrize("others", [1, 2, 9, 999])
def test_keep_threshold_is_the_largest_proven_one(epsilon, others):
    t = keep_threshold(epsilon, others)
    assert 0 < t < WORD
    assert ratio_within(t * others, WORD - t, epsilon)
    if t < WORD - 1:  # one more would break the bound (or the threshold saturated at 2^64 - 1)
        assert not ratio_within((t + 1) * others, WORD - t - 1, epsilon)


# --- finite channels: every epsilon, built from the thresholds the sampler uses ------------
@pytest.mark.parametrize("epsilon", WIDE_EPSILONS)
@pytest.mark.parametrize("name,d", [("randomized-response", 2), ("randomized-response", 5),
                                    ("unary-randomized-response", 3)])
def test_finite_multinomial_channels_hold_at_every_epsilon(name, d, epsilon):
    mech = ldpest.mechanism(name, epsilon=epsilon, categories=list(range(d)))
    channel = mech.channel()
    assert channel.exact
    assert channel.satisfies(epsilon)  # rows sum to exactly 1 and every ratio <= e^epsilon, proven
    assert min(min(row) for row in channel.dense()) > 0  # full support: no output rules out an input


@pytest.mark.parametrize("epsilon", [0.5, 36.7, 50.0])
def test_randomized_response_keeps_exactly_below_its_threshold(epsilon):
    """The sampler keeps the truth iff its word is below the threshold the channel is built from."""
    mech = ldpest.mechanism("randomized-response", epsilon=epsilon, categories=["a", "b"])
    threshold = mech._keep
    assert Fraction(threshold, WORD) == mech.channel().dense()[0, 0]
    reports = mech.privatize(["a", "a"], rng=ScriptedWords([threshold - 1, threshold]))
    assert reports.values.tolist() == [0, 1]


@pytest.mark.parametrize("epsilon", [0.5, 20.0, 50.0])
def test_unary_flips_exactly_at_its_threshold(epsilon):
    """The sampler compares 16-bit heads first and 48-bit tails on a tie (ldpest.privacy.exact.words_below):
    with both heads tied, tails T_tail - 1 and T_tail keep and flip; heads below and above decide alone."""
    mech = ldpest.mechanism("unary-randomized-response", epsilon=epsilon, categories=["a", "b"])
    threshold = mech._keep
    head, tail = threshold >> 48, threshold & ((1 << 48) - 1)
    tied = head | (head << 16)  # the first word's two 16-bit quarters are the two coordinates' heads
    reports = mech.privatize(["a"], rng=ScriptedWords([tied, (tail - 1) << 16, tail << 16]))
    assert reports.values.tolist() == [[1, 1]]  # true bit kept (word < T); other bit flipped (word = T)
    if 0 < head < 0xFFFF:
        decided = (head - 1) | ((head + 1) << 16)  # no tie, so no tail is drawn
        reports = mech.privatize(["b"], rng=ScriptedWords([decided]))
        assert reports.values.tolist() == [[0, 0]]  # a's 0 kept (head below); b's 1 flipped (head above)


@pytest.mark.parametrize("threshold", [0, 1, (1 << 48) - 1, 1 << 48, (5 << 48) + 12345, (1 << 63) + 7,
                                       WORD - 1, WORD])
def test_words_below_has_the_law_of_whole_words(threshold):
    """Every branch of the two-stage comparison, scripted, against the whole-word comparison."""
    from ldpest.privacy.exact import words_below

    head, tail = threshold >> 48, threshold & ((1 << 48) - 1)
    for first in {max(head - 1, 0), min(head, 0xFFFF), min(head + 1, 0xFFFF)}:  # 16-bit heads only
        for rest in {0, max(tail - 1, 0), tail, min(tail + 1, (1 << 48) - 1), (1 << 48) - 1}:
            word = (first << 48) | rest
            got = words_below(ScriptedWords([first, rest << 16]), 1, threshold)
            assert got.tolist() == [word < threshold], (first, rest)
    counts = words_below(np.random.default_rng(3), 400_000, (1 << 63) + (1 << 61)).mean()
    assert abs(counts - 0.625) < 5 * math.sqrt(0.625 * 0.375 / 400_000)


@pytest.mark.parametrize("epsilon", WIDE_EPSILONS)
def test_example_oue_plugin_holds_at_every_epsilon(epsilon, tmp_path, fresh_registry, monkeypatch):
    import sys

    from plugin_fixtures import EXAMPLE_PLUGIN, pip_install_target

    target = pip_install_target(EXAMPLE_PLUGIN, tmp_path / "site")
    monkeypatch.syspath_prepend(str(target))
    sys.modules.pop("ldpest_oue", None)
    ldpest.reset_registry()
    mech = ldpest.mechanism("optimized-unary-encoding", epsilon=epsilon, categories=["a", "b", "c"])
    channel = mech.channel()
    assert channel.exact and channel.satisfies(epsilon)
    assert min(min(row) for row in channel.dense()) > 0


@pytest.mark.parametrize("epsilon", WIDE_EPSILONS)
@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_linf_channel_holds_at_every_epsilon(k, epsilon):
    mech = ldpest.mechanism("linf-sampling", epsilon=epsilon, basis="walsh", k=k)
    channel = mech.channel()
    assert channel.exact and channel.satisfies(epsilon)
    assert min(min(row) for row in channel.dense()) > 0
    assert math.isfinite(mech.scale) and mech.scale > 0


@pytest.mark.parametrize("epsilon", [1.0, 40.0])
def test_linf_accepts_a_far_sample_exactly_below_its_threshold(epsilon):
    """Walsh at x = 0 has tau = (1, 1): the vertex s is (+1, +1).  u = (-1, -1) is on the far
    side and is accepted iff the acceptance word is below A."""
    mech = ldpest.mechanism("linf-sampling", epsilon=epsilon, basis="walsh", k=2)
    a = linf.acceptance_threshold(epsilon)
    far = 0  # all bits 0: u = (-1, -1)
    near = 3  # u = (+1, +1)
    accepted = mech.privatize([0.0], rng=ScriptedWords([far, a - 1]))
    assert accepted.values.tolist() == [[-1, -1]]
    rejected = mech.privatize([0.0], rng=ScriptedWords([far, a, near, 0]))
    assert rejected.values.tolist() == [[1, 1]]
    assert a == smallest_threshold(lambda v: ratio_within(WORD, v, epsilon), 1, WORD)


# --- the discrete Laplace law: the tables the sampler indexes --------------------------------
def _implemented_magnitude_law(law: DiscreteLaplaceLaw):
    """f(m) from the weights decoded from the packed alias array the sampler indexes (one-level
    tables; the decoding is checked against the sampler's own lookup below)."""
    weights = law.levels[0].table.implemented_weights()
    carry = len(weights) - 1
    tau = Fraction(weights[-1], TOTAL)

    def f(m):
        blocks, digit = divmod(m, carry)
        return tau ** blocks * Fraction(weights[digit], TOTAL)

    return weights, carry, f


ONE_HOT_EPSILONS = [0.00025, 0.001, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 20.0, 100.0, 1e4, 1e7, 2.0 ** 32]


@pytest.mark.parametrize("epsilon", ONE_HOT_EPSILONS)
def test_one_hot_laplace_proof_holds_at_every_epsilon(epsilon):
    """The analysed tables are the sampled ones, support is full, and the proof
    ``L * loss_per_step <= epsilon`` holds (the adjacent-ratio bound is itself checked by brute force below)."""
    noise = LatticeLaplace(epsilon, 2.0, on_lattice=True, one_level=True)
    weights, _, _ = _implemented_magnitude_law(noise.law)
    assert weights == list(noise.law.levels[0].weights) and min(weights) >= 1
    assert noise.sensitivity_steps == 2 * round(1 / noise.step)
    num, den = noise.law.loss_per_step
    assert ratio_within(num, den, epsilon, power=noise.sensitivity_steps)
    values = noise.lattice_noise(1000, np.random.default_rng(1)) + 1.0
    assert np.array_equal(values / noise.step, np.rint(values / noise.step))  # exact lattice floats


@pytest.mark.parametrize("epsilon", [e for e in ONE_HOT_EPSILONS if e <= 100])
def test_one_hot_laplace_is_exactly_epsilon_ldp(epsilon):
    """Two one-hot inputs (or a one-hot and the zero vector) differ by 1/g steps in at most two
    coordinates.  Enumerate P(K = k) / P(K = k + s), s = 1/g, exactly from the alias arrays
    over k in [-(2c + s), 2c + s], c = N - 1; beyond, f(m + c) = tau f(m) makes the ratios
    repeat, so this covers every k.  Two coordinates: the squared worst ratio is <= e^epsilon."""
    noise = LatticeLaplace(epsilon, 2.0, on_lattice=True, one_level=True)
    weights, carry, f = _implemented_magnitude_law(noise.law)
    assert weights == list(noise.law.levels[0].weights)  # the analysed law is the sampled law
    assert min(weights) >= 1  # infinite support: every output is possible under every input
    shift = round(1 / noise.step)
    assert noise.sensitivity_steps == 2 * shift
    span = 2 * carry + shift
    pmf = {k: f(abs(k)) for k in range(-span - shift, span + shift + 1)}  # common factor 1/(2 - f0) cancels
    worst = max(max(pmf[k] / pmf[k + shift], pmf[k + shift] / pmf[k]) for k in range(-span, span + 1))
    assert ratio_within(worst, 1, epsilon, power=2)


def _boundary_words(table):
    """For every bucket and both signs, the words whose low bits are 0, cut - 1, cut and the maximum."""
    capacity = 1 << table.low_bits
    words, expected = [], []
    for bucket, entry in enumerate(table.packed.tolist()):
        other, cut = entry >> table.low_bits, entry & (capacity - 1)
        for low in {0, max(cut - 1, 0), cut, capacity - 1}:
            symbol = bucket if (low < cut or other == bucket) else other
            for sign in (0, 1):
                words.append((bucket << (64 - table.bits)) | (sign << table.low_bits) | low)
                expected.append((symbol, sign))
    return np.array(words, dtype=np.uint64), expected


@pytest.mark.parametrize("epsilon", [0.01, 1.0, 100.0])
def test_lookups_draw_the_decoded_weights(epsilon):
    """symbols() picks the bucket's own symbol below its cut and the alias from the cut on (the
    decoding behind implemented_weights), and the sign-folded fast path used for one-level laws
    gives the same draw with the sign applied (symbol 0 with the sign set: the rejection marker)."""
    table = LatticeLaplace(epsilon, 2.0, on_lattice=True, one_level=True).law.levels[0].table
    words, expected = _boundary_words(table)
    np.testing.assert_array_equal(table.symbols(words), [symbol for symbol, _ in expected])
    signed = [(-(1 << table.bits) if symbol == 0 else -symbol) if sign else symbol for symbol, sign in expected]
    np.testing.assert_array_equal(table.signed_symbols(words), signed)


@pytest.mark.parametrize("t", [256.0, 300.5, 511.9, 4000.0, 16383.0, 16400.0, 70000.0])
def test_adjacent_ratio_range_matches_brute_force(t):
    """The law's enumerated set of adjacent ratios (digit roll-overs, carries) equals a brute-force
    scan of f(m) / f(m + 1) over two carry blocks of the top digit."""
    law = DiscreteLaplaceLaw(t)
    top = law.levels[-1]
    limit = 2 * top.unit * (top.size - 1) + 2
    ratios = [law.magnitude_pmf(m) / law.magnitude_pmf(m + 1) for m in range(limit)]
    assert (min(ratios), max(ratios)) == law.adjacent_ratio_range
    num, den = law.loss_per_step
    assert ratio_within(num, den, 1.0 / t)  # at most the budget per step


@pytest.mark.parametrize("epsilon,k", [(0.01, 3), (0.5, 9), (1.0, 33), (8.0, 2)])
def test_laplace_series_noise_is_proven_for_its_sensitivity(epsilon, k):
    """Rounded inputs in [-B0, B0]^k differ by at most ceil(B0/g) - floor(-B0/g) steps per coordinate,
    which the proven sensitivity covers; and L * loss_per_step <= epsilon."""
    mech = ldpest.mechanism("laplace-series", epsilon=epsilon, basis="trigonometric", k=k)
    noise = mech.noise
    b0, g = mech.basis.B0, noise.step
    per_coordinate = math.ceil(b0 / g) - math.floor(-b0 / g)
    assert noise.sensitivity_steps >= k * per_coordinate
    num, den = noise.law.loss_per_step
    assert ratio_within(num, den, epsilon, power=noise.sensitivity_steps)


@pytest.mark.parametrize("t", [300.5, 4000.0, 16400.0])
def test_sampler_draws_the_analysed_law(t):
    """Chi-square of integer draws against the exact pmf (values |k| <= 3 t binned, tails pooled)."""
    from scipy import stats

    law = DiscreteLaplaceLaw(t)
    draws = law.sample(400_000, np.random.default_rng(int(t)))
    edges = np.unique(np.round(np.linspace(-3 * t, 3 * t, 41)).astype(np.int64))
    # bins (edges[i-1], edges[i]] from the exact pmf; the two tails share the rest (symmetric law)
    inner = [float(sum(law.pmf(k) for k in range(int(a) + 1, int(b) + 1)))
             for a, b in zip(edges[:-1], edges[1:], strict=True)]
    below_first = (1.0 - float(law.pmf(0)) - 2 * float(sum(law.pmf(k) for k in range(1, -int(edges[0]))))) / 2
    first = below_first + float(law.pmf(int(edges[0])))
    probabilities = np.array([first] + inner + [0.0])
    probabilities[-1] = 1.0 - probabilities.sum()
    counts = np.bincount(np.searchsorted(edges, draws, side="left"), minlength=len(edges) + 1)
    assert stats.chisquare(counts, probabilities * draws.size).pvalue > 1e-6


def test_a_negative_zero_draw_is_rejected_not_released():
    """A word that selects magnitude 0 with the sign bit set must be drawn again: the released
    noise is never a signed zero, and zero keeps probability f(0) / (2 - f(0))."""
    noise = LatticeLaplace(1.0, 2.0, on_lattice=True, one_level=True)
    table = noise.law.levels[0].table
    bucket = 0
    assert table.cut[0] > 0  # symbol 0 is bucket 0's own symbol for low bits 0
    negative_zero = (bucket << (64 - table.bits)) | (1 << table.low_bits)  # low bits 0 < cut: symbol 0
    assert table.symbols(np.array([negative_zero], dtype=np.uint64))[0] == 0
    values = noise.lattice_noise(1, ScriptedWords([negative_zero]))
    assert not (values[0] == 0 and math.copysign(1, values[0]) < 0)


@pytest.mark.parametrize("name,params", [
    ("laplace", {"categories": ["a", "b", "c"]}),
    ("laplace-histogram", {"low": [0.0], "high": [1.0], "bins": 3}),
    ("laplace-series", {"basis": "walsh", "k": 4}),
])
def test_no_report_is_ever_negative_zero(name, params):
    mech = ldpest.mechanism(name, epsilon=30.0, **params)  # large epsilon: many exact zeros of noise
    data = ["a", "b", "c"] * 30_000 if name == "laplace" else np.linspace(0, 1, 90_000)
    values = mech.privatize(data, rng=np.random.default_rng(5)).values
    zeros = values == 0
    assert zeros.any()  # the test has teeth: zeros occur
    assert not np.signbit(values[zeros]).any()


def test_the_all_ones_word_gives_a_report_possible_under_every_input():
    """The audit's example: the extreme word.  With the table law every lattice point has
    positive probability under every input (full support), so no report rules one out."""
    mech = ldpest.mechanism("laplace", epsilon=1.0, categories=["a", "b"])
    report = mech.privatize(["a"], rng=ScriptedWords([WORD - 1, WORD - 1, WORD - 1])).values[0]
    g = mech.noise.step
    for _coordinate, value in enumerate(report):
        for truth in (0.0, 1.0):
            k = round((value - truth) / g)
            assert (value - truth) / g == k and mech.noise.pmf_steps(k) > 0


# --- every epsilon is safe or refused ----------------------------------------------------------
def test_one_hot_laplace_refuses_epsilon_below_its_table_range_and_accepts_above():
    smallest = 2.0 ** -12  # one-level tables: 4 t < 2^16 with t = 4 / epsilon
    with pytest.raises(ldpest.ParameterError, match="epsilon must be greater than 0.000244"):
        ldpest.mechanism("laplace", epsilon=smallest, categories=["a", "b"])
    with pytest.raises(ldpest.ParameterError, match="greater than"):
        ldpest.mechanism("laplace-histogram", epsilon=smallest, low=[0.0], high=[1.0], bins=2)
    mech = ldpest.mechanism("laplace", epsilon=smallest * 1.0001, categories=["a", "b"])
    assert mech.noise.privacy_loss <= mech.epsilon


def test_laplace_refuses_epsilon_above_its_lattice_range():
    with pytest.raises(ldpest.ParameterError, match="above the largest supported"):
        ldpest.mechanism("laplace", epsilon=2.0 ** 32 * 1.5, categories=["a", "b"])
    assert ldpest.mechanism("laplace", epsilon=2.0 ** 32, categories=["a", "b"]).noise.privacy_loss <= 2.0 ** 32


# --- epsilons below what 64-bit thresholds resolve: refused, never inverted ---------------------------
TINY_EPSILONS = [1e-300, 1e-50, 1e-44, 1e-30, 1e-20, 1e-18, 1e-16, 1e-15, 1e-12]


@pytest.mark.parametrize("epsilon", TINY_EPSILONS)
@pytest.mark.parametrize("name,params", [
    ("randomized-response", {"categories": ["a", "b", "c"]}),
    ("unary-randomized-response", {"categories": ["a", "b"]}),
    ("local-hashing", {"categories": [0, 1, 2], "hash_range": 3, "prime": 5}),
    ("subset-selection", {"categories": [0, 1, 2, 3]}),
    ("hadamard-response", {"categories": [0, 1, 2]}),
    ("linf-sampling", {"basis": "walsh", "k": 2}),
])
def test_tiny_epsilon_is_refused_or_proven(name, params, epsilon):
    """Below the guard of the proof (1e-45) or the resolution of 2^-64, the largest proven threshold
    fell under the neutral point: the channel favoured the *other* outputs and broke the bound the
    other way (randomized response at 1e-20 did).  Now such epsilons are refused with the limit
    named; accepted ones are proven and favour the truth."""
    try:
        mech = ldpest.mechanism(name, epsilon=epsilon, **params)
    except ldpest.ParameterError as exc:
        assert "too small" in str(exc) and "1e-12 or more" in str(exc)
        return
    channel = mech.channel()
    assert channel.satisfies(epsilon)
    matrix = np.asarray(channel.dense())
    assert all(any(a != b for a, b in zip(matrix[0], row, strict=True)) for row in matrix[1:])  # inputs distinguishable


def test_the_cli_refuses_a_tiny_epsilon(tmp_path):
    from typer.testing import CliRunner

    from ldpest.cli import app

    data = tmp_path / "c.csv"
    data.write_text("a\nx\ny\nx\n")
    result = CliRunner().invoke(app, ["estimate", str(data), "-c", "a", "-m", "randomized-response", "-e", "1e-300",
                                      "--categories", "x,y"])
    assert result.exit_code == 2 and "epsilon = 1e-300 is too small" in result.stderr


@pytest.mark.parametrize("epsilon,d", [(0.5, 4), (3.0, 7), (50.0, 3), (1e-9, 5)])
def test_randomized_response_gives_each_other_category_exactly_one_share(epsilon, d):
    """One word: the truth below T, then d - 1 runs of exactly Q words, one per other category in order
    (the truth skipped).  Scripted at both ends of every run, so a run one word off fails."""
    from ldpest.privacy.exact import keep_threshold, shared_keep_threshold

    mech = ldpest.mechanism("randomized-response", epsilon=epsilon, categories=list(range(d)))
    keep, share = mech._keep, mech._share
    assert (keep, share) == shared_keep_threshold(epsilon, d - 1)
    assert keep + (d - 1) * share == WORD and 0 <= keep_threshold(epsilon, d - 1) - keep < d - 1
    truth = d // 2
    others = [c for c in range(d) if c != truth]
    words = [0, keep - 1] + [word for j in range(d - 1) for word in (keep + j * share, keep + (j + 1) * share - 1)]
    expected = [truth, truth] + [c for c in others for _ in range(2)]
    reports = mech.privatize([truth] * len(words), rng=ScriptedWords(words))
    assert reports.values.tolist() == expected
    assert mech.channel().satisfies(epsilon)


def test_uniform_below_redraws_exactly_the_values_at_or_above_its_span():
    """span = 2^31 - 2 takes the top 31 bits of 32-bit halves; 2^31 - 2 and 2^31 - 1 are drawn again.
    Scripted: the first word's halves are both rejects, the second word's are 5 and 2^31 - 3."""
    from ldpest.privacy.exact import uniform_below

    span = 2 ** 31 - 2
    rejects = ((2 ** 31 - 1) << 1) | (((2 ** 31 - 2) << 1) << 32)  # low half first (little-endian view)
    accepted = (5 << 1) | (((2 ** 31 - 3) << 1) << 32)
    values = uniform_below(ScriptedWords([rejects, accepted]), span, 2)
    assert values.tolist() == [5, 2 ** 31 - 3]
    with pytest.raises(ValueError, match="span"):
        uniform_below(np.random.default_rng(0), 2 ** 32 + 1, 3)


@pytest.mark.parametrize("span", [1, 3, 16, 125, 2 ** 31 - 2, 2 ** 31])
def test_uniform_below_gives_the_same_values_in_a_narrower_dtype(span):
    """Both paths: the values of a seed do not depend on the dtype asked for; one too narrow is refused."""
    from ldpest.privacy.exact import uniform_below

    wide = uniform_below(np.random.default_rng(4), span, 1000)
    if span - 1 <= np.iinfo(np.int32).max:
        narrow = uniform_below(np.random.default_rng(4), span, 1000, np.int32)
        assert narrow.dtype == np.int32 and narrow.tolist() == wide.tolist()
    else:
        with pytest.raises(ValueError, match="int32 does not hold 2147483647"):
            uniform_below(np.random.default_rng(4), span, 1000, np.int32)


@pytest.mark.parametrize("span", [1, 2, 16, 125, 127, 3, 2 ** 31 - 1])
def test_uniform_below_is_uniform(span):
    """Seeded chi-square over the values' residues mod 8 (all values where span <= 128), alarm at p < 1e-6;
    both paths (own redraws where span >= 63/64 of a power of two, numpy's integers else)."""
    from scipy import stats

    from ldpest.privacy.exact import uniform_below

    values = uniform_below(np.random.default_rng(span), span, 200_000)
    assert values.dtype == np.int64 and values.min() >= 0 and values.max() < span
    if span == 1:
        return
    cells = span if span <= 128 else 8
    expected = (span // cells + (np.arange(cells) < span % cells)) / span  # residues' exact shares
    observed = np.bincount(values % cells, minlength=cells)
    assert stats.chisquare(observed, expected * values.size).pvalue > 1e-6


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64])
def test_select_is_where_for_every_integer_dtype_and_refuses_others(dtype):
    """The branch-free blend behind randomized response, the alias tables, Hadamard response and the
    lattice samplers gives what ``np.where`` gives, the dtype's extremes included (its arithmetic wraps)."""
    from ldpest.privacy.exact import select

    info = np.iinfo(dtype)
    rng = np.random.default_rng(7)
    extremes = np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1], dtype=dtype)
    first = np.concatenate([extremes, rng.integers(info.min, info.max, 994, dtype=dtype, endpoint=True)])
    second = np.concatenate([extremes[::-1], rng.integers(info.min, info.max, 994, dtype=dtype, endpoint=True)])
    mask = rng.random(1000) < 0.5
    for a, b in ((first, second), (second, first), (first, first)):
        chosen = select(mask, a, b)
        assert chosen.dtype == dtype
        np.testing.assert_array_equal(chosen, np.where(mask, a, b))
    np.testing.assert_array_equal(select(mask, first, dtype(3)), np.where(mask, first, dtype(3)))
    for other in (first.astype(np.float64), mask):
        with pytest.raises(TypeError, match="select blends integers"):
            select(mask, other, other)
