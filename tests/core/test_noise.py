"""The lattice Laplace sampler draws the law it declares (ldpest/noise.py, ldpest/discrete_laplace.py)."""

import numpy as np
import pytest
from scipy import stats

import ldpest
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


def test_laplace_noise_at_every_small_epsilon_works_or_names_its_limit():
    """Issue 23: laplace-series raised AssertionError at epsilons it accepted (about 1e-7 to 7e-4),
    where the integer tables' rounding ate the margin.  Now the tables are rebuilt with the excess
    measured until the proof holds; below the limit, a ParameterError names it."""
    from ldpest.privacy.noise import LatticeLaplace

    limits = set()
    for epsilon in np.geomspace(1e-7, 1e-3, 60):
        try:
            noise = LatticeLaplace(float(epsilon), 2.0, on_lattice=False, width=1)
        except ldpest.ParameterError as exc:
            limit = float(str(exc).split("greater than ")[1].rstrip(")"))
            assert epsilon < limit
            limits.add(limit)
            continue
        assert noise.proven() and noise.privacy_loss <= epsilon
    assert len(limits) == 1
    mechanism = ldpest.mechanism("laplace-series", epsilon=1e-4, basis="trigonometric", k=1)
    assert mechanism.epsilon == 1e-4
