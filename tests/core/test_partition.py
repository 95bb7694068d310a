import itertools

import numpy as np
import pytest

from ldpest.partition import CubicPartition


def test_box_lookup_matches_brute_force_and_closes_the_upper_faces():
    part = CubicPartition.box([0, -1], [1, 1], [4, 3])
    rng = np.random.default_rng(0)
    points = np.vstack([rng.uniform([-0.2, -1.2], [1.2, 1.2], (2000, 2)), [[1, 1], [0, -1], [1, 0.5], [1.0000001, 0]]])
    lower, upper = part.cell_corners()
    for point, cell in zip(points, part.locate(points)):
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
    for point, cell in zip(points, cells):
        inside = np.flatnonzero(np.all((point >= lower) & (point < upper), axis=1))
        assert cell == (inside[0] if inside.size else -1)
