"""The kit's exact check of a frequency oracle's declared moments against its finite channel."""

from __future__ import annotations

import numpy as np

from ..contract.base import FrequencyOracle
from .checks import fail

MOMENT_OUTPUTS = 1 << 13  # channels with more outputs are not enumerated here
MOMENT_TOLERANCE = 1e-9  # relative to the largest entry of the covariance of one report


def frequency_moments_match_channel(mechanism: FrequencyOracle, channel) -> None:
    """Enumerate ``channel``: the unbiased estimate from one report, ``x(z) = frequency_estimate(
    frequency_statistics([z]), 1)``, has under data of frequencies ``theta`` the exact mean ``sum_z P(z) x(z)``
    and covariance ``sum_z P(z) x(z) x(z)^T - theta theta^T`` (``P(z) = sum_x theta_x Q(z | x)``).  At two
    skewed ``theta`` every category's mean must be ``theta``, every variance :meth:`frequency_variance`
    (where declared) and every off-diagonal entry what :meth:`frequency_cross_covariance` gives for each
    unit vector (where declared), and for the identity matrix at once where it declares
    ``cross_covariance_columns``."""
    outputs = channel.outputs
    if len(outputs) > MOMENT_OUTPUTS:
        return
    categories = list(mechanism.categories)
    if list(channel.inputs) != categories:
        fail(f"the channel's inputs {list(channel.inputs)[:5]!r}... are not the categories {categories[:5]!r}...")
    one_report = np.array([mechanism.frequency_estimate(mechanism.frequency_statistics(outputs[k:k + 1]), 1)[0]
                           for k in range(len(outputs))])
    d = len(categories)
    law = channel.probabilities()
    units = np.eye(d)
    for theta in (np.arange(1, d + 1) ** 2 / np.sum(np.arange(1, d + 1) ** 2), np.eye(d)[-1] * 0.6 + 0.4 / d):
        weights = theta @ law
        mean = weights @ one_report
        covariance = one_report.T @ (weights[:, None] * one_report) - np.outer(theta, theta)
        scale = MOMENT_TOLERANCE * max(1.0, float(np.abs(covariance).max()))
        if np.abs(mean - theta).max() > scale:
            j = int(np.argmax(np.abs(mean - theta)))
            fail(f"the estimate from one report is biased: its exact mean at {categories[j]!r} is {mean[j]:.12g}, "
                 f"the frequency {theta[j]:.12g}")
        if type(mechanism).frequency_variance is not FrequencyOracle.frequency_variance:
            declared = np.asarray(mechanism.frequency_variance(theta), dtype=np.float64)
            j = int(np.argmax(np.abs(np.diag(covariance) - declared)))
            if abs(covariance[j, j] - declared[j]) > scale:
                fail(f"frequency_variance at {categories[j]!r} is {declared[j]:.12g}, the channel gives "
                     f"{covariance[j, j]:.12g}")
        if mechanism.frequency_cross_covariance(theta, units[0]) is None:  # not declared: nothing to check
            continue
        cross = np.column_stack([mechanism.frequency_cross_covariance(theta, unit) for unit in units])
        off = covariance - np.diag(np.diag(covariance))
        i, j = np.unravel_index(int(np.argmax(np.abs(cross - off))), off.shape)
        if abs(cross[i, j] - off[i, j]) > scale:
            fail(f"frequency_cross_covariance gives n Cov({categories[i]!r}, {categories[j]!r}) = {cross[i, j]:.12g}, "
                 f"the channel {off[i, j]:.12g}")
        if mechanism.cross_covariance_columns:
            together = np.asarray(mechanism.frequency_cross_covariance(theta, units), dtype=np.float64)
            if together.shape != cross.shape or np.abs(together - cross).max() > scale:
                fail("cross_covariance_columns is True, but frequency_cross_covariance of the identity matrix is not "
                     "its products with each unit vector side by side")


def covariance_factors_match(mechanism: FrequencyOracle) -> None:
    """Where the oracle declares :meth:`frequency_cross_covariance_factors` ``(V, S)``: at two skewed ``theta``,
    every off-diagonal entry of ``V S V^T`` is what :meth:`frequency_cross_covariance` gives for each unit
    vector (which :func:`frequency_moments_match_channel` checks against the channel where it can be
    enumerated), to ``MOMENT_TOLERANCE`` of the largest."""
    d = len(mechanism.categories)
    units = np.eye(d)
    for theta in (np.arange(1, d + 1) ** 2 / np.sum(np.arange(1, d + 1) ** 2), np.eye(d)[-1] * 0.6 + 0.4 / d):
        vectors, core = (np.asarray(part, dtype=np.float64) for part in mechanism.frequency_cross_covariance_factors(
            theta))
        if vectors.ndim != 2 or vectors.shape[0] != d or core.shape != (vectors.shape[1],) * 2 or not np.array_equal(
                core, core.T):
            fail(f"frequency_cross_covariance_factors must give V of shape (d, r) = ({d}, r) and a symmetric S of "
                 f"shape (r, r); got {vectors.shape} and {core.shape}")
        if mechanism.frequency_cross_covariance(theta, units[0]) is None:
            fail("frequency_cross_covariance_factors is declared, but frequency_cross_covariance is not")
        cross = np.column_stack([mechanism.frequency_cross_covariance(theta, unit) for unit in units])
        low_rank = vectors @ core @ vectors.T
        difference = np.abs(low_rank - cross)
        np.fill_diagonal(difference, 0.0)
        i, j = np.unravel_index(int(np.argmax(difference)), difference.shape)
        if difference[i, j] > MOMENT_TOLERANCE * max(1.0, float(np.abs(cross).max())):
            categories = list(mechanism.categories)
            fail(f"frequency_cross_covariance_factors give n Cov({categories[i]!r}, {categories[j]!r}) = "
                 f"{low_rank[i, j]:.12g}, frequency_cross_covariance {cross[i, j]:.12g}")


def report_support_matches_channel(mechanism: FrequencyOracle, channel) -> None:
    """Enumerate ``channel``: where the oracle declares its likelihood two-valued
    (:meth:`FrequencyOracle.support_ratio`), every output ``z`` must have ``Q(z | x) = c(z) (1 + (r - 1)
    [x in S(z)])`` for every input, with ``S(z)`` from :meth:`FrequencyOracle.report_support` (relative
    tolerance ``MOMENT_TOLERANCE``): the likelihood that ``frequency-likelihood`` maximises is then the
    implemented one."""
    ratio = mechanism.support_ratio()
    outputs = channel.outputs
    if ratio is None or len(outputs) > MOMENT_OUTPUTS:
        return
    if not ratio > 1:
        fail(f"support_ratio() is {ratio!r}: a likelihood ratio between favoured and other inputs is above 1")
    members = np.asarray(mechanism.report_support(outputs))
    law = channel.probabilities()  # inputs x outputs
    if members.shape != law.T.shape or not np.isin(members, (0, 1)).all():
        fail(f"report_support of {len(outputs)} outputs gave shape {members.shape}, not 0/1 of shape {law.T.shape}")
    base = law.T / (1.0 + (ratio - 1.0) * members)  # c(z) in every column where the declaration holds
    spread = np.abs(base - base.mean(axis=1, keepdims=True)).max(axis=1) / base.max(axis=1)
    k = int(np.argmax(spread))
    if spread[k] > MOMENT_TOLERANCE:
        fail(f"report_support and support_ratio = {ratio:.12g} do not describe output {outputs[k]!r}: its "
             f"probabilities {law[:, k]!r} are not c (1 + (ratio - 1) [x in S]) with S = {members[k]!r}")
