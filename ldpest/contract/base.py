"""Base classes every plugin subclasses: Mechanism, Estimator, Basis (and the FrequencyOracle
protocol), and the exact Channel a finite mechanism declares.

The core knows plugins only through these classes and the registry.  The shape of the contract is
described in DESIGN.md ("The plugin contract") and in docs/plugin-author-guide.md.
"""

from __future__ import annotations

import abc
import json
import math
from collections.abc import Mapping
from typing import ClassVar

import numpy as np

from ..privacy.rng import resolve_rng
from ..privacy.shuffle import VariationRatio
from ..stats.sufficient import SufficientStats
from ..util.errors import DataError, IncompatibleError, ParameterError
from ..util.labels import smallest_index_dtype
from ..util.spec import canonical_json
from .channel import Channel


class _Configurable:
    """Keyword-only, immutable parameters forming a JSON-serialisable spec."""

    name: ClassVar[str] = ""
    family: ClassVar[str] = ""

    def _set_params(self, **params) -> None:
        try:
            json.dumps(params)
        except TypeError as exc:
            raise ParameterError(f"{self.name}: parameters must be JSON-serialisable ({exc})") from None
        object.__setattr__(self, "_params", dict(params))
        self.__dict__.pop("_spec_json", None)  # the cached spec texts, if params are set again
        self.__dict__.pop("_statistics_spec_json", None)

    @property
    def params(self) -> dict:
        return json.loads(json.dumps(self._params))

    @property
    def spec(self) -> dict:
        """``{"name": ..., **params}``: enough to rebuild the object."""
        return {"name": self.name, **self.params}

    @property
    def spec_json(self) -> str:
        """The canonical JSON of :attr:`spec` (computed once: the object is immutable)."""
        text = self.__dict__.get("_spec_json")
        if text is None:
            text = canonical_json({"name": self.name, **self._params})
            object.__setattr__(self, "_spec_json", text)
        return text

    def __setattr__(self, key, value):
        if key.startswith("_"):
            object.__setattr__(self, key, value)
        else:
            raise AttributeError(f"{type(self).__name__} is immutable; build a new one with other parameters")

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.spec_json == self.spec_json

    def __hash__(self) -> int:
        return hash(self.spec_json)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._params.items())
        return f"{type(self).__name__}({args})"


_PAIRWISE_CELLS = 1 << 26  # inputs^2 x outputs of the pairwise distances a channel's (p, beta) take


def channel_variation_ratio(channel: Channel) -> VariationRatio:
    """``(p, beta, p)`` of an enumerated channel: ``p`` its exact worst ratio, ``beta`` the largest
    total variation ``sum_z max(Q(z|x) - Q(z|x'), 0)`` over input pairs, each rounded up by a
    margin far above float64's error."""
    probabilities = np.array([channel.row(i) for i in range(channel.shape[0])])
    beta = max(float(np.maximum(row - probabilities, 0).sum(axis=1).max()) for row in probabilities)
    p = float(channel.worst_ratio()) * (1 + 1e-14)
    return VariationRatio(p, min(beta * (1 + 1e-12) + 1e-15, (p - 1) / (p + 1)), p)


class Mechanism(_Configurable, abc.ABC):
    """A client-side alpha-LDP mechanism.

    Subclasses set ``name``, ``family``, ``default_estimator`` and
    ``report_dims`` (dims of the report array, starting with ``"report"``),
    validate their keyword parameters in ``__init__`` and call
    ``self._set_params(...)``, and implement :meth:`encode_data`,
    :meth:`_privatize` and :meth:`encode_reports`.
    """

    plugin_kind: ClassVar[str] = "mechanism"  # what the registry registers it as
    default_estimator: ClassVar[str | None] = None
    report_dims: ClassVar[tuple[str, ...]] = ("report",)
    example_params: ClassVar[dict] = {}  # parameters besides epsilon for `ldpest plugins NAME`'s example
    data_kind: ClassVar[str] = "number"  # raw data: "label" (categories) or "number"
    report_kind: ClassVar[str] = "number"  # what a report holds: "label", "number" or "integer" (read exactly)

    def report_columns(self) -> list[str]:
        """Column names of one report in a CSV file (one column for 1-D reports)."""
        if len(self.report_dims) == 1:
            return ["report"]
        raise NotImplementedError(f"{self.name}: report_columns() must name the CSV columns of a report")

    @property
    def epsilon(self) -> float:
        return float(self._params["epsilon"])

    # -- client side ---------------------------------------------------------
    @abc.abstractmethod
    def encode_data(self, data) -> np.ndarray:
        """Validate raw data and return the array :meth:`_privatize` works on."""

    @abc.abstractmethod
    def _privatize(self, encoded: np.ndarray, rng) -> np.ndarray:
        """Vectorised over records: one report per row of ``encoded``.

        ``rng`` offers ``random(size)`` and ``integers(low, high, size)``."""

    def privatize(self, data, rng=None):
        """Privatise every record of ``data``; returns :class:`ldpest.Reports`.

        ``rng``: a numpy Generator (simulation), an int seed, ``"secure"`` for
        the OS's CSPRNG (production), or None (fresh OS-seeded numpy generator).
        """
        encoded = self.encode_data(data)
        if len(encoded) == 0:
            raise DataError("data is empty: at least one record is needed")
        return self.privatize_encoded(encoded, rng)

    def privatize_encoded(self, encoded: np.ndarray, rng):
        """Privatise records that :meth:`encode_data` has already validated (a reader encodes a
        whole block of a file, then privatises it in parts); ``rng`` as in :meth:`privatize`."""
        from .reports import Reports

        generator, kind = resolve_rng(rng)
        return Reports.trusted(self._privatize(encoded, generator), self, rng=kind)

    # -- server side ---------------------------------------------------------
    @abc.abstractmethod
    def encode_reports(self, values) -> np.ndarray:
        """Validate reports collected elsewhere and return their stored form.

        Raises :class:`DataError` naming what does not match (shape, domain)."""

    def check_encoded_reports(self, values: np.ndarray) -> np.ndarray:
        """Validate reports already in stored form (e.g. read from a file)."""
        return self.encode_reports(values)

    def channel(self) -> Channel | None:
        """The exact channel for a finite output space (None if infinite)."""
        return None

    def report_alphabet_size(self) -> int | None:
        """Optional: how many distinct reports (rows of the report columns) the mechanism can send,
        where that is few.  Spark then counts equal reports where they are stored and sends only
        the distinct ones with their counts to Python (docs/benchmarks.md, "Spark"): a hint for
        speed, since the statistics are the same either way.  None (the default): many or unknown
        (one-column label reports are counted whatever this says)."""
        return None

    def variation_ratio(self) -> VariationRatio:
        """Wang et al.'s ``(p, beta, q)`` of this randomiser, for the shuffle bound
        (:func:`ldpest.shuffle_epsilon`, docs/accounting.md): ``p`` the largest likelihood ratio,
        ``beta`` the largest total variation between two inputs' laws, ``q = p``.  From the
        exact channel where it can be enumerated (a record between grid points has a mixture of
        grid rows, which is no further apart), else what every ``epsilon``-LDP randomiser has;
        mechanisms with closed forms override it."""
        try:
            channel = self.channel()
        except ParameterError:  # too large to enumerate
            channel = None
        if channel is None or math.prod(channel.shape) * channel.shape[0] > _PAIRWISE_CELLS:
            return VariationRatio.generic(self.epsilon)
        return channel_variation_ratio(channel)


class FrequencyOracle(abc.ABC):
    """Protocol of mechanisms over ``categories`` whose reports give a linear
    unbiased estimate of the category frequencies (the ``frequency``
    estimator accepts any of them, built-in or third-party)."""

    data_kind: ClassVar[str] = "label"
    #: Optional (a class attribute or a property): where :meth:`frequency_mle` iterates (its cost times the
    #: 60 simulated sets of ``"auto"``'s bootstrap), the most categories at which ``"auto"`` considers the
    #: MLE (0: never); its bootstrap then simulates the MLE only where Stein's risk estimate prefers it.
    #: None (the default): a closed form, considered and simulated at every d.
    iterative_mle_categories: ClassVar[int | None] = None

    @property
    def categories(self) -> list:
        return list(self._params["categories"])

    @property
    def category_coordinate(self) -> np.ndarray:
        """The categories as a result coordinate (ints stay ints, else strings); a copy of an
        array computed once, since the mechanism is immutable."""
        coordinate = self.__dict__.get("_category_coordinate")
        if coordinate is None:
            from ..util.labels import label_coordinate

            coordinate = label_coordinate(self._params["categories"])
            object.__setattr__(self, "_category_coordinate", coordinate)
        return coordinate.copy()

    def report_columns(self) -> list[str]:
        if len(self.report_dims) == 1:
            return ["report"]
        return [f"report_{label}" for label in self.categories]

    @abc.abstractmethod
    def frequency_statistics(self, reports: np.ndarray) -> dict[str, object]:
        """Additive statistics of a chunk of stored reports (ints or ExactSum)."""

    @abc.abstractmethod
    def frequency_estimate(self, stats: Mapping[str, object], n: int) -> tuple[np.ndarray, np.ndarray]:
        """Unbiased ``theta_hat`` and its analytic standard error from the totals (never 0:
        see :func:`ldpest.stats.affine_binomial_stderr`)."""

    def frequency_interval(self, result, level: float) -> tuple[np.ndarray, np.ndarray, str] | None:
        """Optional: ``(lower, upper, method)``, the oracle's own intervals at ``level`` for the
        unprojected frequencies of ``result`` (a ``frequency`` result of this mechanism), where its
        reports have an exact law that the count model does not describe.  None (the default):
        Clopper-Pearson on :meth:`count_model`'s counts, else the normal interval."""
        return None

    def frequency_mle(self, stats: Mapping[str, object], n: int) -> tuple[np.ndarray, dict] | None:
        """Optional: ``(theta, info)``, the maximum-likelihood frequencies (on the simplex, under the
        implemented channel) when the statistics are sufficient for them, and how they were found
        (``method``; iterative ones ``iterations``, ``likelihood_gap``, ``converged``), which the result
        keeps as ``mle_*`` attributes; the ``frequency`` estimator's ``projection="mle"``.  None (the
        default): not available from these statistics."""
        return None

    def bit_column_statistic(self) -> tuple[str, int | None] | None:
        """Optional: ``(name, ones)`` where every report is a row of 0/1 values, one per report column, and
        :meth:`frequency_statistics` is ``{name: the int64 column sums}``; ``ones`` is the number of 1s every
        report must hold (None: any), and nothing else is checked.  Spark then sums the columns where
        they are stored, without sending the reports to Python (docs/benchmarks.md, "Spark").  None (the
        default): not declared."""
        return None

    def lattice_column_statistic(self) -> tuple[str, float] | None:
        """Optional: ``(name, step)`` where every report is a row of finite numbers, one per report column, on the
        lattice of ``step`` (a power of two), and :meth:`frequency_statistics` is ``{name: ExactSum.of(reports,
        step)}``, the exact column sums.  Spark then sums the columns in units of ``step`` where they are stored
        (docs/benchmarks.md, "Spark").  None (the default): not declared."""
        return None

    def linear_hash_statistic(self) -> tuple[str, int, int] | None:
        """Optional: ``(name, P, g)`` where every report is three integer columns ``(a, c, y)`` with ``1 <= a < P``,
        ``0 <= c < P`` and ``0 <= y < g``, and :meth:`frequency_statistics` is ``{name: support}``,
        ``support_j = #{i : floor(g ((a_i j + c_i) mod P) / P) = y_i}`` for each category ``j = 0..d-1`` (local
        hashing's universal family).  Spark then counts the supports in place for few categories
        (docs/benchmarks.md, "Spark").  None (the default): not declared."""
        return None

    def decimal_xxh32_statistic(self) -> tuple[str, int] | None:
        """Optional: ``(name, g)`` where every report is two integer columns ``(y, s)`` with ``0 <= y < g`` and
        ``0 <= s < 2^63``, and :meth:`frequency_statistics` is ``{name: support}``, ``support_j = #{i :
        XXH32(str(j), s_i mod 2^32) mod g = y_i}`` for each category ``j = 0..d-1`` (local hashing's ``xxh32``
        family, pure-ldp's and multi-freq-ldpy's; :mod:`ldpest.util.xxh32`).  Spark then counts the supports in
        place for few categories (docs/benchmarks.md, "Spark").  None (the default): not declared."""
        return None

    def support_ratio(self) -> float | None:
        """Optional: ``r > 1`` when the likelihood of every report is two-valued over the inputs, ``P(y | x) =
        c(y) (1 + (r - 1) [x in S(y)])``, with ``S(y)`` the categories the report favours
        (:meth:`report_support`) and ``r`` the implemented likelihood ratio between them (unary encodings:
        the bits set; subset selection: the subset; local hashing: the categories hashed to the reported
        value; MATH.md section 1).  The ``frequency-likelihood`` estimator maximises the likelihood of the
        reports through it; the conformance kit checks both against the enumerated channel.  None (the
        default): not two-valued, or not declared."""
        return None

    def report_support(self, reports: np.ndarray) -> np.ndarray:
        """With :meth:`support_ratio`: ``S(y_i)`` of each stored report as a 0/1 ``uint8`` array of shape
        ``(len(reports), d)``."""
        raise NotImplementedError(f"{type(self).__name__} declares no support_ratio")

    cross_covariance_columns = False  # frequency_cross_covariance multiplies each column of a matrix ``vector``

    def frequency_cross_covariance(self, theta, vector) -> np.ndarray | None:
        """Optional: ``sum_{j != i} n Cov(theta_hat_i, theta_hat_j) vector_j`` for every ``i``, with data of
        frequencies ``theta``: the off-diagonal covariance of the unbiased estimate times a vector, which
        ``projection="auto"`` needs for its risk estimates (docs/frequency-oracles.md, "The default
        estimate"); the conformance kit checks it against the enumerated channel.  Where one report's
        coordinates are independent given its input (unary encodings, one-hot Laplace), it is the
        inputs' sampling alone, ``-theta_i theta_j``: :func:`ldpest.stats.binomial.cross_covariance_product`
        computes that and the other common forms.  None (the default): not declared.  Set the class attribute
        ``cross_covariance_columns = True`` where ``vector`` may also be a ``(d, k)`` matrix whose columns are
        each multiplied (the conformance kit checks it): ``"auto"`` then forms the covariance in one call."""
        return None

    def frequency_cross_covariance_factors(self, theta) -> tuple[np.ndarray, np.ndarray] | None:
        """Optional, with :meth:`frequency_cross_covariance`: ``(V, S)``, a ``(d, r)`` and a symmetric ``(r, r)``
        array with few columns ``r``, such that ``n Cov(theta_hat_i, theta_hat_j) = (V S V^T)_ij`` for every
        ``i != j`` (its diagonal is free).  ``"auto"`` then draws its normal simulations in O(d r) per draw
        instead of factoring the d x d covariance (docs/frequency-oracles.md, "The default estimate"); the
        conformance kit checks it against :meth:`frequency_cross_covariance`.  For the form ``c0 + c1
        (theta_i + theta_j) - theta_i theta_j``, :func:`ldpest.stats.binomial.cross_covariance_factors`.
        None (the default): not declared."""
        return None

    def frequency_mle_divergence(self, stats: Mapping[str, object], n: int, mle, covariance) -> float | None:
        """Optional: ``tr(Sigma J)``, ``J`` the Jacobian of :meth:`frequency_mle` as a function of the
        unbiased estimate and ``covariance`` (:class:`ldpest.stats.risk.CovarianceOperator`) its ``Sigma``,
        for the Stein risk estimate of ``projection="auto"`` (where the MLE reads more of the statistics
        than the unbiased estimate ``x``, ``E[mle . (x - theta)]`` by Stein's identity on the statistics, as
        Hadamard response's).  None (the default): the MLE is not a smooth function of the statistics (or
        not available), and ``"auto"`` does not consider it."""
        return None

    def interval_counts(self, stats: Mapping[str, object]) -> dict[str, np.ndarray]:
        """Optional: integer arrays over the categories that :meth:`frequency_interval` reads from the
        result, which keeps them as variables of that name (e.g. Hadamard response's
        ``positive_count`` and ``block_count``).  Default: none."""
        return {}

    def count_model(self, stats: Mapping[str, object]) -> tuple[np.ndarray, float, float] | None:
        """Optional: ``(counts, offset, gap)`` when ``theta_hat = (counts / n - offset) / gap`` with
        ``counts_j ~ Binomial(n, offset + gap theta_j)``; confidence intervals are then exact."""
        return None

    # -- declared accuracy (optional; the "auto" chooser and the planner use it) -----------
    def frequency_variance(self, theta) -> np.ndarray:
        """Optional: ``n Var(theta_hat_j)`` for each category when the data have frequencies
        ``theta``: the exact variance of the unbiased estimate from ``n`` reports, times ``n``,
        computed from the probabilities the sampler implements."""
        raise NotImplementedError(f"{self.name!r} does not declare its variance")

    def worst_case_variance(self) -> float:
        """Optional: ``max over the simplex of sum_j n Var(theta_hat_j)`` (the l2 risk times n).
        ``ldpest.mechanism("auto", ...)`` picks the registered oracle where this is smallest."""
        raise NotImplementedError(f"{self.name!r} does not declare its worst-case variance")

    def worst_case_category_variance(self) -> float:
        """Optional: ``max over the simplex and j of n Var(theta_hat_j)``: the planner's standard
        error of one category's frequency is ``sqrt(this / n)``."""
        raise NotImplementedError(f"{self.name!r} does not declare its worst-case variance")

    def report_bits(self) -> float:
        """Bits needed to send one report (information content of its encoding, e.g. ``d`` for a
        0/1 vector, ``log2(d)`` for one category)."""
        raise NotImplementedError(f"{self.name!r} does not declare its report size")

    @classmethod
    def declares_variance(cls) -> bool:
        """True if the class overrides :meth:`worst_case_variance` (third-party oracles too)."""
        return cls.worst_case_variance is not FrequencyOracle.worst_case_variance

    @property
    def index_dtype(self) -> np.dtype:
        """The smallest unsigned integer type that holds a category index: the stored form of
        single-category reports (uint8 up to 256 categories: 1 byte per report)."""
        return smallest_index_dtype(len(self.categories))

    def check_encoded_reports(self, values: np.ndarray) -> np.ndarray:
        """Stored label reports are category indices 0..d-1; other reports validate as collected."""
        if self.report_kind != "label":
            return self.encode_reports(values)
        values = np.asarray(values)
        d = len(self.categories)
        if values.ndim != 1 or values.dtype.kind not in "iu":
            raise DataError(f"stored reports of {self.name!r} must be a 1-D array of category indices")
        bad = (values < 0) | (values >= d)
        if bad.any():
            raise DataError(f"{int(bad.sum())} report(s) are not category indices in 0..{d - 1}",
                            row=np.flatnonzero(bad)[0])
        return values.astype(self.index_dtype, copy=False)

    def encode_labels(self, values, what: str = "data") -> np.ndarray:
        """Map labels to category indices; error naming how many and which are unknown."""
        from ..util.labels import contiguous_int_range, encode_labels

        categories = self._params["categories"]  # read, never changed: no copy of d labels per call
        span = self.__dict__.get("_category_span", False)
        if span is False:
            span = contiguous_int_range(categories)
            object.__setattr__(self, "_category_span", span)
        return encode_labels(values, categories, what, span=span)


class Estimator(_Configurable, abc.ABC):
    """A server-side estimator working through additive sufficient statistics.

    ``accepts`` lists mechanism names (str) or classes (isinstance check) it
    can use.  Subclasses implement :meth:`_aggregate` and :meth:`_finalize`.
    """

    plugin_kind: ClassVar[str] = "estimator"
    accepts: ClassVar[tuple] = ()
    # True where _aggregate returns exactly the frequency oracle's frequency_statistics(values): an engine may
    # then compute them another way (Spark sums bit columns in the JVM: FrequencyOracle.bit_column_statistic)
    aggregates_frequency_statistics: ClassVar[bool] = False
    # parameters used only by finalize (e.g. projection): statistics aggregated
    # with one value can be finalized with any other
    finalize_params: ClassVar[tuple[str, ...]] = ("projection",)

    def lattice_column_statistic(self, mechanism: Mechanism) -> tuple[str, float] | None:
        """Optional: ``(name, step)`` where the statistics :meth:`_aggregate` returns for a chunk of ``mechanism``'s
        reports are ``{name: ExactSum.of(reports, step)}``, the exact sums of report columns on the lattice of
        ``step`` (a power of two), so that an engine may sum them another way (Spark sums them in the JVM, in
        long units of ``step``).  Default: the oracle's own declaration
        (:meth:`FrequencyOracle.lattice_column_statistic`) where the statistics are the oracle's
        (``aggregates_frequency_statistics``), else None."""
        if self.aggregates_frequency_statistics and isinstance(mechanism, FrequencyOracle):
            return mechanism.lattice_column_statistic()
        return None

    def threshold_count_statistic(self, mechanism: Mechanism) -> tuple[str, float] | None:
        """Optional: ``(name, threshold)`` where the statistics :meth:`_aggregate` returns for a chunk of
        ``mechanism``'s reports (rows of finite numbers, one per report column) are ``{name: the number of values
        at most threshold in each column}`` (int64), so that an engine may count them another way (Spark counts
        them in the JVM).  None (the default): not declared."""
        return None

    @property
    def statistics_spec_json(self) -> str:
        """The part of the spec that determines the sufficient statistics (computed once: the
        object is immutable)."""
        text = self.__dict__.get("_statistics_spec_json")
        if text is None:
            text = canonical_json({k: v for k, v in {"name": self.name, **self._params}.items()
                                   if k not in self.finalize_params})
            object.__setattr__(self, "_statistics_spec_json", text)
        return text

    def accepts_mechanism(self, mechanism: Mechanism) -> bool:
        for entry in self.accepts:
            if isinstance(entry, str) and mechanism.name == entry:
                return True
            if isinstance(entry, type) and isinstance(mechanism, entry):
                return True
        return False

    def check_accepts(self, mechanism: Mechanism) -> None:
        """An IncompatibleError unless this estimator accepts reports of ``mechanism``."""
        if not self.accepts_mechanism(mechanism):
            raise IncompatibleError(
                f"estimator {self.name!r} does not accept reports of mechanism {mechanism.name!r}"
            )

    _check_mechanism = check_accepts  # its name before issue 21, which plugins call

    # estimators that read the reports more than once (:meth:`next_pass`) set this
    multipass: ClassVar[bool] = False

    def next_pass(self, stats: SufficientStats) -> Estimator | None:
        """Optional, for estimators that read the reports more than once: the estimator of the next pass
        over the same reports, given the total statistics ``stats`` of this one (its parameters carry
        the iteration's state, so workers rebuild it from its spec), or None when ``stats`` are those
        :meth:`finalize` turns into the result.  Default: None (one pass)."""
        return None

    def estimate_passes(self, aggregate):
        """The result from ``aggregate(estimator)``, the total statistics of every report for an
        estimator: one call for one-pass estimators, one per pass (:meth:`next_pass`) for the others.
        Every way of reading reports (memory, streams, files, dask, Spark) calls this."""
        estimator, stats = self, aggregate(self)
        while (following := estimator.next_pass(stats)) is not None:
            estimator, stats = following, aggregate(following)
        return estimator.finalize(stats)

    @abc.abstractmethod
    def _aggregate(self, mechanism: Mechanism, values: np.ndarray) -> dict[str, object]:
        """Additive statistics of one chunk of stored report values."""

    @abc.abstractmethod
    def _finalize(self, mechanism: Mechanism, arrays: Mapping[str, object], n: int):
        """Turn total statistics into :class:`ldpest.EstimateParts`."""

    def aggregate(self, reports) -> SufficientStats:
        """Sufficient statistics of :class:`ldpest.Reports`: lazy reports (``read_reports(path,
        chunks=...)``) block by block in order, each block read and validated once (memory: one
        block); ``ldpest.estimate`` maps the blocks on dask instead."""
        if reports.lazy:
            return sum(self.aggregate(block) for block in reports.blocks())
        return self.aggregate_values(reports.mechanism, reports.values)

    def aggregate_values(self, mechanism: Mechanism, values: np.ndarray) -> SufficientStats:
        """Sufficient statistics of stored report values of ``mechanism``, already validated (a
        block that a reader or a dask task holds)."""
        self.check_accepts(mechanism)
        arrays = self._aggregate(mechanism, values)
        return SufficientStats(self.statistics_spec_json, mechanism.spec_json, int(np.shape(values)[0]), arrays)

    def finalize(self, stats: SufficientStats):
        """The labelled result (``xarray.Dataset``) from total statistics."""
        from .registry import mechanism_from_spec_json
        from .results import build_dataset

        if stats.estimator_spec != self.statistics_spec_json:
            raise IncompatibleError(
                f"statistics were aggregated by {stats.estimator_spec}, not by {self.statistics_spec_json}"
            )
        if stats.n == 0:
            raise DataError("no reports: at least one report is needed to estimate")
        mechanism = mechanism_from_spec_json(stats.mechanism_spec)
        return build_dataset(self.parts(mechanism, stats.arrays, stats.n), mechanism=mechanism, estimator=self,
                             n=stats.n)

    def parts(self, mechanism: Mechanism, arrays: Mapping[str, object], n: int):
        """The estimate as plain arrays (:class:`ldpest.EstimateParts`) from the total statistics ``arrays``
        of ``n`` reports of ``mechanism``: what :meth:`finalize` labels.  For estimators built on another's
        (the histogram estimators on a frequency oracle's estimate of the cells)."""
        self.check_accepts(mechanism)
        return self._finalize(mechanism, arrays, n)

    def interval(self, result, level: float):
        """Optional: the estimator's own intervals at ``level`` for the estimate its ``stderr``
        describes (``result["stderr"].attrs["estimate"]``): ``(lower, upper, method)``, arrays of that
        estimate's shape and a short name of how they were computed ("profile likelihood",
        "bootstrap", "exact ...").  None (the default): ``ldpest.confidence_interval`` uses ldpest's
        (exact for binomial counts, else normal with a kurtosis correction)."""
        return None

    def simulate(self, mechanism: Mechanism, truth, n: int, rng) -> SufficientStats:
        """Optional: an exact draw of the statistics of ``n`` reports, without
        privatising each record (for studies at huge n).  ``truth`` is what the
        family needs (frequencies, cell masses)."""
        raise NotImplementedError(f"estimator {self.name!r} has no exact aggregate simulation")

    def estimate(self, reports):
        """``finalize(aggregate(reports))``; accepts an iterable of chunks too."""
        from .reports import Reports

        if isinstance(reports, Reports):
            return self.estimate_passes(lambda estimator: estimator.aggregate(reports))
        if self.multipass and iter(reports) is reports:
            raise ParameterError(f"estimator {self.name!r} reads the reports several times: pass Reports, a list "
                                 "of Reports chunks or a report file (ldpest.open_reports), not a one-shot stream")

        def aggregate(estimator):
            total = sum(estimator.aggregate(chunk) for chunk in reports)
            if total == 0:
                raise DataError("no reports: the stream held no chunks")
            return total
        return self.estimate_passes(aggregate)


class Basis(_Configurable, abc.ABC):
    """Orthonormal functions on [0, 1] bounded by ``B0`` (series estimators)."""

    plugin_kind: ClassVar[str] = "basis"
    B0: ClassVar[float] = 1.0
    ordering: ClassVar[str] = ""
    # phi_1 is the constant 1: then theta_1 = int f phi_1 = 1 for every density, and the series
    # estimator uses that instead of estimating it (its estimate then integrates to exactly 1)
    constant_first: ClassVar[bool] = False

    def __init__(self):
        self._set_params()

    @abc.abstractmethod
    def evaluate(self, x, k: int) -> np.ndarray:
        """Values of the first ``k`` functions at ``x``: shape ``(len(x), k)``."""
