#' List the mechanisms, estimators and bases ldpest found
#'
#' @return a data.frame with columns name, kind, family, origin, version.
ldp_plugins <- function() {
  .call("plugins", list())
}

#' Privatise data as each person's device would
#'
#' @param x data: a vector of labels or a factor (multinomial mechanisms; a
#'   factor's levels are the categories unless categories is given), a numeric
#'   vector or matrix / data.frame of numbers (histograms: one column per
#'   dimension, whose names name the result's dims; series: values in [0, 1]).
#' @param mechanism a mechanism name, e.g. "randomized-response".
#' @param epsilon the privacy level (> 0; there is no default). For
#'   randomized response, keep = p (the probability of reporting the truth) may
#'   be given instead.
#' @param ... the mechanism's parameters (categories, keep, low, high, bins, basis, k, ...).
#' @param seed NULL (default) draws the noise from the operating system's
#'   cryptographically secure generator; an integer gives reproducible noise,
#'   for simulations only (set.seed() does not reach Python).
#' @param data with a formula x (~ answer, or ~ age + income for a histogram): the data.frame
#'   (or tibble) whose columns the formula names.
#' @param na.rm FALSE (default) refuses records holding NA; TRUE drops them (the reports say how many).
#' @return an "ldp_reports" object: values, spec (JSON), mechanism, epsilon, variable.
ldp_privatize <- function(x, mechanism, epsilon = NULL, ..., data = NULL, na.rm = FALSE, seed = NULL, users = NULL,
                          state = NULL, ledger = NULL, budget = NULL, per = "day", at = NULL) {
  input <- .input(x, data, "ldp_privatize")
  if (!is.null(input$by))
    stop(.condition("ldp_privatize takes no groups (the | part of the formula): give them to ldp_estimate", "error"))
  cleaned <- .drop_na(input$x, "data", na.rm, users = users)
  x <- cleaned$x
  users <- cleaned$users
  .check_number(epsilon, "epsilon")
  if (!is.null(seed) && !(is.numeric(seed) && length(seed) == 1 && !is.na(seed) && seed == round(seed)))
    stop(.condition(sprintf("seed must be one whole number (or NULL for secure noise), got %s", deparse(seed)),
                    "error"))
  if (is.null(users) && (!is.null(ledger) || !is.null(state)))
    stop(.condition("ledger and state need users (the user of each record)", "error"))
  if (!is.null(users)) {
    .check_no_na(users, "users")
    if (length(users) != NROW(x))
      stop(.condition(sprintf("users must name the user of each of the %d records, got %d", NROW(x),
                              length(users)), "error"))
    for (arg in c("state", "ledger", "per", "at")) {
      value <- get(arg)
      if (!is.null(value) && !(is.character(value) && length(value) == 1 && !is.na(value)))
        stop(.condition(sprintf("%s must be one string, got %s", arg, deparse(value)), "error"))
    }
    if (!is.null(budget) && !(is.numeric(budget) && length(budget) == 1 && !is.na(budget)))
      stop(.condition(sprintf("budget must be one number, got %s", deparse(budget)), "error"))
  }
  data <- .data_args(x)
  accounts <- if (is.null(users)) list() else
    list(users = as.character(users), state = state, ledger = ledger, budget = budget, per = per, at = at)
  reports <- .call("privatize", c(list(data = data$values, mechanism = mechanism, params = .params(epsilon, ...),
                                       seed = seed), data$defaults, accounts))
  reports$variable <- input$variable
  if (cleaned$removed > 0) reports$na_removed <- cleaned$removed
  reports
}

# The data of a call: a formula read from data =, or the object itself; a one-column data.frame of
# labels is its column. Returns list(x, variable, by).
.input <- function(x, data, caller) {
  if (inherits(x, "formula")) {
    input <- .formula_data(x, data)
  } else {
    if (!is.null(data))
      stop(.condition(sprintf("data = goes with a formula, e.g. %s(~ answer, data = df, ...)", caller), "error"))
    input <- list(x = x, variable = NULL, by = NULL)
  }
  one <- .one_variable(input$x)
  input$x <- one$x
  if (is.null(input$variable)) input$variable <- one$variable
  input
}

ldp_simulate <- function(mechanism, epsilon, n, ..., reps = 20, theta = NULL, truth = NULL, estimator = NULL,
                         estimator_params = list(), seed = 0) {
  for (arg in c("epsilon", "n")) {
    value <- get(arg)
    if (!is.numeric(value) || length(value) == 0 || anyNA(value))
      stop(.condition(sprintf("%s must be numbers, got %s", arg, deparse(value)), "error"))
  }
  if (!(is.numeric(reps) && length(reps) == 1 && !is.na(reps) && reps >= 2))
    stop(.condition(sprintf("reps must be one whole number >= 2, got %s", deparse(reps)), "error"))
  .check_number(seed, "seed")
  .call("simulate", list(mechanism = mechanism, epsilon = epsilon, n = n, params = list(...), reps = reps,
                         theta = theta, truth = truth, estimator = estimator, estimator_params = estimator_params,
                         seed = seed))
}

ldp_ledger <- function(ledger, user = NULL, period = NULL) {
  for (arg in c("ledger", "user", "period")) {
    value <- get(arg)
    if (!is.null(value) && !(is.character(value) && length(value) == 1 && !is.na(value)))
      stop(.condition(sprintf("%s must be one string, got %s", arg, deparse(value)), "error"))
  }
  .call("ledger", list(ledger = ledger, user = user, period = period))
}

# NULL, or one number that is not NA: a clear R error naming the argument otherwise.
.check_number <- function(value, name) {
  if (!is.null(value) && !(is.numeric(value) && length(value) == 1 && !is.na(value)))
    stop(.condition(sprintf("%s must be one number, got %s", name, deparse(value)), "error"))
}

.params <- function(epsilon, ...) {
  params <- list(...)
  if (!is.null(epsilon)) params$epsilon <- epsilon
  params
}

# A factor's levels are the default categories; a character vector crosses to Python as a
# factor of its distinct values (codes and levels: no string per element); a data.frame becomes
# a matrix (its column names the default names of the result's dims).
.data_args <- function(x) {
  defaults <- list()
  if (is.factor(x)) {
    defaults$levels <- levels(x)
  } else if (is.character(x) && is.null(dim(x))) {
    seen <- unique(x)
    x <- structure(match(x, seen), levels = seen, class = "factor")
  }
  if (is.data.frame(x)) {
    defaults$columns <- colnames(x)
    x <- as.matrix(x)
  } else if (is.matrix(x) && !is.null(colnames(x))) {
    defaults$columns <- colnames(x)
  }
  list(values = x, defaults = defaults)
}

#' Estimate from privatised reports
#'
#' @param reports an "ldp_reports" object from ldp_privatize() or ldp_read(), or
#'   reports collected elsewhere (a vector of labels or a factor, or a matrix
#'   with one column per report coordinate) together with mechanism, epsilon
#'   (or keep) and its parameters; or a formula, ~ report | group, whose
#'   columns are read from data (a data.frame or tibble).
#' @param data with a formula: the data.frame of the collected reports (and groups).
#' @param weights NULL, or design (survey) weights, one per report: the Hajek frequency
#'   estimate with its linearization standard error. With a formula, a column of data
#'   (weights = w, as lm() takes it) or its name.
#' @param na.rm FALSE (default) refuses reports (or groups) holding NA; TRUE
#'   drops them, and the result's attribute na_removed says how many.
#' @param estimator NULL for the mechanism's default, or a name ("frequency",
#'   "frequency-likelihood", "histogram-mean", "histogram-cdf", "histogram-likelihood",
#'   "series").
#' @param mechanism,epsilon,... for reports collected elsewhere.
#' @param projection NULL (the estimator's default: "auto" for frequencies, the
#'   lowest estimated risk per result), "auto", "simplex", "positive", "shrink", "ibu", "mle" or
#'   "none".
#' @param level confidence level of the lower / upper attributes.
#' @param estimator_params a list of further estimator parameters (e.g. grid).
#' @param by NULL, or a vector (or factor) with one group per report: one
#'   estimate per group, as an "ldp_estimates" list.
#' @param codes "labels" (default), or "0-based" / "1-based" when collected
#'   reports are positions in the categories (pure-ldp, multi-freq-ldpy).
#' @return an "ldp_estimate": an array of the estimate with dimnames (category,
#'   named after the formula's variable, or the input dims) and attributes stderr, unprojected, lower, upper,
#'   epsilon, n, estimator, mechanism, projection and mechanism_spec. Methods:
#'   print, summary, confint, coef, as.data.frame, plot.
ldp_estimate <- function(reports, estimator = NULL, mechanism = NULL, epsilon = NULL, ..., data = NULL,
                         weights = NULL, na.rm = FALSE, projection = NULL, level = 0.95, estimator_params = list(),
                         by = NULL, codes = "labels") {
  weights <- .weights(substitute(weights), data, parent.frame())
  .check_number(epsilon, "epsilon")
  options <- estimator_params
  if (!is.null(projection)) options$projection <- projection
  if (inherits(reports, "ldp_reports")) {
    if (!is.null(data)) stop(.condition("data = goes with a formula, not with ldp_reports", "error"))
    if (!is.null(mechanism)) stop(.condition("the reports carry their own mechanism; do not pass mechanism", "error"))
    cleaned <- .drop_na(reports$values, "reports", na.rm, by = by, weights = weights)
    variable <- reports$variable
    args <- list(reports = cleaned$x, spec = reports$spec, params = .params(epsilon, ...))
  } else {
    input <- .input(reports, data, "ldp_estimate")
    if (!is.null(input$by)) {
      if (!is.null(by)) stop(.condition("groups are given twice: in the formula (| ...) and as by =", "error"))
      by <- input$by
    }
    if (is.null(mechanism)) stop(.condition("mechanism is needed for reports collected elsewhere", "error"))
    cleaned <- .drop_na(input$x, "reports", na.rm, by = by, weights = weights)
    variable <- input$variable
    data <- .data_args(cleaned$x)
    args <- c(list(reports = data$values, mechanism = mechanism, params = .params(epsilon, ...)), data$defaults)
  }
  by <- cleaned$by
  if (!is.null(cleaned$weights)) args$weights <- as.numeric(cleaned$weights)
  if (!is.null(by)) {
    .check_no_na(by, "by")
    if (is.factor(by)) args$by_levels <- levels(by)
    args$by <- .data_args(if (is.factor(by)) by else as.character(by))$values  # codes and levels
  }
  args$estimator <- estimator
  args$estimator_params <- options
  args$level <- level
  args$codes <- codes
  result <- .name_variable(.call("estimate", args), variable)
  if (cleaned$removed > 0) attr(result, "na_removed") <- cleaned$removed
  result
}

#' Read a report or result file written by the ldpest command line or Python
#'
#' @param path a report file (.nc or .zarr, or .csv with its #ldpest-spec line)
#'   or a result file (.nc or .json; a result .csv is a plain table for read.csv()).
#' @return an "ldp_reports" or an "ldp_estimate" object.
ldp_read <- function(path) {
  .call("read", list(path = normalizePath(path, mustWork = FALSE)))
}

#' Sample size, standard error or epsilon of the frequency oracles
#'
#' Give two of epsilon, n and stderr (the worst-case standard error of one
#' category's frequency); the third is computed for each mechanism.
#' @param d the number of categories.
#' @param epsilon,n,stderr two of them.
#' @param mechanism "all" (one row per mechanism, best first), "auto" or a name.
#' @return a data.frame: mechanism, d, epsilon, n, stderr, rmse, report_bits, parameters, auto.
ldp_plan <- function(d = NULL, epsilon = NULL, n = NULL, stderr = NULL, mechanism = "all", low = NULL, high = NULL,
                     shuffle = NULL, delta = NULL) {
  if (!is.null(shuffle) && is.null(delta)) stop(.condition("a plan with shuffle = needs delta =", "error"))
  rows <- .recycle(list(d = d, epsilon = epsilon, n = n, stderr = stderr, mechanism = mechanism, low = low,
                        high = high, shuffle = shuffle, delta = delta), whole = c("d", "n"))
  plans <- lapply(rows, function(one) {
    if (!is.null(one$shuffle))  # the n or epsilon0 that a central epsilon after shuffling needs
      return(.call("plan_shuffle", one[intersect(names(one), c("shuffle", "delta", "epsilon", "n", "d",
                                                                   "mechanism"))]))
    .call("plan", one)
  })
  if (length(plans) == 1) return(plans[[1]])
  table <- do.call(rbind, plans)
  rownames(table) <- NULL
  table
}

# -- results as R objects -------------------------------------------------------------------

# The estimate as a data.frame computed from the object's values (dims, estimate, stderr, lower, upper).
.estimate_table <- function(x) {
  dn <- dimnames(x)
  table <- if (is.null(dn) && length(x) == 1) data.frame(estimate = as.vector(unclass(x))) else {
    grid <- if (is.null(dn)) data.frame(index = seq_along(x)) else
      expand.grid(lapply(dn, function(v) { n <- suppressWarnings(as.numeric(v)); if (anyNA(n)) v else n }),
                  KEEP.OUT.ATTRS = FALSE, stringsAsFactors = FALSE)
    data.frame(grid, estimate = as.vector(unclass(x)))
  }
  for (name in c("stderr", "lower", "upper")) {
    value <- attr(x, name)
    if (!is.null(value)) table[[name]] <- as.vector(value)
  }
  names(table)[names(table) == "estimate"] <- if (is.null(attr(x, "estimate_variable"))) "estimate" else
    attr(x, "estimate_variable")
  rownames(table) <- NULL
  table
}

.estimate_name <- function(x) if (is.null(attr(x, "estimate_variable"))) "estimate" else attr(x, "estimate_variable")

# The estimate the intervals describe (results written before the attribute: the unprojected one).
.interval_estimate <- function(x) {
  for (name in c("interval_estimate", "stderr_of")) if (!is.null(attr(x, name))) return(attr(x, name))
  if (!is.null(attr(x, "unprojected"))) "unprojected" else .estimate_name(x)
}

print.ldp_estimate <- function(x, digits = 4, ...) {
  cat(sprintf("%s from %s (epsilon = %g, n = %d, projection = %s)\n", attr(x, "estimator"),
              attr(x, "mechanism"), attr(x, "epsilon"), as.integer(attr(x, "n")), attr(x, "projection")))
  table <- .estimate_table(x)
  covers <- .interval_estimate(x)
  beside <- !identical(covers, .estimate_name(x)) && !is.null(attr(x, covers))
  if (beside) {  # the estimate the stderr and intervals describe, printed beside the one shown
    at <- match(.estimate_name(x), names(table))
    table <- data.frame(table[seq_len(at)], stats::setNames(list(as.vector(attr(x, covers))), covers),
                        table[-seq_len(at)], check.names = FALSE)
  }
  if (!is.null(attr(x, "confidence_level"))) {
    cat(sprintf("stderr and lower/upper (a %g%% interval, %s) describe %s\n", 100 * attr(x, "confidence_level"),
                attr(x, "interval_method"),
                if (!beside) sprintf("the %s", covers) else
                  sprintf("the %s estimate (its column; the %s is its projection)", covers, .estimate_name(x))))
  }
  if (!is.null(attr(x, "na_removed"))) cat(sprintf("%d report(s) holding NA removed (na.rm = TRUE)\n",
                                                   as.integer(attr(x, "na_removed"))))
  if (!is.null(attr(x, "units")) && !identical(attr(x, "units"), "1"))
    cat(sprintf("units: %s\n", attr(x, "units")))
  print(utils::head(table, 40), row.names = FALSE, digits = digits)
  if (nrow(table) > 40) cat(sprintf("... (%d more rows)\n", nrow(table) - 40))
  invisible(x)
}

as.data.frame.ldp_estimate <- function(x, row.names = NULL, optional = FALSE, ...) .estimate_table(x)

summary.ldp_estimate <- function(object, ...) {
  structure(list(table = .estimate_table(object), attrs = attributes(object)[c("estimator", "mechanism", "epsilon",
                                                                                 "n", "projection")]),
            class = "summary.ldp_estimate")
}

print.summary.ldp_estimate <- function(x, ...) {
  a <- x$attrs
  cat(sprintf("Estimate by %s from %d reports of %s at epsilon = %g (projection %s)\n\n", a$estimator,
              as.integer(a$n), a$mechanism, a$epsilon, a$projection))
  print(x$table, row.names = FALSE, digits = 4)
  invisible(x)
}

nobs.ldp_estimate <- function(object, ...) as.integer(attr(object, "n"))

coef.ldp_estimate <- function(object, ...) {
  if (!is.null(attr(object, "coefficient"))) return(as.vector(attr(object, "coefficient")))
  values <- as.vector(unclass(object))
  dn <- dimnames(object)
  if (length(dn) == 1) names(values) <- dn[[1]]
  if (length(dn) > 1) names(values) <- do.call(paste, c(expand.grid(dn, stringsAsFactors = FALSE), sep = ":"))
  values
}

confint.ldp_estimate <- function(object, parm, level = 0.95, ...) {
  same <- !is.null(attr(object, "confidence_level")) && isTRUE(all.equal(level, attr(object, "confidence_level")))
  source <- if (same) object else .call("interval", list(result_json = attr(object, "result_json"), level = level))
  bounds <- cbind(as.vector(attr(source, "lower")), as.vector(attr(source, "upper")))
  colnames(bounds) <- sprintf("%g %%", 100 * c((1 - level) / 2, (1 + level) / 2))
  labels <- names(coef.ldp_estimate(structure(unclass(object), coefficient = NULL)))
  rownames(bounds) <- if (is.null(labels)) .estimate_name(object) else labels
  if (!missing(parm)) bounds <- bounds[parm, , drop = FALSE]
  bounds
}

# Arithmetic and rounding give plain labelled arrays: the standard errors would no longer fit.
.plain <- function(x) {
  if (!inherits(x, "ldp_estimate")) return(x)
  keep <- attributes(x)[intersect(names(attributes(x)), c("dim", "dimnames", "names"))]
  x <- unclass(x)
  attributes(x) <- keep
  x
}

Ops.ldp_estimate <- function(e1, e2) {
  if (missing(e2)) return(get(.Generic)(.plain(e1)))
  get(.Generic)(.plain(e1), .plain(e2))
}

Math.ldp_estimate <- function(x, ...) get(.Generic)(.plain(x), ...)

print.ldp_estimates <- function(x, ...) {
  for (group in names(x)) {
    cat(sprintf("== %s\n", group))
    print(x[[group]], ...)
  }
  invisible(x)
}

as.data.frame.ldp_estimates <- function(x, row.names = NULL, optional = FALSE, ...) {
  parts <- lapply(names(x), function(group) data.frame(group = group, .estimate_table(x[[group]])))
  do.call(rbind, parts)
}

print.ldp_reports <- function(x, ...) {
  n <- if (is.matrix(x$values)) nrow(x$values) else length(x$values)
  cat(sprintf("<ldp_reports: %d reports%s of %s, epsilon = %g%s>\n", n,
              if (is.null(x$variable)) "" else sprintf(" of '%s'", x$variable), x$mechanism, x$epsilon,
              if (is.null(x$na_removed)) "" else sprintf("; %d record(s) holding NA removed", x$na_removed)))
  invisible(x)
}

# -- accounting: what a shuffler gives (docs/accounting.md) ------------------------------------

#' The central (epsilon, delta) of n shuffled reports: of a mechanism (its name and parameters,
#' e.g. categories), or of any epsilon-LDP randomiser when mechanism is NULL.
ldp_shuffle_epsilon <- function(epsilon, n, delta, mechanism = NULL, ...) {
  for (arg in c("epsilon", "n", "delta")) {
    value <- get(arg)
    if (!is.numeric(value) || length(value) != 1 || is.na(value))
      stop(.condition(sprintf("%s must be one number, got %s", arg, deparse(value)), "error"))
  }
  .call("shuffle", list(epsilon = epsilon, n = n, delta = delta, mechanism = mechanism, params = list(...)))
}

print.ldp_shuffle <- function(x, ...) {
  cat(sprintf("%s shuffled reports of %s (epsilon0 = %g) are (%.6g, %g)-DP: %s\n",
              format(x$n, big.mark = ","), x$mechanism, x$epsilon0, x$epsilon, x$delta, x$method))
  if (!is.null(x$lower)) cat(sprintf("  and no better than epsilon %.6g (%s)\n", x$lower, x$lower_method))
  print(x$bounds[, c("bound", "lower", "upper")], row.names = FALSE)
  invisible(x)
}
