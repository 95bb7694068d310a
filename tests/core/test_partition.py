import itertools

import numpy as np
import pytest

from ldpest.stats.partition import CubicPartition


def test_box_lookup_matches_brute_force_and_closes_the_upper_faces():
    part = CubicPartition.box([0, -1], [1, 1], [4, 3])
    rng = np.random.default_rng(0)
    points = np.vstack([rng.uniform([-0.2, -1.2], [1.2, 1.2], (2000, 2)), [[1, 1], [0, -1], [1, 0.5], [1.0000001, 0]]])
    lower, upper = part.cell_corners()
    for point, cell in zip(points, part.locate(points), strict=True):
        last = np.isclose(upper, [1, 1])  # cells on the closed upper faces of the box
        inside = np.all((point >= lower) & ((point < upper) | (last & (point == 1.0))), axis=1)
        assert cell == (np.flatnonzero(inside)[0] if inside.any() else -1)
    assert part.size == 12 and part.cell_volume == pytest.approx(0.25 * 2 / 3)
    assert part.locate(np.array([[1.0, 1.0]]))[0] == 11  # the corner belongs to the last cell


@pytest.mark.parametrize("d,radius,h", [(1, 1.0, 0.3), (2, 1.0, 0.5), (2, 0.7, 0.25), (3, 1.0, 0.6)])
def test_ball_cells_are_exactly_the_cubes_meeting_the_ball(d, radius, h):
    part = CubicPartition.ball(radius, h, d)
    reach = int(np.ceil(radius / h)) + 1
    expected = []
    for m in itertools.product(range(-reach, reach), repeat=d):
        low = np.array(m) * h
        closest = np.clip(0.0, low, low + h)  # closest point of the closed cube
        distance2 = np.sum(closest ** 2)
        on_open_face = np.any(closest == low + h)  # cells are half-open: [low, low + h)
        if distance2 < radius ** 2 or (distance2 == radius ** 2 and not on_open_face):
            expected.append(tuple(low))
    lower, _ = part.cell_corners()
    assert sorted(map(tuple, np.round(lower, 12))) == sorted(map(tuple, np.round(expected, 12)))
    rng = np.random.default_rng(d)
    points = rng.uniform(-radius - h, radius + h, (3000, d))
    cells = part.locate(points)
    lower, upper = part.cell_corners()
    for point, cell in zip(points, cells, strict=True):
        inside = np.flatnonzero(np.all((point >= lower) & (point < upper), axis=1))
        assert cell == (inside[0] if inside.size else -1)


# --- exact lookup at every edge (the audit found x = high outside the box for 41 of 1600 settings) ---
def _settings():
    rng = np.random.default_rng(7)
    lows = np.concatenate([[0.0, -1.0, 5.5, -1e3], rng.uniform(-100, 100, 16)])
    spans = np.concatenate([[1.0, 100.0, 0.3, 7.7, 20000.0], rng.uniform(0.01, 1000, 15)])
    bins = (1, 3, 7, 29, 49, 97, 100, 128, 257, 1000)
    return [(float(a), float(a + s), b) for a in lows[:10] for s in spans[:8] for b in bins]


def test_every_edge_lands_in_the_cell_its_reported_bounds_hold():
    """For 800 (low, high, bins): x = high is in the last cell, x = low in the first, each
    interior edge in the cell above it, and the float just below an edge in the cell below."""
    for low, high, bins in _settings():
        part = CubicPartition.box([low], [high], [bins])
        bounds = part.axis_edges(0)
        edges = np.append(bounds[:, 0], bounds[-1, 1])
        assert edges[0] == low and edges[-1] == high
        cells = part.locate(edges[:, None])
        np.testing.assert_array_equal(cells, np.append(np.arange(bins), bins - 1))
        below = part.locate(np.nextafter(edges[1:], -np.inf)[:, None])
        np.testing.assert_array_equal(below, np.arange(bins))
        outside = part.locate(np.array([[np.nextafter(low, -np.inf)], [np.nextafter(high, np.inf)]]))
        np.testing.assert_array_equal(outside, [-1, -1])


def test_mass_on_the_upper_face_is_estimated_without_bias():
    """Half the data at x = 1.0 with [0, 1] and 49 bins: the last cell's mass is ~0.51, not ~0."""
    import ldpest

    mech = ldpest.mechanism("laplace-histogram", epsilon=1.0, low=[0.0], high=[1.0], bins=49)
    n = 200_000
    data = np.concatenate([np.ones(n // 2), np.linspace(0, 1, n // 2, endpoint=False)])
    result = ldpest.estimate(mech.privatize(data, rng=np.random.default_rng(11)), "histogram-mean")
    truth = 0.5 + 0.5 / 49
    last = float(result["unprojected"].values[-1]) * mech.partition.cell_volume
    se = float(result["stderr"].values[-1]) * mech.partition.cell_volume
    assert abs(last - truth) < 5 * se
