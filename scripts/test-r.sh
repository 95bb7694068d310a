#!/usr/bin/env bash
# R tests: testthat through plain Rscript, as an R user would call ldpest.
# The example third-party plugin is pip-installed into a scratch folder on
# PYTHONPATH so that the test that R sees it runs. Any failure or skip fails.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
"$ROOT/.venv/bin/python" -m pip install --quiet --no-deps --no-build-isolation --no-index \
  --target "$SCRATCH/site" plugins/ldpest-oue plugins/ldpest-one-bit-mean
export PYTHONPATH="$SCRATCH/site${PYTHONPATH:+:$PYTHONPATH}"
# NOT_CRAN: run the picture snapshots (vdiffr skips them otherwise, and a skip fails this script)
export LDPEST_PYTHON="$ROOT/.venv/bin/python" LDPEST_EXPECT_OUE=1 R_LIBS="$ROOT/.rlib" NOT_CRAN=true
cd r-bindings/tests
Rscript -e '
  library(testthat); library(ldpest)
  res <- as.data.frame(test_dir("testthat", reporter = "summary", stop_on_failure = FALSE))
  failed <- sum(res$failed) + sum(res$error); skipped <- sum(res$skipped)
  cat(sprintf("R: %d passed, %d failed, %d skipped\n", sum(res$passed), failed, skipped))
  if (failed > 0 || skipped > 0 || sum(res$passed) == 0) quit(status = 1)
'

# Each exported function from a bare Rscript / R -f, and install_ldpest() into a fresh library.
bash "$ROOT/scripts/test-r-smoke.sh" --install

# The package as CRAN would check it (offline; no LaTeX here, so no manual).
cd "$SCRATCH"
R CMD build "$ROOT/r-bindings" >/dev/null
R CMD check --no-manual --quiet ldpest_*.tar.gz > check.log 2>&1 || { cat check.log; exit 1; }
grep -q "^Status: OK" ldpest.Rcheck/00check.log || { cat ldpest.Rcheck/00check.log; exit 1; }
echo "R CMD check: Status OK"
