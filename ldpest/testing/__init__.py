"""Conformance kit for plugin authors: ``check_mechanism`` and ``check_estimator``.

Like scikit-learn's ``check_estimator``: a third-party author runs these in
their own test suite to show that a plugin honours ldpest's contract::

    from ldpest.testing import check_mechanism, check_estimator

    def test_my_mechanism():
        check_mechanism(MyMechanism(epsilon=1.0, categories=["a", "b", "c"]), data=["a", "b", "c"] * 100)

    # or one pytest test per check (a declared expected failure shows as xfail):
    @pytest.mark.parametrize("check", mechanism_checks(mech, data), ids=lambda c: c.name)
    def test_conformance(check):
        check()

Each check proves one promise and, when it fails, says what is wrong:

* ``spec_round_trip``: the spec is JSON, rebuilds an equal mechanism, and the
  mechanism is immutable;
* ``rejects_bad_epsilon``: epsilon <= 0, NaN or infinite raise ParameterError;
* ``rejects_bad_data``: NaN and empty data raise DataError;
* ``exact_privacy`` (finite output space): the channel is a stochastic matrix
  whose worst likelihood ratio is at most e^epsilon - a proof when the channel
  holds exact fractions (:class:`ldpest.Channel`, dense or structured, built from
  the sampler's integer thresholds) - and ``privatize`` samples that channel at
  every input (beyond 256 inputs, the extremes and a random sample) and, for data
  records off the channel's inputs, the mixture of rows that ``channel_mixture(x)``
  claims; chi-square tests with a Bonferroni correction (:mod:`ldpest.testing.privacy`);
* ``distribution_privacy`` (no finite channel, or one too large to enumerate:
  its ``channel()`` raises ParameterError, and the report says so): for two
  inputs, the empirical probabilities of many events (quantile bins and tails of
  a discriminating projection, and the low-order-bit pattern of every coordinate:
  the floating-point attack of Mironov 2012) never differ by more than e^epsilon
  beyond sampling error, and no event possible under one input is impossible
  under the other;
* ``distinguishing_audit`` (every mechanism): a black-box lower bound on epsilon
  from the sampler alone (LDP-Auditor's method, Arcolezi and Gambs 2023: events
  chosen on half the samples, Clopper-Pearson bounds on the other half) must not
  exceed the claimed epsilon;
* ``vectorised``: privatising 100x more records makes no more Python calls
  (no per-record loop), and returns one report per record;
* ``reproducible``: the same seed gives the same reports;
* ``reports_round_trip``: NetCDF round trip keeps values and spec;
* ``bit_columns`` (frequency oracles that declare ``bit_column_statistic``): the
  reports are 0/1 columns with the declared number of ones, and the statistics
  are their column sums;
* ``lattice_columns`` (frequency oracles that declare ``lattice_column_statistic``):
  the step is a power of two, the reports lie on its lattice, one column per report
  column, and the statistics are their exact column sums;
* ``linear_hash`` (frequency oracles that declare ``linear_hash_statistic``): the
  reports are three integer columns in the declared ranges, and the statistics are
  the supports of the universal family, recomputed in exact integers;
* ``decimal_xxh32`` (frequency oracles that declare ``decimal_xxh32_statistic``):
  the reports are two integer columns in the declared ranges, and the statistics
  are the supports of the xxh32 family, recomputed with the scalar reference of
  :mod:`ldpest.util.xxh32`;
* ``report_alphabet`` (mechanisms that declare ``report_alphabet_size``): the
  channel has no more outputs, and 5000 privatised records no more distinct
  reports, than declared;
* for estimators, ``unbiased`` (mean of the estimate over repeated
  privatisations of fixed data equals what the family says it should, within 5
  standard errors), ``stderr_calibrated`` (the estimate that stderr describes,
  with the data redrawn as well as the noise), ``streaming_equals_one_shot`` (bit
  for bit), ``statistics_add_in_any_order``, ``result_schema`` (the schema, the
  intervals, and the real .nc, .csv and .json writers), ``rejects_empty`` and, where the estimator
  declares ``aggregates_frequency_statistics``, ``frequency_statistics`` (its statistics are the
  oracle's own, which lets Spark sum bit columns in place) and, where it declares
  ``lattice_column_statistic``, ``lattice_statistics`` (its statistics are the exact
  column sums of reports on the declared lattice) and, where it declares
  ``threshold_count_statistic``, ``threshold_statistics`` (its statistics are the
  counts of values at most the threshold per column).

Checks compare error *types*, never wording.  Statistical checks are seeded and
their tolerances come from sampling variances (5 standard errors), or hold every
false alarm below 1e-6 together.
"""

from .checks import Check, CheckResult, ConformanceError, Report
from .estimators import check_estimator, check_result, default_target, estimator_checks
from .mechanisms import check_mechanism, mechanism_checks
from .privacy import empirical_epsilon

__all__ = ["Check", "CheckResult", "ConformanceError", "Report", "check_estimator", "check_mechanism",
           "check_result", "default_target", "empirical_epsilon", "estimator_checks", "mechanism_checks"]
