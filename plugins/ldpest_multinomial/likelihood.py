"""The ``frequency-likelihood`` estimator: the maximum-likelihood frequencies of the reports themselves
(docs/frequency-oracles.md, "The maximum-likelihood estimate from the reports").

Where the oracle's statistics are sufficient for the likelihood (randomized response, Hadamard response:
:meth:`FrequencyOracle.frequency_mle`), one pass.  Where they are not but each report's likelihood is
two-valued over the inputs (:meth:`FrequencyOracle.report_support`: unary encodings, subset selection,
local hashing), ``l(theta) = sum_i log(1 + (r - 1) theta(S_i))`` is maximised over the simplex by a projected
Newton iteration with one pass over the reports per step:

* pass 0 gathers the oracle's statistics; the start is the simplex projection of its unbiased estimate;
* pass t gathers the gradient of ``l`` and the exact diagonal of its curvature at the iterate ``theta_t``
  (:func:`ldpest.stats.likelihood.support_statistics`); the curvature off the diagonal is that of
  ``MODEL_REPORTS`` reports per category (at most one per ``MODEL_SHARE`` reports, at least ``MODEL_LEAST``)
  simulated at ``theta_t`` with a seed fixed by ``theta_t`` (where they are fewer than ``RANK_ONE_BELOW`` per
  category, its best rank-one fit ``a a^T`` off the diagonal,
  :func:`ldpest.stats.likelihood.off_diagonal_rank_one`), corrected by BFGS with the last step's change of
  gradient; the next iterate maximises that quadratic model over the simplex
  (:func:`ldpest.stats.likelihood.simplex_qp`);
* a step that lowered ``l`` is retaken from the best iterate, with the model there corrected by BFGS along
  the failed step, so the returned iterate is the best one seen;
* it stops when the Frank-Wolfe gap ``max_j grad_j l - theta_t . grad l``, which bounds ``l(theta*) -
  l(theta_t)``, is at most ``tolerance``, or after ``max_passes`` passes (then an EstimateWarning says how
  close it got).

The iterate travels in the estimator's parameters (``at``, ``pass_number``), so workers that rebuild the
estimator from its spec gather the statistics of the right pass.
"""

from __future__ import annotations

import hashlib
import json
import warnings
import weakref
from typing import NamedTuple

import numpy as np

import ldpest
from ldpest import EstimateWarning, FrequencyOracle, IncompatibleError, ParameterError
from ldpest.stats.likelihood import (
    MLE_GAP,
    SUPPORT_MAX_RATIO,
    PackedSupports,
    lattice_frequencies,
    off_diagonal_rank_one,
    pack_supports,
    secant_update,
    simplex_qp,
    sparse_supports,
    support_gradient,
    support_model,
    support_statistics,
    support_value,
    unpack_supports,
)
from ldpest.stats.projection import project_simplex
from ldpest.util.validation import check_positive_int, check_positive_real

from .estimator import FrequencyEstimator, _mle, frequency_parts, warn_about_frequencies

MAX_PASSES = 20
MODEL_REPORTS = 32  # simulated reports per category for the curvature off the diagonal ...
MODEL_SHARE = 16  # ... at most one per this many reports (so 16,384 up to 2^18 reports: at d = 1000 and 2000 the
# same passes in a third to a half less time; at 3 x 10^6 reports fewer left 1.5x larger gaps after each pass)
MODEL_LEAST = 1 << 14  # ... and at least this many (measured: 10 -> 8 passes at d = 10, epsilon 4)
MODEL_BLOCK_CELLS = 1 << 22  # simulated report cells turned into floats at a time
RANK_ONE_BELOW = 1024  # with fewer simulated reports per category, their products off the diagonal are fitted by
# a a^T (bench_frequency_likelihood.py passes, 72 cells: 457 -> 403 passes, never more in a cell, at most 10 -> 8)
MAX_CATEGORIES = 2048  # the Newton model is a d x d matrix
SUPPORT_ROWS_CELLS = 1 << 24  # report_support is asked for blocks of at most this many cells (16 MiB, in cache:
# local hashing's pass 25% faster than with 2^22, docs/benchmarks.md)
SUPPORT_CACHE_BYTES = 1 << 31  # computed supports (local hashing's) kept as bits between passes, per estimate
SPARSE_SHARE = 1 / 16  # computed supports that favour at most this share of the cells go by category
# (ldpest.stats.likelihood.SparseSupports): local hashing from epsilon 2.8, OUE and subset selection's bits from
# epsilon 2.8 at d = 1000
SPARSE_SAMPLE = 16  # ... judged from every 16th report of a block (counting the whole block made epsilon 1
# 2-13% slower with unary, OUE and subset reports at 10^6)
_STATISTICS = ("loglik", "weight_sum", "weight_square_sum", "support", "support_square")


def _counts_suffice(mechanism) -> bool:
    return type(mechanism).frequency_mle is not FrequencyOracle.frequency_mle


def _has_support(mechanism) -> bool:
    return mechanism.support_ratio() is not None


class FrequencyLikelihood(FrequencyEstimator):
    """The maximum-likelihood category frequencies, from the reports themselves (module docstring).

    ``probability`` is the MLE on the simplex; ``unprojected`` and ``stderr`` are those of the oracle's
    unbiased estimate, as in ``frequency`` results (its exact intervals too).  The attributes ``mle_method``,
    ``mle_passes``, ``mle_likelihood_gap`` (the final bound on ``l(theta*) - l(theta)``) and
    ``mle_converged`` say how it was found."""

    parameter_help = {
        "tolerance": f"stop when the log-likelihood is provably within this of its maximum (default {MLE_GAP})",
        "max_passes": f"at most this many passes over the reports, the first included (default {MAX_PASSES})",
        "at": "the iterate whose statistics this pass gathers (set by the iteration; give it to start there)",
        "pass_number": "the pass these statistics belong to (set by the iteration)",
    }
    name = "frequency-likelihood"
    multipass = True
    aggregates_frequency_statistics = False  # its passes gather the likelihood's statistics too
    finalize_params = ("tolerance", "max_passes")

    def __init__(self, *, tolerance=MLE_GAP, max_passes=MAX_PASSES, at=None, pass_number=0):
        tolerance = check_positive_real("tolerance", tolerance)
        max_passes = check_positive_int("max_passes", max_passes, minimum=2)
        pass_number = check_positive_int("pass_number", pass_number, minimum=0)
        if at is not None:
            theta = np.asarray(at, dtype=np.float64)
            if theta.ndim != 1 or theta.size < 2 or not np.all(np.isfinite(theta)) or np.any(theta < 0) \
                    or theta.sum() <= 0:
                raise ParameterError("at must be non-negative frequencies of every category, not all 0")
            at = lattice_frequencies(theta).tolist()
        self._set_params(tolerance=tolerance, max_passes=max_passes, at=at, pass_number=pass_number)

    def accepts_mechanism(self, mechanism) -> bool:
        """Frequency oracles whose statistics suffice for the likelihood, or whose likelihood is two-valued."""
        return super().accepts_mechanism(mechanism) and (_counts_suffice(mechanism) or _has_support(mechanism))

    def check_accepts(self, mechanism) -> None:
        if isinstance(mechanism, FrequencyOracle) and not self.accepts_mechanism(mechanism):
            raise IncompatibleError(
                f"estimator {self.name!r}: the likelihood of {mechanism.name!r} reports is neither a function of "
                "its statistics nor two-valued over the categories (FrequencyOracle.support_ratio); use "
                "'frequency'")
        super().check_accepts(mechanism)
        if not _counts_suffice(mechanism):
            if mechanism.support_ratio() > SUPPORT_MAX_RATIO:
                raise ParameterError(f"estimator {self.name!r}: the reports' likelihood ratio "
                                     f"{mechanism.support_ratio():.3g} (epsilon = {mechanism.epsilon:g}) is beyond "
                                     f"2^400, where its statistics leave float64; use 'frequency'")
            d = len(mechanism.categories)
            if d > MAX_CATEGORIES:
                raise ParameterError(f"estimator {self.name!r} takes at most {MAX_CATEGORIES} categories (its "
                                     f"Newton model is a d x d matrix); these reports have {d}: use 'frequency'")
            at = self._params["at"]
            if at is not None and len(at) != d:
                raise ParameterError(f"at has {len(at)} frequencies for {d} categories")

    def _aggregate(self, mechanism, values):
        at, first = self._params["at"], self._params["pass_number"] == 0
        arrays = dict(mechanism.frequency_statistics(values)) if first or _counts_suffice(mechanism) else {}
        if at is None or _counts_suffice(mechanism):
            return arrays
        theta = np.asarray(at, dtype=np.float64)
        ratio = mechanism.support_ratio()
        supports = self.__dict__.get("_support_cache") or _SupportCache(0)
        total = None
        for members in supports.blocks(mechanism, values, max(1, SUPPORT_ROWS_CELLS // len(theta))):
            part = support_statistics(members, ratio, theta)
            total = part if total is None else {key: total[key] + part[key] for key in part}
        if total is None:
            total = support_statistics(np.zeros((0, len(theta)), dtype=np.uint8), ratio, theta)
        arrays.update({f"likelihood_{key}": value for key, value in total.items()})
        return arrays

    def next_pass(self, stats):
        mechanism = ldpest.mechanism_from_spec(json.loads(stats.mechanism_spec))
        if _counts_suffice(mechanism) or stats.n == 0:  # finalize says what is wrong with no reports
            return None
        at, number = self._params["at"], self._params["pass_number"]
        if number > 0 and self.__dict__.get("_oracle") is None:  # resumed by hand: count in a first pass again
            return self._at(at, 0)
        if number + 1 >= self._params["max_passes"]:
            return None
        oracle = _oracle_arrays(stats.arrays) if number == 0 else self._oracle_memory()
        if at is None:
            theta, _ = mechanism.frequency_estimate(oracle, stats.n)
            return self._following(project_simplex(theta), None, oracle)
        theta = np.asarray(at, dtype=np.float64)
        support = _likelihood_arrays(stats.arrays)
        ratio = mechanism.support_ratio()
        gradient = support_gradient(support, ratio)
        if _gap(gradient, theta) <= self._params["tolerance"]:
            return None
        loglik = support_value(support, "loglik", ratio)
        scale = (ratio - 1.0) ** 2
        best = self.__dict__.get("_best")  # the best iterate so far and its model (_Best), driver-side only
        if best is not None and loglik < best.loglik:
            # the step overshot: the model at the best iterate learns the curvature along it, and steps again
            curvature = secant_update(best.curvature, theta - best.theta, (best.gradient - gradient) / scale)
            kept = _Best(best.theta, best.gradient, best.loglik, best.model_gradient, curvature)
            return self._following(self._model_step(curvature, best.model_gradient, best.theta, ratio), kept, oracle)
        model_gradient, curvature = support_model(support, ratio, _member_products(mechanism, theta, stats.n))
        if best is not None:
            curvature = secant_update(curvature, theta - best.theta, (best.gradient - gradient) / scale)
        return self._following(self._model_step(curvature, model_gradient, theta, ratio),
                               _Best(theta, gradient, loglik, model_gradient, curvature), oracle)

    def _model_step(self, curvature, model_gradient, theta, ratio):
        """The maximiser of the quadratic model over the simplex, to a hundredth of the tolerance."""
        return simplex_qp(curvature, model_gradient, theta, gap=self._params["tolerance"] / 100 / (ratio - 1.0) ** 2)

    def _following(self, theta, best, oracle):
        """The estimator of the next pass, at ``theta``; the driver's memory (the best iterate, the oracle's
        statistics from the first pass) rides along as private attributes, never sent to workers."""
        following = self._at(np.asarray(theta).tolist(), self._params["pass_number"] + 1)
        object.__setattr__(following, "_best", best)
        object.__setattr__(following, "_oracle", oracle)
        object.__setattr__(following, "_support_cache",
                           self.__dict__.get("_support_cache") or _SupportCache(SUPPORT_CACHE_BYTES))
        return following

    def _at(self, at, pass_number: int):
        """This estimator's settings with another iterate and pass number."""
        return type(self)(tolerance=self._params["tolerance"], max_passes=self._params["max_passes"], at=at,
                          pass_number=pass_number)

    def _oracle_memory(self):
        oracle = self.__dict__.get("_oracle")
        if oracle is None:
            raise ParameterError(f"{self.name!r}: these are the statistics of pass {self._params['pass_number']} "
                                 "only; ldpest.estimate makes every pass")
        return oracle

    def _finalize(self, mechanism, arrays, n):
        supports = self.__dict__.pop("_support_cache", None)
        if supports is not None:  # the iteration is over: free the kept supports
            supports.clear()
        oracle = _oracle_arrays(arrays) if self._params["pass_number"] == 0 else self._oracle_memory()
        theta, stderr = mechanism.frequency_estimate(oracle, n)
        model = mechanism.count_model(oracle)
        warn_about_frequencies(theta, stderr, mechanism.categories, n, mechanism.epsilon, model)
        if _counts_suffice(mechanism):
            estimate, attrs = _mle(mechanism, oracle, n)
            attrs["mle_passes"] = 1
            return frequency_parts(mechanism, oracle, n, theta, stderr, estimate, "mle", attrs, model=model)
        at, passes = self._params["at"], self._params["pass_number"] + 1
        if at is None:  # finalize called on the statistics of the first pass by hand
            raise ParameterError(f"{self.name!r}: these are the statistics of the first pass only; "
                                 "ldpest.estimate makes every pass")
        estimate, ratio = np.asarray(at, dtype=np.float64), mechanism.support_ratio()
        support = _likelihood_arrays(arrays)
        gradient = support_gradient(support, ratio)
        gap = _gap(gradient, estimate)
        best = self.__dict__.get("_best")
        overshot = best is not None and support_value(support, "loglik", ratio) < best.loglik
        if gap > self._params["tolerance"] and overshot:  # stopped by max_passes after an overshoot: the best
            estimate, gradient = best.theta, best.gradient
            gap = _gap(gradient, estimate)
        converged = gap <= self._params["tolerance"]
        if not converged:
            warnings.warn(f"the maximum-likelihood iteration stopped after {passes} passes over the reports with "
                          f"the log-likelihood within {gap:.3g} of its maximum (max_passes = "
                          f"{self._params['max_passes']})", EstimateWarning, stacklevel=3)
        attrs = {"mle_method": "projected Newton, one pass over the reports per step", "mle_passes": passes,
                 "mle_likelihood_gap": gap, "mle_converged": int(converged)}
        return frequency_parts(mechanism, oracle, n, theta, stderr, estimate, "mle", attrs, model=model)


class _SupportCache:
    """The supports of reports held in memory, kept between the passes of one estimate: as bits where the
    oracle computes them (local hashing expands each report into its categories: 0.48 ns a cell at d = 1000,
    against 0.05-0.09 to unpack the bits), and by category wherever at most ``SPARSE_SHARE`` of the cells are
    favoured (:class:`ldpest.stats.likelihood.SparseSupports`, whose statistics cost far less, kept or not).
    Dense supports that are the reports themselves (unary encodings) are read as they are, and nothing is kept.
    A chunk is known by its identity, through a weak reference, so that streamed chunks (new arrays each pass)
    are never taken for one another, and what was kept for chunks that are gone is dropped at the next chunk.
    At most ``limit`` bytes are kept."""

    def __init__(self, limit: int):
        self.limit, self._kept = limit, {}  # id(values) -> (weak reference, (mechanism, rows), bits)

    def blocks(self, mechanism, values, rows: int):
        """``mechanism.report_support`` of ``values`` in blocks of ``rows`` reports, from the bits kept for this
        very array if there are, else computed (and kept if they fit)."""
        found = self._kept.get(id(values))
        if found is not None and found[0]() is values and found[1] == (mechanism.spec_json, rows):
            for bits in found[2]:
                yield unpack_supports(bits) if isinstance(bits, PackedSupports) else bits
            return
        for key in [key for key, (reference, _, _) in self._kept.items() if reference() is None]:
            del self._kept[key]
        room = self.limit - sum(bits.nbytes for _, _, kept in self._kept.values() for bits in kept)
        packed = [] if room > 0 else None
        for start in range(0, len(values), rows):
            members = mechanism.report_support(values[start:start + rows])
            sample = members[::SPARSE_SAMPLE]  # every 16th report says how sparse the block is
            sparse = np.count_nonzero(sample) <= SPARSE_SHARE * sample.size
            if not sparse and np.may_share_memory(members, values):
                packed = None  # the reports are their own supports
                yield members
                continue
            # 0.34 ns a cell (local hashing's) by category, 0.04 as bits
            bits = sparse_supports(members) if sparse else pack_supports(members)
            if packed is not None:
                room -= bits.nbytes
                packed.append(bits)
                packed = packed if room >= 0 else None
            # column-major supports as tiles even when not kept: a tile's copy is one run, a block's d short runs
            # (local hashing at 10^6, d = 1000, not kept: 8.6-8.9 s at epsilon 1 and 11.3-11.5 s at 4, against
            # 8.5 and 12.1-12.7 with 244f709's staged copies, which the tiles replace)
            yield bits if sparse else unpack_supports(bits) if bits.layout == "tiles" else members
        if packed:
            try:
                self._kept[id(values)] = (weakref.ref(values), (mechanism.spec_json, rows), packed)
            except TypeError:  # an array that takes no weak reference is not kept
                pass

    def clear(self) -> None:
        self._kept.clear()


class _Best(NamedTuple):
    """The iterate with the highest log-likelihood so far, its gradient, and the quadratic model there (both
    divided by ``(ratio - 1)^2``, :func:`ldpest.stats.likelihood.support_model`)."""

    theta: np.ndarray
    gradient: np.ndarray
    loglik: float
    model_gradient: np.ndarray
    curvature: np.ndarray


def _gap(gradient, theta) -> float:
    """The Frank-Wolfe gap ``max_j g_j - theta . g``: ``l(theta*) - l(theta)`` is at most this (l concave)."""
    return max(float(gradient.max() - theta @ gradient), 0.0)


def _oracle_arrays(arrays):
    return {key: value for key, value in arrays.items() if not key.startswith("likelihood_")}


def _likelihood_arrays(arrays):
    return {key: arrays[f"likelihood_{key}"] for key in _STATISTICS}


def _member_products(mechanism, theta, n: int) -> np.ndarray:
    """``sum_i members_i members_i^T / T_i^2`` over n reports at ``theta``, estimated from ``MODEL_REPORTS``
    simulated reports per category, at most ``n / MODEL_SHARE`` and at least ``MODEL_LEAST`` in all, of data
    drawn from ``theta``, with a seed fixed by ``theta`` and ``n`` (drawing every category equally often,
    weighted by ``theta``, converged slower).

    With fewer than ``RANK_ONE_BELOW`` simulated reports per category, the products off the diagonal are
    replaced by their best rank-one fit: the simulation's noise is spread over all ``d^2`` entries, while
    the products themselves are close to rank one (at d = 300, n = 10^5 the Newton iteration with the exact
    products' rank-one fit takes as many passes as with their rank-4 fit)."""
    d = len(theta)
    seed = int.from_bytes(hashlib.sha256(np.asarray(theta, dtype=np.float64).tobytes() + str(n).encode()).digest()[:8],
                          "little")
    rng = np.random.default_rng(seed)
    size = max(min(d * MODEL_REPORTS, n // MODEL_SHARE), MODEL_LEAST)
    codes = rng.choice(d, size=size, p=theta).astype(mechanism.index_dtype)
    ratio = mechanism.support_ratio()
    precision = np.float32 if ratio < 2.0 ** 40 else np.float64  # float32 (twice as fast) while 1 / T^2 fits
    reports = mechanism.privatize_encoded(codes, rng).values
    products = np.zeros((d, d), dtype=np.float64)
    rows = max(1, MODEL_BLOCK_CELLS // d)  # in blocks: one float copy of all the reports cost more than the product
    for start in range(0, len(codes), rows):
        members = mechanism.report_support(reports[start:start + rows]).astype(precision)
        weight = 1.0 / (1.0 + (ratio - 1.0) * (members @ theta.astype(precision)).astype(np.float64))
        scaled = members * weight.astype(precision)[:, None]
        products += scaled.T @ scaled
    if len(codes) < RANK_ONE_BELOW * d:
        products = off_diagonal_rank_one(products)
    return (n / len(codes)) * products
