# What R users pass: formulas with data =, one-column data.frames and tibbles, factors with
# unused levels, NA (refused, or dropped with na.rm = TRUE), and vectors of plan arguments.

#' @noRd
# The variables of a one-sided formula, read from data (then from the formula's environment):
# ~ answer gives answer; ~ age + income a data.frame of both columns; ~ answer | region also the
# groups. Returns list(x, variable, by).
.formula_data <- function(formula, data) {
  if (length(formula) != 2)
    stop(.condition(sprintf("the formula must be one-sided, e.g. ~ answer | region; got %s",
                            paste(deparse(formula), collapse = " ")), "error"))
  if (!is.null(data) && !is.data.frame(data) && !is.list(data))
    stop(.condition(sprintf("data must be a data.frame (or a list of columns), got %s", class(data)[1]), "error"))
  rhs <- formula[[2]]
  groups <- NULL
  if (is.call(rhs) && identical(rhs[[1]], as.name("|"))) {
    groups <- rhs[[3]]
    rhs <- rhs[[2]]
  }
  terms <- list()
  while (is.call(rhs) && identical(rhs[[1]], as.name("+"))) {
    terms <- c(list(rhs[[3]]), terms)
    rhs <- rhs[[2]]
  }
  terms <- c(list(rhs), terms)
  env <- environment(formula)
  fetch <- function(expr) {
    name <- paste(deparse(expr), collapse = " ")
    tryCatch(eval(expr, data, env), error = function(e) {
      columns <- if (is.null(data)) "no data = given" else
        sprintf("the columns of data are: %s", paste(names(data), collapse = ", "))
      stop(.condition(sprintf("the formula names '%s', which is not a column of data (%s)", name, columns), "error"))
    })
  }
  values <- lapply(terms, fetch)
  names(values) <- vapply(terms, function(t) paste(deparse(t), collapse = " "), "")
  x <- if (length(values) == 1) values[[1]] else as.data.frame(values, check.names = FALSE, stringsAsFactors = FALSE)
  list(x = x, variable = if (length(values) == 1) names(values) else NULL,
       by = if (is.null(groups)) NULL else fetch(groups))
}

# Design weights as lm() takes them: an expression evaluated in data (a column), a column's name,
# or a numeric vector; NULL for none.
.weights <- function(expr, data, env) {
  if (is.null(expr)) return(NULL)
  value <- tryCatch(eval(expr, data, env), error = function(e)
    stop(.condition(sprintf("weights: '%s' is neither a column of data nor a variable", deparse(expr)), "error")))
  if (is.character(value) && length(value) == 1 && !is.null(data) && value %in% names(data)) value <- data[[value]]
  if (!is.numeric(value))
    stop(.condition(sprintf("weights must be numbers (one per report), got %s", class(value)[1]), "error"))
  value
}

# TRUE for each record (element, or row of a matrix / data.frame) that holds no NA.
.complete <- function(x) {
  if (is.data.frame(x) || is.matrix(x)) stats::complete.cases(x) else !is.na(x)
}

# Records (and the per-record vectors given with them) without NA: refused unless na.rm = TRUE.
.drop_na <- function(x, what, na.rm, ...) {
  keep <- .complete(x)
  extra <- list(...)
  for (v in extra) if (!is.null(v) && length(v) == length(keep)) keep <- keep & !is.na(v)
  if (all(keep)) return(c(list(x = x, removed = 0L), extra))
  if (!isTRUE(na.rm)) {
    first <- which(!keep)[1]
    stop(.condition(sprintf("%s: %d record(s) hold NA (first at record %d); give na.rm = TRUE to drop them",
                            what, sum(!keep), first), "error"))
  }
  x <- if (is.data.frame(x) || is.matrix(x)) x[keep, , drop = FALSE] else x[keep]
  extra <- lapply(extra, function(v) if (is.null(v) || length(v) != length(keep)) v else v[keep])
  c(list(x = x, removed = sum(!keep)), extra)
}

# A one-column data.frame (or tibble) of labels is that column; several columns must be numbers
# (one per dimension of a histogram). Returns list(x, variable).
.one_variable <- function(x) {
  if (!is.data.frame(x)) return(list(x = x, variable = NULL))
  if (ncol(x) == 1 && !is.numeric(x[[1]])) return(list(x = x[[1]], variable = names(x)))
  labels <- names(x)[!vapply(x, is.numeric, TRUE)]
  if (length(labels) > 0)
    stop(.condition(sprintf(paste("a data.frame of %d columns must hold numbers (one column per dimension of a",
                                  "histogram); column '%s' holds %s: privatise one column of labels at a time,",
                                  "e.g. ~ %s"), ncol(x), labels[1], class(x[[labels[1]]])[1], labels[1]), "error"))
  list(x = x, variable = NULL)
}

# The category dim of a result named after the variable it counts (the x-axis of its plot).
.name_variable <- function(result, variable) {
  if (is.null(variable)) return(result)
  if (inherits(result, "ldp_estimates")) return(structure(lapply(result, .name_variable, variable),
                                                           names = names(result), class = class(result)))
  dn <- dimnames(result)
  if (length(dn) != 1 || !identical(names(dn), "category")) return(result)
  for (name in names(attributes(result))) {  # the value and every attribute labelled like it
    value <- attr(result, name)
    if (identical(dimnames(value), dn)) {
      names(dimnames(value)) <- variable
      attr(result, name) <- value
    }
  }
  names(dimnames(result)) <- variable
  result
}

# Arguments of ldp_plan as R functions take them: each a vector, recycled to the longest; whole
# numbers where a count is meant. Returns one list of scalars per row.
.recycle <- function(args, whole) {
  args <- args[!vapply(args, is.null, TRUE)]
  for (name in names(args)) {
    value <- args[[name]]
    if (length(value) == 0 || anyNA(value))
      stop(.condition(sprintf("%s must be values without NA, got %s", name, deparse(value)), "error"))
    if (name %in% whole && (!is.numeric(value) || any(value != round(value))))
      stop(.condition(sprintf("%s must be whole numbers, got %s", name, deparse(value)), "error"))
  }
  size <- max(lengths(args))
  uneven <- names(args)[!lengths(args) %in% c(1, size)]
  if (length(uneven) > 0)
    stop(.condition(sprintf("%s has %d values and another argument %d: give each argument one value or %d",
                            uneven[1], length(args[[uneven[1]]]), size, size), "error"))
  lapply(seq_len(size), function(i) lapply(args, function(a) a[[if (length(a) == 1) 1 else i]]))
}
