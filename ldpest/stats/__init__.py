"""The statistics floor: exact sums (``exactsum``), additive sufficient statistics
(``sufficient``), estimates affine in binomial counts (``binomial``), projections
(``projection``), cubic partitions (``partition``) and confidence intervals as arrays
(``intervals``).  It imports only ``ldpest.util`` and ``ldpest.privacy`` (README, "Layout").

The names of the module ``ldpest.stats`` before the floors (issue 21) still import from here.
"""

from ..util.lazy import lazy_names

__getattr__, __dir__ = lazy_names(__name__, {
    "SufficientStats": ".sufficient", "count_indices": ".sufficient",
    "affine_binomial_stderr": ".binomial", "affine_binomial_variance": ".binomial",
    "affine_binomial_worst_cases": ".binomial", "AffineBinomialOracle": ".binomial",
    "laplace_mean_kurtosis": ".intervals",
})
