# broom's conventions, as methods for the generics package's tidy(), glance() and augment()
# (registered when generics is installed; broom accepts no new tidiers).

# The label of each value of x: its category, cell centres joined by ":", or the estimate's name.
.terms <- function(x) {
  dn <- dimnames(x)
  if (is.null(dn)) return(if (length(x) == 1) .estimate_name(x) else as.character(seq_along(x)))
  if (length(dn) == 1) return(dn[[1]])
  do.call(paste, c(expand.grid(dn, stringsAsFactors = FALSE, KEEP.OUT.ATTRS = FALSE), sep = ":"))
}

#' Tidy an ldpest estimate
#'
#' One row per value: term (the category or cell), the input's dims (named after its columns),
#' estimate (as printed: after the projection, if any), the estimate the standard error and the
#' interval describe when it differs (the unprojected one, a column of its own), std.error,
#' conf.low and conf.high.
#' @param x an "ldp_estimate" (or "ldp_estimates": one block of rows per group).
#' @param conf.int include conf.low and conf.high.
#' @param conf.level the level of the interval (default: the estimate's own; another is recomputed
#'   exactly where the estimate's was).
#' @return a data.frame.
tidy.ldp_estimate <- function(x, conf.int = TRUE, conf.level = NULL, ...) {
  table <- .estimate_table(x)
  value <- .estimate_name(x)
  dims <- names(table)[seq_len(match(value, names(table)) - 1)]
  out <- data.frame(term = .terms(x), table[dims], estimate = table[[value]], check.names = FALSE,
                    stringsAsFactors = FALSE)
  covers <- .interval_estimate(x)
  projected <- !is.null(attr(x, "projection")) && !identical(attr(x, "projection"), "none")
  if (!identical(covers, value) && !is.null(attr(x, covers)) && projected) out[[covers]] <- as.vector(attr(x, covers))
  out$std.error <- table$stderr
  if (isTRUE(conf.int)) {
    level <- if (is.null(conf.level)) attr(x, "confidence_level") else conf.level
    bounds <- if (is.null(conf.level)) cbind(table$lower, table$upper) else confint(x, level = conf.level)
    out$conf.low <- as.vector(bounds[, 1])
    out$conf.high <- as.vector(bounds[, 2])
  }
  rownames(out) <- NULL
  out
}

tidy.ldp_estimates <- function(x, ...) {
  rows <- lapply(names(x), function(group) data.frame(group = group, tidy.ldp_estimate(x[[group]], ...),
                                                      check.names = FALSE, stringsAsFactors = FALSE))
  do.call(rbind, rows)
}

#' One row describing an ldpest estimate: estimator, mechanism, epsilon, nobs, projection,
#' conf.level and interval.method (and, for grouped estimates, one row per group).
glance.ldp_estimate <- function(x, ...) {
  text <- function(name) if (is.null(attr(x, name))) NA_character_ else as.character(attr(x, name))
  data.frame(estimator = text("estimator"), mechanism = text("mechanism"), epsilon = attr(x, "epsilon"),
             nobs = nobs(x), projection = text("projection"),
             conf.level = if (is.null(attr(x, "confidence_level"))) NA_real_ else attr(x, "confidence_level"),
             interval.method = text("interval_method"),
             na.removed = if (is.null(attr(x, "na_removed"))) 0L else as.integer(attr(x, "na_removed")),
             stringsAsFactors = FALSE)
}

glance.ldp_estimates <- function(x, ...) {
  do.call(rbind, lapply(names(x), function(group) data.frame(group = group, glance.ldp_estimate(x[[group]]),
                                                             stringsAsFactors = FALSE)))
}

#' The estimate at each row of newdata
#'
#' An estimate from privatised reports has no fitted value per report (each report is noise);
#' augment() instead looks up, for each row of newdata, the category or histogram cell its
#' values fall in and adds .fitted (the estimate, as printed), .se.fit, .lower and .upper (the
#' interval of the estimate the standard error describes). Rows in no category or cell get NA.
#' @param x an "ldp_estimate" over categories or histogram cells.
#' @param newdata a data.frame with a column for each of the estimate's dims.
augment.ldp_estimate <- function(x, newdata = NULL, ...) {
  if (is.null(newdata))
    stop(.condition(paste("augment() needs newdata: an estimate from privatised reports has no fitted value per",
                          "report, so it gives the estimate at each row of newdata"), "error"))
  dn <- dimnames(x)
  if (is.null(dn)) stop(.condition("augment() needs an estimate over categories or cells (this one is a single value)",
                                   "error"))
  if (is.null(attr(x, "cell_volume")) && length(dn) == 1 && .plot_shape(x)$kind == "curve")
    stop(.condition(paste("augment() looks values up in categories or histogram cells; this estimate is a curve on",
                          "a grid: estimate it on the points you need (estimator_params = list(grid = ...))"), "error"))
  newdata <- as.data.frame(newdata)
  missing <- setdiff(names(dn), names(newdata))
  if (length(missing) > 0)
    stop(.condition(sprintf("newdata has no column '%s' (the estimate's dims are: %s)", missing[1],
                            paste(names(dn), collapse = ", ")), "error"))
  position <- lapply(names(dn), function(dim) {
    labels <- dn[[dim]]
    if (!is.null(attr(x, "cell_volume"))) {  # histogram cells: the cell each number falls in
      edges <- .cell_edges(as.numeric(labels))
      cell <- findInterval(newdata[[dim]], edges, rightmost.closed = TRUE)
      cell[cell < 1 | cell > length(labels)] <- NA
      cell
    } else {
      match(as.character(newdata[[dim]]), labels)
    }
  })
  strides <- cumprod(c(1, lengths(dn)))[seq_along(dn)]  # column-major, as R stores arrays
  index <- 1 + Reduce(`+`, Map(function(p, stride) (p - 1) * stride, position, strides))
  pick <- function(values) as.vector(values)[index]
  newdata$.fitted <- pick(unclass(x))
  newdata$.se.fit <- pick(attr(x, "stderr"))
  newdata$.lower <- pick(attr(x, "lower"))
  newdata$.upper <- pick(attr(x, "upper"))
  newdata
}
