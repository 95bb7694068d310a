"""Series mechanisms: ``linf-sampling`` and the ``laplace-series`` baseline (MATH.md section 3)."""

from __future__ import annotations

import math
import numbers

import numpy as np

import ldpest
from ldpest import Channel, DataError, ExactSum, Mechanism, ParameterError
from ldpest.privacy.noise import LatticeLaplace
from ldpest.util.validation import (
    check_epsilon,
    check_finite,
    check_positive_int,
    check_positive_real,
    check_report_matrix,
)

from . import linf

_EXACT_BLOCK = 1 << 20  # rows per float matmul block of +-1 values: sums stay below 2^53
_PRIVATIZE_BLOCK = 1 << 16  # coordinates privatised at once by linf-sampling: temporaries about 2 MiB
# The series estimator holds the k x k second moments of the reports and floors the eigenvalues of
# their covariance: memory 8 k^2 bytes, time O(n k^2 + k^3). At k = 4096 an estimate from 2000
# reports took 31 s on the benchmark machine (2 cores; k = 2048: 4.3 s, k = 1024: 0.8 s), and
# k = 10^5 would need 80 GB: larger k are refused at construction, before any report is made.
MAX_K = 4096


class SeriesMechanism(Mechanism):
    """Common part: a basis, k coefficients, data in [0, 1].

    A series mechanism releases ``Z`` with ``E[Z | x] = (phi_1(x), ..., phi_k(x))``;
    subclasses give the additive statistics ``sum Z`` and ``sum Z Z^T``.
    """

    parameter_help = {"epsilon": "privacy level epsilon > 0 of each report",
                      "basis": "a registered basis: trigonometric or walsh",
                      "k": "the number of basis functions, or 'auto' with expected_n and smoothness",
                      "expected_n": "the number of reports k = 'auto' is tuned for",
                      "smoothness": "beta, the smoothness of the density k = 'auto' assumes",
                      "radius": "the Sobolev radius k = 'auto' assumes"}

    family = "series"
    example_params = {"basis": "trigonometric", "k": 8}
    default_estimator = "series"
    report_dims = ("report", "basis_function")
    rate_exponent_offset = 2  # k* ~ (n a^2)^(1 / (2 beta + offset))

    def __init__(self, *, epsilon, basis, k, expected_n=None, smoothness=None, radius=1.0):
        epsilon = check_epsilon(epsilon)
        if not isinstance(basis, str):
            raise ParameterError(f"basis must be a registered basis name, got {basis!r}")
        basis_object = ldpest.basis(basis)
        params = {"epsilon": epsilon, "basis": basis}
        if k == "auto":
            if expected_n is None or smoothness is None:
                raise ParameterError('k="auto" needs expected_n and smoothness')
            params.update(k="auto", expected_n=check_positive_int("expected_n", expected_n),
                          smoothness=check_positive_real("smoothness", smoothness),
                          radius=check_positive_real("radius", radius))
            size = min(MAX_K, self.auto_k(params["expected_n"], epsilon, params["smoothness"], params["radius"],
                                          basis_object.B0))
        else:
            if isinstance(k, bool) or not isinstance(k, numbers.Integral):
                raise ParameterError(f"k must be an integer >= 1 or 'auto', got {k!r}")
            size = params["k"] = check_positive_int("k", k)
            if size > MAX_K:
                raise ParameterError(
                    f"k = {size} is more basis functions than the series estimator serves (k <= {MAX_K}): it needs "
                    f"the k x k covariance of the reports ({8 * size ** 2 / 2 ** 30:.2g} GiB) and its "
                    f"eigendecomposition (k = {MAX_K}: 31 s); choose k <= {MAX_K}, or k='auto' for the k that "
                    "minimises the error at your n")
        self._set_params(**params)
        self._basis = basis_object
        self._k = size

    @property
    def basis(self):
        return self._basis

    @property
    def k(self) -> int:
        return self._k

    def report_columns(self) -> list[str]:
        return [f"z_{j + 1}" for j in range(self._k)]

    def encode_data(self, data) -> np.ndarray:
        x = np.asarray(data)
        if x.dtype.kind not in "iuf":
            raise DataError(f"data for {self.name!r} must be numbers in [0, 1], got dtype {x.dtype}")
        x = x.astype(np.float64, copy=False)
        if x.ndim == 2 and x.shape[1] == 1:
            x = x[:, 0]
        if x.ndim != 1:
            raise DataError(f"data for {self.name!r} must be one column of numbers in [0, 1], got shape {x.shape}")
        check_finite("data", x)
        bad = (x < 0) | (x > 1)
        if bad.any():
            raise DataError(f"data: {int(bad.sum())} value(s) outside [0, 1]", row=np.flatnonzero(bad)[0])
        return x


class LinfSampling(SeriesMechanism):
    """Duchi et al.'s l-infinity sampling: ``Z in {-B, B}^k`` (see :mod:`ldpest_series.linf`).

    Reports are stored as the signs ``u`` (int8); ``Z = B u``.  The implemented
    channel's likelihood ratio is exactly ``2^64 / A <= e^epsilon`` (integer
    acceptance threshold, proven) and ``E[Z | x] = phi(x)`` for every k, with
    ``B`` computed from the same exact law (even k: ties on the ``<= 0`` side
    with the corrected side probability).  ``k="auto"``:
    ``k* = ceil((2 beta r^2 n / (pi B0^2 kappa^2))^(1/(2 beta + 2)))``.
    """

    name = "linf-sampling"
    report_kind = "number"

    def __init__(self, **params):
        super().__init__(**params)
        contraction = linf.gamma(self._k, self.epsilon)
        if contraction <= 0:
            raise ParameterError(f"epsilon = {self.epsilon:g} is too small for linf-sampling (the channel is uniform)")
        self._scale = self._basis.B0 / float(contraction)

    @staticmethod
    def auto_k(n, epsilon, beta, radius, b0):
        kappa = 1.0 / math.tanh(epsilon / 2)
        effective = 2 * beta * radius ** 2 * n / (math.pi * b0 ** 2 * kappa ** 2)
        return max(1, math.ceil(effective ** (1 / (2 * beta + 2))))

    def report_alphabet_size(self) -> int:
        """Reports are sign vectors ``u in {-1, 1}^k``."""
        return 2 ** self._k

    @property
    def scale(self) -> float:
        """B: the magnitude of every coordinate of Z."""
        return self._scale

    def _privatize(self, x, rng):
        """Block by block: the basis values and the sampler's temporaries (about 25 bytes per
        coordinate) stay one block, so memory is the int8 reports plus a constant."""
        out = np.empty((len(x), self._k), dtype=np.int8)
        rows = max(1, _PRIVATIZE_BLOCK // self._k)
        for start in range(0, len(x), rows):
            block = x[start:start + rows]
            out[start:start + len(block)] = linf.sample(self._basis.evaluate(block, self._k), self._basis.B0,
                                                        self.epsilon, rng)
        return out

    def encode_reports(self, values):
        values = check_report_matrix(values, self._k, self.name, f"k = {self._k}")
        for unit in (1.0, self._scale):
            if np.all(np.isclose(np.abs(values), unit, rtol=1e-9, atol=0)):
                return np.sign(values).astype(np.int8)
        size = np.abs(values)
        bad = ~(np.isclose(size, 1.0, rtol=1e-9, atol=0) | np.isclose(size, self._scale, rtol=1e-9, atol=0))
        row = np.argwhere(bad)[0][0] if bad.any() else None
        raise DataError(f"reports of {self.name!r} must all be +-1 (signs) or all +-B = +-{self._scale:.12g}", row=row)

    def check_encoded_reports(self, values):
        values = np.asarray(values)
        if values.ndim != 2 or values.shape[1] != self._k or not np.isin(values, (-1, 1)).all():
            raise DataError(f"stored reports of {self.name!r} must be +-1 signs of width {self._k}")
        return values.astype(np.int8)

    def channel(self, max_k: int = 8) -> Channel:
        """The implemented channel (exact fractions) from the vertices ``s`` (the extreme
        inputs; every input's law is a mixture of these rows) to every output ``u``."""
        if self._k > max_k:
            raise ParameterError(f"the exact channel has 4^{self._k} entries; enumerate it only for k <= {max_k}")
        points, levels, pattern = linf.channel_levels(self._k, self.epsilon)
        return Channel.from_levels([tuple(p) for p in points.tolist()], points, levels, pattern)

    def channel_mixture(self, x):
        """The channel's rows that one record's law mixes (step 1 of :mod:`ldpest_series.linf`): every
        vertex, with probability ``prod_j (1/2 + s_j phi_j(x) / (2 B0))``."""
        tau = self._basis.evaluate(np.atleast_1d(np.float64(x)), self._k)[0]
        weights = linf.vertex_mixture(tau, self._basis.B0)
        return np.arange(len(weights)), weights

    def coefficient_statistics(self, values):
        sums = values.sum(axis=0, dtype=np.int64)
        cross = np.zeros((self._k, self._k), dtype=np.int64)
        rows = max(1, min(_EXACT_BLOCK, _PRIVATIZE_BLOCK // self._k))  # float copies of the signs: one small block
        for start in range(0, values.shape[0], rows):
            block = values[start:start + rows].astype(np.float64)
            cross += (block.T @ block).astype(np.int64)  # integers below 2^53: exact
        return {"sums": sums, "cross": cross}

    def covariance_floor(self) -> float:
        """Every eigenvalue of the covariance of one report is at least this (``B^2`` times
        :func:`linf.smallest_covariance_eigenvalue`)."""
        return self._scale ** 2 * linf.smallest_covariance_eigenvalue(self._k, self.epsilon)

    def coefficient_moments(self, stats, n):
        mean = self._scale * stats["sums"] / n
        second = self._scale ** 2 * stats["cross"] / n
        return mean, second


class LaplaceSeries(SeriesMechanism):
    """The baseline: ``Z = phi(x) + W``, Laplace noise of scale ``2 B0 k / epsilon``
    per coordinate (l1 sensitivity of ``phi(x)`` is at most ``2 B0 k``).

    Noise on a lattice after unbiased randomised rounding (:mod:`ldpest.privacy.noise`),
    which adds ``2 g k`` to the sensitivity (``g`` at most 2^-8 of ``2 B0``: < 1%).  Unbiased,
    but ``Var ~ 8 B0^2 k^2 / (n a^2)`` per coefficient, so its MISE is worse
    than ``linf-sampling``'s by a factor growing like k.  ``k="auto"``:
    ``k* = ceil((beta r^2 n a^2 / (12 B0^2))^(1/(2 beta + 3)))``.
    """

    name = "laplace-series"
    rate_exponent_offset = 3

    def __init__(self, **params):
        super().__init__(**params)
        self._noise = LatticeLaplace(self.epsilon, 2.0 * self._basis.B0 * self._k, on_lattice=False, width=self._k)

    @staticmethod
    def auto_k(n, epsilon, beta, radius, b0):
        return max(1, math.ceil((beta * radius ** 2 * n * epsilon ** 2 / (12 * b0 ** 2)) ** (1 / (2 * beta + 3))))

    @property
    def noise(self) -> LatticeLaplace:
        return self._noise

    def _privatize(self, x, rng):
        """Block by block, so that the basis values and the noise's temporaries stay one block."""
        out = np.empty((len(x), self._k), dtype=np.float64)
        bound = self._basis.B0
        rows = max(1, _PRIVATIZE_BLOCK // self._k)
        for start in range(0, len(x), rows):
            values = self._basis.evaluate(x[start:start + rows], self._k)
            if np.any(np.abs(values) > bound):
                raise DataError(f"basis {self._basis.name!r} returned values beyond its bound B0 = {bound}: "
                                "its sensitivity, hence the privacy proof, would not hold")
            out[start:start + len(values)] = self._noise.privatize(values, rng)
        return out

    def encode_reports(self, values):
        values = check_report_matrix(values, self._k, self.name, f"k = {self._k}")
        return check_finite("reports", values.astype(np.float64))

    def coefficient_statistics(self, values):
        """Exact sums of the reports and of their outer products (lattice sums: BLAS, no (n, k^2) array)."""
        sums, cross = ExactSum.sums_and_gram(values, step=self._noise.step)
        return {"sums": sums, "cross": cross}

    def covariance_floor(self) -> float:
        """The noise alone gives every direction at least its variance."""
        return self._noise.variance

    def coefficient_moments(self, stats, n):
        return stats["sums"].to_float() / n, stats["cross"].to_float().reshape(self._k, self._k) / n
