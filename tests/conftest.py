import os

import numpy as np
import pytest

import ldpest


@pytest.fixture
def rng():
    """The seeded generator of the statistical tests.  ``LDPEST_TEST_SEED=N pytest`` reruns them
    on other draws: a test whose tolerance holds only on its usual seed is a defect."""
    return np.random.default_rng(int(os.environ.get("LDPEST_TEST_SEED", "20261202")))


@pytest.fixture
def fresh_registry():
    """Rediscover plugins before and after a test that changes sys.path or entry points."""
    ldpest.reset_registry()
    yield
    ldpest.reset_registry()
