import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import minimize

import ldpest.stats.projection as projection
from ldpest.stats.projection import affine_count_mle, project_positive, project_simplex

vectors = arrays(np.float64, st.integers(1, 30), elements=st.floats(-50, 50, allow_nan=False))


@given(vectors, st.floats(0.1, 10))
@settings(max_examples=300, deadline=None)
def test_simplex_projection_is_feasible_idempotent_and_optimal(v, total):
    w = project_simplex(v, total)
    assert np.all(w >= 0) and abs(w.sum() - total) < 1e-9 * max(1, total)
    np.testing.assert_allclose(project_simplex(w, total), w, atol=1e-10)
    # variational inequality at every vertex: <v - w, total e_j - w> <= 0
    vertices = total * np.eye(len(v))
    assert np.all((vertices - w) @ (v - w) <= 1e-8 * (1 + np.abs(v).max()))


@given(vectors)
@settings(max_examples=200, deadline=None)
def test_simplex_projection_is_never_farther_from_a_simplex_point(v):
    rng = np.random.default_rng(len(v))
    theta = rng.dirichlet(np.ones(len(v)))
    assert np.linalg.norm(project_simplex(v) - theta) <= np.linalg.norm(v - theta) + 1e-12


def test_simplex_projection_matches_a_generic_solver():
    rng = np.random.default_rng(3)
    for _ in range(20):
        v = rng.normal(size=8)
        res = minimize(lambda t, v=v: ((t - v) ** 2).sum(), np.full(8, 1 / 8), method="SLSQP",
                       bounds=[(0, None)] * 8, constraints={"type": "eq", "fun": lambda t: t.sum() - 1},
                       options={"ftol": 1e-14, "maxiter": 500})
        np.testing.assert_allclose(project_simplex(v), res.x, atol=1e-6)


def test_simplex_projection_is_batched_along_the_last_axis():
    rng = np.random.default_rng(4)
    v = rng.normal(size=(7, 5))
    np.testing.assert_array_equal(project_simplex(v), np.array([project_simplex(row) for row in v]))


@pytest.mark.parametrize("block", [1, 13, 1 << 17])
def test_batches_in_blocks_of_rows_are_projected_row_by_row(block, monkeypatch):
    """Blocks of rows (``_SIMPLEX_BLOCK`` values: one row, two rows with a last block of one, all at once)
    give each row exactly its own projection and count MLE, for 2-D and 3-D batches."""
    rng = np.random.default_rng(6)
    monkeypatch.setattr(projection, "_SIMPLEX_BLOCK", block)
    for shape in ((9, 6), (2, 5, 6)):
        v = np.round(rng.normal(0.1, 0.5, shape), 1)  # ties too
        rows = v.reshape(-1, shape[-1])
        np.testing.assert_array_equal(project_simplex(v, 0.7).reshape(rows.shape),
                                      [project_simplex(row, 0.7) for row in rows])
        counts = rng.poisson(2.0, shape).astype(np.float64) + 1
        np.testing.assert_array_equal(affine_count_mle(counts, 0.3).reshape(rows.shape),
                                      [affine_count_mle(row, 0.3) for row in counts.reshape(rows.shape)])


def test_positive_projection():
    m = np.array([0.5, -0.1, 0.3, 0.4])
    out = project_positive(m)
    np.testing.assert_allclose(out, [0.5 / 1.2, 0, 0.3 / 1.2, 0.4 / 1.2])
    np.testing.assert_allclose(project_positive(-np.ones(4)), np.full(4, 0.25))


@given(arrays(np.float64, st.integers(2, 20), elements=st.floats(-1, 1, allow_nan=False)))
@settings(max_examples=200, deadline=None)
def test_positive_projection_never_increases_l1_error_when_masses_sum_to_one(raw):
    rng = np.random.default_rng(raw.size)
    truth = rng.dirichlet(np.ones(raw.size))
    m = raw - raw.mean() + 1 / raw.size  # sums to one, like an unbiased estimate's expectation
    if np.maximum(m, 0).sum() == 0:
        pytest.skip("degenerate")
    assert np.abs(project_positive(m) - truth).sum() <= np.abs(m - truth).sum() + 1e-12


@pytest.mark.parametrize("values, expected", [
    ([1e20, 0.0], [1.0, 0.0]),
    ([1e20, 1e20, 0.0], [0.5, 0.5, 0.0]),
    ([-1e20, 0.0, 1.0], [0.0, 0.0, 1.0]),
    ([1e300, -1e300], [1.0, 0.0]),
    ([5e-324, 0.0], [0.5, 0.5]),
])
def test_simplex_projection_of_extreme_values(values, expected):
    """Issue 23: project_simplex([1e20, 0]) returned [5e19, 0]; the projection commutes with shifts,
    so it is computed after subtracting the largest value."""
    projected = project_simplex(values)
    np.testing.assert_allclose(projected, expected, atol=1e-12)
    assert projected.sum() == pytest.approx(1.0)


def test_the_positive_frequency_projection_clips_and_renormalises_like_multi_freq_ldpy():
    """projection="positive" (Norm-Mul): max(theta, 0) / sum, uniform when nothing is positive; the
    unprojected estimate and its stderr stay beside it."""
    import ldpest

    mech = ldpest.mechanism("randomized-response", epsilon=1.0, categories=["a", "b", "c", "d"])
    reports = mech.privatize(np.random.default_rng(2).choice(["a", "b", "c", "d"], 2000, p=[0.7, 0.3, 0, 0]), rng=3)
    result = ldpest.estimate(reports, ldpest.estimator("frequency", projection="positive"))
    theta = result["unprojected"].values
    assert (theta < 0).any()  # the case the projection is for
    np.testing.assert_allclose(result["probability"].values, np.maximum(theta, 0) / np.maximum(theta, 0).sum(),
                               rtol=1e-15)
    assert result.attrs["projection"] == "positive"
    np.testing.assert_array_equal(result["stderr"].values, ldpest.estimate(reports)["stderr"].values)
    weighted = ldpest.estimate(reports, ldpest.estimator("frequency", projection="positive"), weights=np.ones(2000))
    np.testing.assert_allclose(weighted["probability"].values, result["probability"].values, rtol=1e-12)
    np.testing.assert_array_equal(project_positive(np.array([-1.0, -2.0])), [0.5, 0.5])


def test_every_post_processing_is_batched_along_the_last_axis():
    """``auto``'s bootstrap post-processes all its simulations at once: each row of a batch is what the 1-d call
    gives, including the rows each function treats apart (nothing positive, no count, exactly uniform)."""
    from ldpest.stats.projection import affine_count_mle, ibu_fixed_point, shrink_to_uniform

    rows = np.random.default_rng(3).normal(0.1, 0.3, size=(40, 6))
    rows[0] = -1.0  # nothing positive: uniform (positive), no count (ibu)
    rows[1] = 1 / 6  # exactly uniform: no spread to shrink
    rows[2] = [1.0, 0, 0, 0, 0, 0]  # one category
    for batched, single in [
        (project_positive(rows), [project_positive(row) for row in rows]),
        (ibu_fixed_point(rows, 0.4), [ibu_fixed_point(row, 0.4) for row in rows]),
        (affine_count_mle(np.abs(rows), 0.4), [affine_count_mle(np.abs(row), 0.4) for row in rows]),
        (shrink_to_uniform(rows, 0.05)[0], [shrink_to_uniform(row, 0.05)[0] for row in rows]),
        (shrink_to_uniform(rows, 0.0)[0], [shrink_to_uniform(row, 0.0)[0] for row in rows]),
    ]:
        np.testing.assert_allclose(batched, np.array(single), rtol=1e-13, atol=1e-15)
    weights = shrink_to_uniform(rows, 0.05)[1]
    np.testing.assert_allclose(weights, [shrink_to_uniform(row, 0.05)[1] for row in rows], rtol=1e-13)
    assert weights[1] == 0.0 and shrink_to_uniform(rows[1], 0.05)[1] == 0.0
    assert np.all(project_positive(rows)[0] == 1 / 6) and np.all(ibu_fixed_point(rows, 0.4)[0] == 1 / 6)


def _long_rows(d, rng):
    """Rows of length ``d`` on which the largest-values path meets each of its branches: noisy skewed rows (a
    few values above the level), nearly flat ones (all of them), ties, one value alone, extremes, and a row
    whose largest value sits in the sample (index 0), where the first guess is too high."""
    truth = np.exp(-12.5 * np.arange(d) / d)
    truth /= truth.sum()
    rows = [truth + rng.normal(0, sd, d) for sd in (1e-9, 1e-6, 1e-4, 1e-3, 0.03, 1.0)]
    rows += [truth, np.full(d, 1.0 / d), 1.0 / d + rng.normal(0, 1e-7, d), rng.poisson(0.1, d) / 1000.0,
             rng.poisson(5.0, d).astype(np.float64), np.eye(1, d, d // 2)[0], 0.5 ** np.arange(d),
             rng.permutation(np.arange(d, dtype=np.float64)), np.r_[1e20, np.zeros(d - 1)],
             rng.standard_cauchy(d), rng.binomial(1, 1e-3, d) * rng.uniform(0, 1, d),
             np.r_[5.0, np.full(d - 1, 0.1) + rng.normal(0, 1e-6, d - 1)]]
    return np.array(rows)


@pytest.mark.parametrize(("d", "start"), [(300, 64), (3000, 64), (20000, None)])
def test_long_rows_are_solved_from_their_largest_values_to_the_bit(d, start, monkeypatch):
    """Rows of at least ``_LARGEST_FROM`` values sort only the values above a guessed level; the projection
    and the count MLE are those of the full sort, bit for bit, and the guess does spare most of the sort on
    noisy rows (the sizes that reach the solvers are recorded)."""
    rng = np.random.default_rng(d)
    rows = _long_rows(d, rng)
    counts = np.abs(rows) * 1000
    counts[:, 0] += 1
    if start is not None:
        monkeypatch.setattr(projection, "_LARGEST_FROM", start)
    sorted_sizes = []
    for name in ("_simplex_level", "_water_level"):
        solver = getattr(projection, name)
        monkeypatch.setattr(projection, name, lambda u, *a, solver=solver: sorted_sizes.append(u.size) or solver(u, *a))
    largest = [project_simplex(rows, total) for total in (1.0, 0.3)]
    largest += [affine_count_mle(counts, offset) for offset in (1e-3, 0.3, 30.0)]
    sizes = sorted_sizes[:]
    alone = [(project_simplex(rows[index]), affine_count_mle(counts[index], 0.3)) for index in (4, 8)]
    monkeypatch.setattr(projection, "_LARGEST_FROM", d + 1)  # every row by the full sort
    full = [project_simplex(rows, total) for total in (1.0, 0.3)]
    full += [affine_count_mle(counts, offset) for offset in (1e-3, 0.3, 30.0)]
    for fast, slow in zip(largest, full, strict=True):
        np.testing.assert_array_equal(fast, slow)
    for index, (simplex, water) in zip((4, 8), alone, strict=True):  # a row alone (an estimate's own) as in the batch
        np.testing.assert_array_equal(simplex, full[0][index])
        np.testing.assert_array_equal(water, full[3][index])
    solves = 5 * rows.shape[0]
    assert 0 < sizes.count(d) <= solves // 3  # 20-27 of 90 here: the rows that need every value
