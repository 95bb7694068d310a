"""The lattice Laplace sampler draws the law it declares (ldpest/noise.py, ldpest/discrete_laplace.py)."""

import numpy as np
import pytest
from scipy import stats

from ldpest.privacy.noise import LatticeLaplace
from ldpest.privacy.rng import SecureGenerator


@pytest.mark.parametrize("rng", [np.random.default_rng(12), SecureGenerator()], ids=["numpy", "secure"])
@pytest.mark.parametrize("epsilon", [0.3, 2.0])
def test_sampler_matches_the_exact_cdf(rng, epsilon):
    """Chi-square over 60 bins whose exact probabilities come from P(K <= k); the atom
    at 0 gets its own bin (false-alarm rate 1e-6: the secure generator cannot be seeded)."""
    noise = LatticeLaplace(epsilon, 2.0, on_lattice=True)
    draws = noise.integer_noise(400_000, rng)
    t = noise.steps_per_unit_loss
    edges = np.unique(np.concatenate([np.round(np.linspace(-6, 6, 59) * t).astype(np.int64), [-1, 0]]))
    cdf = np.array([noise.cdf_steps(int(k)) for k in edges])
    probabilities = np.diff(np.concatenate([[0.0], cdf, [1.0]]))
    counts = np.bincount(np.searchsorted(edges, draws, side="left"), minlength=len(edges) + 1)
    assert stats.chisquare(counts, probabilities * draws.size).pvalue > 1e-6
    z = noise.lattice_noise(1000, rng)
    assert np.all(z / noise.step == np.rint(z / noise.step))  # exact lattice points


def test_zero_has_the_exact_atom():
    noise = LatticeLaplace(1.0, 2.0, on_lattice=True)
    draws = noise.integer_noise(2_000_000, np.random.default_rng(3))
    p0 = float(noise.pmf_steps(0))
    observed = np.mean(draws == 0)
    assert abs(observed - p0) < 5 * np.sqrt(p0 * (1 - p0) / draws.size)
