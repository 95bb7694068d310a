#' List the mechanisms, estimators and bases ldpest found
#'
#' @return a data.frame with columns name, kind, family, origin, version.
ldp_plugins <- function() {
  .call("plugins", list())
}

#' Privatise data as each person's device would
#'
#' @param x data: a vector of labels (multinomial mechanisms), a numeric vector
#'   or matrix / data.frame of numbers (histograms: one column per dimension;
#'   series: values in [0, 1]).
#' @param mechanism a mechanism name, e.g. "randomized-response".
#' @param epsilon the privacy level (> 0; there is no default).
#' @param ... the mechanism's parameters (categories, low, high, bins, basis, k, ...).
#' @param seed NULL (default) draws the noise from the operating system's
#'   cryptographically secure generator; an integer gives reproducible noise,
#'   for simulations only (set.seed() does not reach Python).
#' @return an "ldp_reports" object: values, spec (JSON), mechanism, epsilon.
ldp_privatize <- function(x, mechanism, epsilon, ..., seed = NULL) {
  if (is.data.frame(x)) x <- as.matrix(x)
  if (is.factor(x)) x <- as.character(x)
  .check_no_na(x, "data")
  .call("privatize", list(data = x, mechanism = mechanism,
                          params = c(list(epsilon = epsilon), list(...)), seed = seed))
}

#' Estimate from privatised reports
#'
#' @param reports an "ldp_reports" object from ldp_privatize(), or reports
#'   collected elsewhere (a vector of labels, or a matrix with one column per
#'   report coordinate) together with mechanism, epsilon and its parameters.
#' @param estimator NULL for the mechanism's default, or a name ("frequency",
#'   "histogram-mean", "histogram-cdf", "series").
#' @param mechanism,epsilon,... for reports collected elsewhere.
#' @param projection NULL (the estimator's default), "simplex", "positive" or "none".
#' @param level confidence level of the lower / upper attributes.
#' @param estimator_params a list of further estimator parameters (e.g. grid).
#' @return an array of the estimate with dimnames (category, or the input
#'   dims), and attributes stderr, unprojected, lower, upper, epsilon, n,
#'   estimator, mechanism, projection, mechanism_spec and table (a data.frame).
ldp_estimate <- function(reports, estimator = NULL, mechanism = NULL, epsilon = NULL, ...,
                         projection = NULL, level = 0.95, estimator_params = list()) {
  options <- estimator_params
  if (!is.null(projection)) options$projection <- projection
  if (inherits(reports, "ldp_reports")) {
    if (!is.null(mechanism)) stop("the reports carry their own mechanism; do not pass mechanism", call. = FALSE)
    args <- list(reports = reports$values, spec = reports$spec)
  } else {
    if (is.null(mechanism)) stop("mechanism is needed for reports collected elsewhere", call. = FALSE)
    if (is.data.frame(reports)) reports <- as.matrix(reports)
    if (is.factor(reports)) reports <- as.character(reports)
    params <- list(...)
    if (!is.null(epsilon)) params$epsilon <- epsilon
    args <- list(reports = reports, mechanism = mechanism, params = params)
  }
  .check_no_na(args$reports, "reports")
  args$estimator <- estimator
  args$estimator_params <- options
  args$level <- level
  .call("estimate", args)
}

print.ldp_estimate <- function(x, ...) {
  cat(sprintf("%s from %s (epsilon = %g, n = %d, projection = %s)\n", attr(x, "estimator"),
              attr(x, "mechanism"), attr(x, "epsilon"), as.integer(attr(x, "n")), attr(x, "projection")))
  table <- attr(x, "table")
  print(utils::head(table, 40), row.names = FALSE)
  if (nrow(table) > 40) cat(sprintf("... (%d more rows)\n", nrow(table) - 40))
  invisible(x)
}

as.data.frame.ldp_estimate <- function(x, ...) attr(x, "table")

print.ldp_reports <- function(x, ...) {
  n <- if (is.matrix(x$values)) nrow(x$values) else length(x$values)
  cat(sprintf("<ldp_reports: %d reports of %s, epsilon = %g>\n", n, x$mechanism, x$epsilon))
  invisible(x)
}
