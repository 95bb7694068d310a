"""The ``ems`` estimator: the distribution of bounded numbers by expectation-maximisation with
smoothing (Li, Wang, Lopuhaa-Zwakenberg, Skoric, Li 2020, SIGMOD), under the channel the code
implements (docs/numeric.md, "Distributions").

The data's range is cut into ``bins`` equal buckets; ``M[i, k]`` is the probability of code ``k``
for a number uniform on bucket ``i``: the implemented lattice rows mixed by the unbiased
rounding's weights (``steps / bins`` grid steps per bucket: the inner grid points weigh
``bins / steps``, the two ends half that).  From the code counts ``c`` of n reports, EM
iterates ``theta_i <- theta_i sum_k M[i, k] c_k / (n (theta M)_k)`` and then smooths with the
binomial kernel ``(1, 2, 1) / 4`` (the ends reflected), from the uniform start, until the
bucket masses move by less than ``tolerance`` in l1 (or ``max_iterations``); the result says
how many iterations ran and whether they converged.  Its ``stderr`` is a parametric bootstrap:
``bootstrap`` count vectors drawn from the fitted law ``theta M``, each re-estimated starting
from the fit (to ``10 tolerance``); it measures the estimate's spread, not the smoothing's bias.
"""

from __future__ import annotations

import numpy as np

from ldpest import DataError, EstimateParts, Estimator, ParameterError
from ldpest.util.validation import check_positive_int, check_positive_real

from .estimator import code_counts
from .mechanisms import NumericMechanism, Piecewise


def bucket_matrix(steps: int, bins: int) -> np.ndarray:
    """``(bins, steps + 1)``: the rounding weights of a number uniform on each bucket."""
    per = steps // bins
    weights = np.zeros((bins, steps + 1))
    for i in range(bins):
        weights[i, i * per:(i + 1) * per + 1] = 1.0 / per
        weights[i, i * per] = weights[i, (i + 1) * per] = 0.5 / per
    return weights


def smooth(theta: np.ndarray) -> np.ndarray:
    padded = np.concatenate([theta[:1], theta, theta[-1:]])
    out = (padded[:-2] + 2 * padded[1:-1] + padded[2:]) / 4
    return out / out.sum()


class DenseChannel:
    """``M`` as a matrix: ``forward(theta) = theta M`` (the law of a code), ``adjoint(v) = M v``."""

    def __init__(self, matrix: np.ndarray):
        self.matrix, self.bins = matrix, matrix.shape[0]

    def forward(self, theta: np.ndarray) -> np.ndarray:
        return theta @ self.matrix

    def adjoint(self, values: np.ndarray) -> np.ndarray:
        return self.matrix @ values


class WindowChannel:
    """``M`` of a piecewise or square-wave lattice without the matrix: cell ``k`` has probability
    ``P_out + (P_in - P_out) [j <= k < j + W]`` from grid point ``j``, so both products are sums
    over windows of ``W`` consecutive entries (cumulative sums), and the buckets' rounding weights
    are repeats: ``O(steps)`` per product instead of ``O(bins (steps + W))``."""

    def __init__(self, lattice, bins: int):
        self.steps, self.inside, self.per = lattice.steps, lattice.inside, lattice.steps // bins
        self.bins = bins
        p_in, p_out = lattice.levels
        self.p_out, self.gap = float(p_out), float(p_in - p_out)
        cells = np.arange(self.inside + self.steps)
        self.first = np.maximum(cells - self.inside + 1, 0)  # the grid points whose window holds cell k
        self.last = np.minimum(cells, self.steps) + 1

    def forward(self, theta: np.ndarray) -> np.ndarray:
        spread = np.repeat(theta / self.per, self.per)
        grid = (np.concatenate([spread, [0.0]]) + np.concatenate([[0.0], spread])) / 2  # bucket_matrix rows
        cumulative = np.concatenate([[0.0], np.cumsum(grid)])
        return self.p_out * cumulative[-1] + self.gap * (cumulative[self.last] - cumulative[self.first])

    def adjoint(self, values: np.ndarray) -> np.ndarray:
        cumulative = np.concatenate([[0.0], np.cumsum(values)])
        grid = self.p_out * cumulative[-1] + self.gap * (cumulative[self.inside:self.inside + self.steps + 1]
                                                         - cumulative[:self.steps + 1])
        pairs = grid[:-1] + grid[1:]
        return pairs.reshape(self.bins, self.per).sum(axis=1) / (2 * self.per)


def em_smoothing(channel, counts: np.ndarray, tolerance: float, max_iterations: int,
                 start: np.ndarray | None = None) -> tuple[np.ndarray, int, bool]:
    """``(theta, iterations, converged)`` of EMS on the code counts (module docstring); ``channel``
    a :class:`DenseChannel` or :class:`WindowChannel` (every law ``theta M`` is positive: each code
    has a positive probability from every input)."""
    observed = counts / counts.sum()
    theta = np.full(channel.bins, 1.0 / channel.bins) if start is None else start.copy()
    for iteration in range(1, max_iterations + 1):
        updated = smooth(theta * channel.adjoint(observed / channel.forward(theta)))
        moved = np.abs(updated - theta).sum()
        theta = updated
        if moved < tolerance:
            return theta, iteration, True
    return theta, max_iterations, False


def channel_of(mechanism, bins: int):
    """The fast :class:`WindowChannel` for piecewise and square wave, else the dense matrix."""
    if isinstance(mechanism, Piecewise):
        return WindowChannel(mechanism.lattice, bins)
    return DenseChannel(bucket_matrix(len(mechanism.grid()) - 1, bins) @ mechanism.base_channel().probabilities())


class EMSEstimator(Estimator):
    """The density of bounded numbers on ``bins`` buckets by EM with smoothing (module docstring)."""

    name = "ems"
    family = "numeric"
    accepts = (NumericMechanism,)
    finalize_params = ("bins", "tolerance", "max_iterations", "bootstrap")
    parameter_help = {"bins": "buckets of [low, high] the density is estimated on (they must divide steps)",
                      "tolerance": "stop when the bucket masses move by less than this (l1)",
                      "max_iterations": "stop after this many EM steps at the latest",
                      "bootstrap": "parametric bootstrap draws behind the standard error (0: none)"}

    def __init__(self, *, bins=128, tolerance=1e-7, max_iterations=20_000, bootstrap=20):
        bootstrap = 0 if bootstrap == 0 else check_positive_int("bootstrap", bootstrap)
        self._set_params(bins=check_positive_int("bins", bins, 2),
                         tolerance=check_positive_real("tolerance", tolerance),
                         max_iterations=check_positive_int("max_iterations", max_iterations), bootstrap=bootstrap)

    def check_accepts(self, mechanism):
        super().check_accepts(mechanism)
        steps = len(mechanism.grid()) - 1
        if mechanism.squares is not None:
            raise ParameterError("ems estimates from reports of x only: privatise without square_share")
        if steps % self._params["bins"]:
            raise ParameterError(f"bins = {self._params['bins']} must divide the mechanism's {steps} grid steps")

    def _aggregate(self, mechanism, values):
        return {"counts": code_counts(mechanism, values)}

    def _finalize(self, mechanism, arrays, n):
        self.check_accepts(mechanism)
        bins, tolerance, most = (self._params[k] for k in ("bins", "tolerance", "max_iterations"))
        channel = channel_of(mechanism, bins)
        counts = np.asarray(arrays["counts"], dtype=np.float64)
        if counts.sum() == 0:
            raise DataError("no reports: ems needs at least one")
        theta, iterations, converged = em_smoothing(channel, counts, tolerance, most)
        width = (mechanism.high - mechanism.low) / bins
        draws = self._params["bootstrap"]
        if draws:
            rng = np.random.default_rng(np.asarray(arrays["counts"], dtype=np.int64))  # reproducible per data
            law = channel.forward(theta)
            again = [em_smoothing(channel, rng.multinomial(n, law / law.sum()).astype(np.float64), 10 * tolerance,
                                  most, start=theta)[0] for _ in range(draws)]
            stderr = np.std(again, axis=0, ddof=1) / width
            method = f"parametric bootstrap ({draws} draws; the spread, not the smoothing's bias)"
        else:
            stderr, method = np.full(bins, np.nan), "none (bootstrap = 0)"
        edges = mechanism.low + width * np.arange(bins + 1)
        units = mechanism.params["units"]
        axis = mechanism.variable or "x"
        return EstimateParts(
            variable="density", estimate=theta / width, stderr=stderr, dims=(axis,),
            coords={axis: (edges[:-1] + edges[1:]) / 2}, bounds={axis: np.stack([edges[:-1], edges[1:]], axis=1)},
            units=None if units is None else f"1/{units}", uncertainty_of="density", stderr_method=method,
            projection="none",
            extra={"cdf": ((axis,), np.cumsum(theta)), "counts": (("code",), np.asarray(arrays["counts"], np.int64))},
            attrs={"iterations": iterations, "converged": int(converged), "tolerance": tolerance,
                   "low": mechanism.low, "high": mechanism.high,
                   "cdf_note": "cdf is the estimated probability of x at or below each bucket's upper edge"})
