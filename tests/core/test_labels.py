"""Label encoding: a mechanism learns once whether its categories are a run of ints (issue 28:
the check cost 6-10 ms per privatise call at d = 10^5), and encodes exactly as before."""

import numpy as np
import pytest

import ldpest
import ldpest.util.labels as labels


def test_a_mechanism_checks_its_categories_once(monkeypatch):
    calls = []
    real = labels.contiguous_int_range
    monkeypatch.setattr(labels, "contiguous_int_range", lambda categories: calls.append(1) or real(categories))
    mechanism = ldpest.mechanism("randomized-response", epsilon=1.0, categories=list(range(5, 105)))
    data = np.random.default_rng(0).integers(5, 105, 50)
    for seed in range(3):
        mechanism.privatize(data, rng=seed)
    assert len(calls) == 1


@pytest.mark.parametrize("categories", [list(range(5, 15)), [0, 2, 3, 7], ["a", "b", "c"], [3, 1, 2]])
def test_the_known_span_encodes_as_the_categories_say_and_refuses_the_same(categories):
    mechanism = ldpest.mechanism("randomized-response", epsilon=1.0, categories=categories)
    data = np.array([categories[i] for i in np.random.default_rng(1).integers(0, len(categories), 40)])
    expected = np.array([categories.index(value.item() if hasattr(value, "item") else value) for value in data])
    np.testing.assert_array_equal(mechanism.encode_labels(data), expected)
    np.testing.assert_array_equal(mechanism.encode_labels(data), labels.encode_labels(data, categories))
    unknown = np.append(data, 99 if isinstance(categories[0], int) else "z")
    with pytest.raises(ldpest.DataError) as via_mechanism:
        mechanism.encode_labels(unknown)
    with pytest.raises(ldpest.DataError) as direct:
        labels.encode_labels(unknown, categories)
    assert str(via_mechanism.value) == str(direct.value)
