# One dispatcher for every call: the arguments go into .bridge, Python reads
# them with rpy2 and writes .bridge$result (or .bridge$error). Only the call's
# name crosses reticulate.
.bridge <- new.env(parent = emptyenv())

#' Which Python ldpest uses
#'
#' Set the environment variable LDPEST_PYTHON (or RETICULATE_PYTHON) to the
#' python of an environment where ldpest[r] is installed, before the first call.
#' @return the path of the Python interpreter in use.
ldp_python <- function() {
  .ensure_python()
  reticulate::py_config()$python
}

.ensure_python <- function() {
  if (!is.null(.bridge$dispatch) || isTRUE(.bridge$ready)) return(invisible(TRUE))
  python <- Sys.getenv("LDPEST_PYTHON", Sys.getenv("RETICULATE_PYTHON", ""))
  if (nzchar(python)) Sys.setenv(RETICULATE_PYTHON = python)
  # reticulate mistakes any pyproject.toml in the working directory for a Poetry project
  module <- tryCatch(suppressWarnings(reticulate::import("ldpest.rbridge", convert = FALSE)),
                     error = function(e) stop("ldpest: cannot import the Python package ldpest.rbridge (",
                                              conditionMessage(e), "); set LDPEST_PYTHON to a python with ldpest[r]",
                                              call. = FALSE))
  .bridge$module <- module
  .bridge$ready <- TRUE
  invisible(TRUE)
}

.call <- function(name, args) {
  .ensure_python()
  .bridge$args <- args
  .bridge$result <- NULL
  .bridge$error <- NULL
  on.exit(.bridge$args <- NULL, add = TRUE)
  if (!is.null(.bridge$dispatch)) {
    .bridge$dispatch(name)           # Python started first (rpy2's rternalize)
  } else {
    suppressWarnings(.bridge$module$dispatch(name))  # R started first (reticulate)
  }
  if (!is.null(.bridge$error)) stop(.bridge$error, call. = FALSE)
  .bridge$result
}

.check_no_na <- function(x, what) {
  if (anyNA(x)) stop(sprintf("%s: %d value(s) are NA", what, sum(is.na(x))), call. = FALSE)
  invisible(x)
}
