# One dispatcher for every call: the arguments go into .bridge, Python reads
# them with rpy2 and writes .bridge$result (or .bridge$error). Only the call's
# name crosses reticulate.
.bridge <- new.env(parent = emptyenv())

#' Which Python ldpest uses
#'
#' The environment made by install_ldpest(), found without any setting; or the
#' python named by the environment variable LDPEST_PYTHON (or RETICULATE_PYTHON),
#' set before the first call.
#' @return the path of the Python interpreter in use.
ldp_python <- function() {
  .ensure_python()
  reticulate::py_config()$python
}

.ensure_python <- function() {
  if (!is.null(.bridge$dispatch) || isTRUE(.bridge$ready)) return(invisible(TRUE))
  # rpy2 loads the 'tools' namespace when it is imported; loading a namespace while R is inside a
  # reticulate call aborts the process ("PyThreadState_Get ... GIL is released") in a bare
  # Rscript --vanilla, so it is loaded here first (tests: scripts/test-r-smoke.sh)
  loadNamespace("tools")
  python <- Sys.getenv("LDPEST_PYTHON", Sys.getenv("RETICULATE_PYTHON", ""))
  if (!nzchar(python) && file.exists(.default_python())) python <- .default_python()
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
  for (message in .bridge$warnings) warning(.condition(message, "warning"))
  if (!is.null(.bridge$error)) stop(.condition(.bridge$error, "error"))
  .bridge$result
}

# One R condition per Python error or warning, with the Python message only (class ldpest_error
# or ldpest_warning, so tryCatch(..., ldpest_error = ) can single them out).
.condition <- function(message, kind) {
  structure(class = c(paste0("ldpest_", kind), kind, "condition"),
            list(message = paste0("ldpest: ", message), call = NULL))
}

.check_no_na <- function(x, what) {
  if (anyNA(x)) stop(.condition(sprintf("%s: %d value(s) are NA (first at element %d)", what, sum(is.na(x)),
                                        which(is.na(x))[1]), "error"))
  invisible(x)
}

.default_env <- function() file.path(tools::R_user_dir("ldpest", "data"), "python")
.default_python <- function() file.path(.default_env(), "bin", "python")

#' Create (or reuse) the Python environment ldpest needs
#'
#' Makes a virtual environment with the Python package ldpest and rpy2 (the
#' versions that work with this R) in \code{envdir}, where later sessions find it
#' without any environment variable. Run it once after installing the R package.
#' @param source where pip takes ldpest from: a source folder or archive of the
#'   Python package (the repository's root), or "ldpest" for the package index.
#' @param envdir the environment's folder (default: the user data folder of R).
#' @param python the Python (3.11 or later) that creates the environment.
#' @return the environment's python, invisibly.
install_ldpest <- function(source = "ldpest", envdir = .default_env(), python = Sys.which("python3")) {
  if (!nzchar(python)) stop(.condition("no python3 found: give install_ldpest(python = ...)", "error"))
  target <- file.path(envdir, "bin", "python")
  run <- function(command, args) {
    # R's LD_LIBRARY_PATH (its ldpaths) would make this python load the system's libpython
    status <- system2(command, args, env = "LD_LIBRARY_PATH=")
    if (status != 0) stop(.condition(sprintf("'%s %s' failed (exit %d)", command,
                                             paste(args, collapse = " "), status), "error"))
  }
  if (!file.exists(target)) {
    dir.create(dirname(envdir), recursive = TRUE, showWarnings = FALSE)
    run(python, c("-m", "venv", shQuote(envdir)))
  }
  requirement <- if (dir.exists(source)) paste0(normalizePath(source), "[r]") else paste0(source, "[r]")
  run(target, c("-m", "pip", "install", "--quiet", "--disable-pip-version-check", shQuote(requirement)))
  message("ldpest: Python environment ready at ", envdir)
  invisible(target)
}
