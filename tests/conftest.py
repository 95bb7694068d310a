import numpy as np
import pytest

import ldpest


@pytest.fixture
def rng():
    return np.random.default_rng(20261202)


@pytest.fixture
def fresh_registry():
    """Rediscover plugins before and after a test that changes sys.path or entry points."""
    ldpest.reset_registry()
    yield
    ldpest.reset_registry()
