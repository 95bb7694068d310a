"""Every variable of a result says what it is (long_name) and its units where known; a density is
per unit of its axes (issue 12)."""

import numpy as np
import pytest

import ldpest
from ldpest.contract.results import describe


@pytest.fixture
def density():
    mech = ldpest.mechanism("laplace-histogram", epsilon=2.0, low=[0, 0], high=[1, 1], bins=3, names=["age", "income"])
    sample = np.random.default_rng(0).uniform(size=(2000, 2))
    return ldpest.confidence_interval(ldpest.estimate(mech.privatize(sample, rng=np.random.default_rng(1))))


def test_every_variable_has_a_long_name(density):
    for variable in density.data_vars:
        assert density[variable].attrs.get("long_name"), variable
    assert density["density"].attrs["long_name"] == "estimated probability density per unit of age x income"
    assert density["mass"].attrs["units"] == "1" and density["count"].attrs["units"] == "reports"


def test_density_units_follow_the_axes_units(density):
    assert "units" not in density["density"].attrs  # the axes' units are not known
    density["age"].attrs["units"] = "year"
    density["income"].attrs["units"] = "kEUR"
    described = describe(density)
    for variable in ("density", "stderr", "unprojected", "lower", "upper"):
        assert described[variable].attrs["units"] == "1/(year kEUR)", variable
    assert described["age_bounds"].attrs["units"] == "year"


def test_one_axis_and_probabilities():
    mech = ldpest.mechanism("laplace-histogram", epsilon=2.0, low=[0], high=[10], bins=4, names=["hours"])
    hours = np.random.default_rng(0).uniform(0, 10, 5000)
    result = ldpest.estimate(mech.privatize(hours, rng=np.random.default_rng(1)))
    result["hours"].attrs["units"] = "h"
    assert describe(result)["density"].attrs["units"] == "1/h"
    rr = ldpest.mechanism("randomized-response", epsilon=1.0, categories=["a", "b"])
    probability = ldpest.estimate(rr.privatize(np.array(["a", "b"] * 500), rng=np.random.default_rng(2)))
    assert probability["probability"].attrs["units"] == "1" and probability["stderr"].attrs["units"] == "1"
