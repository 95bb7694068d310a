"""Tolerances derived from variances, shared by the statistical tests.

Every Monte Carlo check compares an empirical quantity with its analytic value
and allows Z_TOLERANCE standard errors of the *empirical* quantity, computed
from the analytic variance: never a tuned constant.
"""

import numpy as np
import pytest

Z_TOLERANCE = 5.0

# A test that estimates a small sample on purpose expects the EstimateWarning that the estimate tells
# little; every other warning (an estimate inconsistent with its mechanism included) still fails it.
small_samples = pytest.mark.filterwarnings("ignore:the estimate is uninformative:ldpest.EstimateWarning")


def assert_mean_matches(samples, expected_mean, analytic_variance, z=Z_TOLERANCE, what="mean"):
    """Mean of ``samples`` (reps along axis 0) within z standard errors of the analytic mean."""
    samples = np.asarray(samples, dtype=float)
    reps = samples.shape[0]
    se = np.sqrt(np.asarray(analytic_variance, dtype=float) / reps)
    deviation = np.abs(samples.mean(axis=0) - expected_mean) / se
    assert np.all(deviation < z), f"{what}: |z| = {np.max(deviation):.2f} >= {z} (deviations {deviation})"


def assert_variance_matches(samples, analytic_variance, z=Z_TOLERANCE, what="variance"):
    """Sample variance within z standard errors of the analytic variance.

    The standard error of a sample variance is ``sigma^2 sqrt(2 / (reps - 1))``
    for near-normal estimates (the estimators here are sums of many reports),
    so the relative tolerance is ``z sqrt(2 / (reps - 1))``.
    """
    samples = np.asarray(samples, dtype=float)
    reps = samples.shape[0]
    ratio = samples.var(axis=0, ddof=1) / np.asarray(analytic_variance, dtype=float)
    tolerance = z * np.sqrt(2.0 / (reps - 1))
    assert np.all(np.abs(ratio - 1) < tolerance), f"{what}: ratios {ratio} outside 1 +- {tolerance:.3f}"


def assert_json_result_near(text: str, truth, n: int, z: float = 5.0):
    """A result printed as JSON (``--json``, ``-o -``): ``n`` reports, and every unprojected estimate
    within ``z`` of its own standard errors of ``truth``."""
    import json

    result = json.loads(text)
    unprojected = np.array(result["data_vars"]["unprojected"]["data"])
    stderr = np.array(result["data_vars"]["stderr"]["data"])
    assert result["attrs"]["n"] == n
    assert np.all(np.abs(unprojected - np.asarray(truth)) < z * stderr), (unprojected, truth, stderr)
