#!/usr/bin/env bash
# Each exported R function run the way R users start R: a bare `Rscript --vanilla` (and once
# `R --vanilla -f`) with nothing else loaded and only R_LIBS, LDPEST_PYTHON and a UTF-8 LANG set (issue 13: the
# first documented call used to abort R with "PyThreadState_Get ... GIL is released").
# With --install, also install_ldpest() into a fresh R library and user folder, then a session
# that finds the environment without any variable.  Exits non-zero on the first failure.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
failures=0

bare() {  # bare NAME EXPECTED CODE: run CODE in a clean Rscript; stdout must contain EXPECTED
  local name=$1 expected=$2 code=$3 out status
  out=$(cd "$SCRATCH" && env -i PATH=/usr/bin:/bin HOME="$SCRATCH" LANG=C.UTF-8 R_LIBS="$ROOT/.rlib" \
        LDPEST_PYTHON="$ROOT/.venv/bin/python" Rscript --vanilla -e "library(ldpest); $code" 2>&1)
  status=$?
  if [ $status -ne 0 ] || ! grep -qF -- "$expected" <<<"$out"; then
    echo "R smoke FAILED: $name (exit $status)"; echo "$out" | tail -15; failures=$((failures + 1))
  else
    echo "R smoke ok: $name"
  fi
}

printf 'answer\nyes\nno\nno\n' > "$SCRATCH/answers.csv"
bare ldp_plugins "randomized-response" 'print(ldp_plugins()$name)'
bare ldp_python "python" 'cat(ldp_python(), "\n")'
bare ldp_privatize "ldp_reports: 4 reports" 'print(ldp_privatize(c("a", "b", "b", "a"), "randomized-response", epsilon = 1, categories = c("a", "b")))'
bare ldp_estimate "frequency from randomized-response" 'print(suppressWarnings(ldp_estimate(c("a", "b", "b"), mechanism = "randomized-response", epsilon = 1, categories = c("a", "b"))))'
bare "methods" "97.5 %" 'p <- suppressWarnings(ldp_estimate(factor(c("a", "b", "b")), mechanism = "randomized-response", epsilon = 1)); print(summary(p)); print(coef(p)); print(as.data.frame(p)); grDevices::pdf(NULL); plot(p); print(confint(p, level = 0.9)); print(confint(p))'
bare ldp_plan "subset-selection" 'print(ldp_plan(d = 10, epsilon = 1, stderr = 0.01))'
bare ldp_shuffle_epsilon "DP" 'print(ldp_shuffle_epsilon(4, n = 1e5, delta = 1e-6))'
bare ldp_simulate "mean_error" 'print(ldp_simulate("randomized-response", epsilon = 1, n = c(1e3, 1e6), categories = c("a", "b"), reps = 3))'
bare ldp_ledger "2026-12-04" 'r <- ldp_privatize(c("a", "b"), "l-grr", epsilon = 1, epsilon_inf = 3, categories = c("a", "b"), users = c("u1", "u2"), state = "state.json", ledger = "ledger.json", budget = 16, at = "2026-12-04"); print(ldp_ledger("ledger.json"))'
"$ROOT/.venv/bin/ldpest" privatize "$SCRATCH/answers.csv" -c answer -m randomized-response -e 1 --categories yes,no \
  -o "$SCRATCH/reports.csv" --no-progress 2>/dev/null
bare ldp_read "ldp_reports: 3 reports" "print(ldp_read(\"$SCRATCH/reports.csv\"))"
bare "errors are R conditions" "ldpest_error" 'r <- tryCatch(ldp_plan(d = 1, epsilon = 1, n = 10), error = function(e) class(e)); print(r)'

# docs/r-guide.md, its R blocks in order, in one bare session
awk '/^```r$/ {on = 1; next} /^```$/ {on = 0} on' docs/r-guide.md > "$SCRATCH/guide.R"
if out=$(cd "$SCRATCH" && env -i PATH=/usr/bin:/bin HOME="$SCRATCH" LANG=C.UTF-8 R_LIBS="$ROOT/.rlib" \
         LDPEST_PYTHON="$ROOT/.venv/bin/python" Rscript --vanilla guide.R 2>&1); then
  echo "R smoke ok: docs/r-guide.md"
else
  echo "R smoke FAILED: docs/r-guide.md"; echo "$out" | tail -15; failures=$((failures + 1))
fi

printf 'library(ldpest)\nprint(ldp_plugins()$name)\n' > "$SCRATCH/script.R"
if out=$(cd "$SCRATCH" && env -i PATH=/usr/bin:/bin HOME="$SCRATCH" LANG=C.UTF-8 R_LIBS="$ROOT/.rlib" \
         LDPEST_PYTHON="$ROOT/.venv/bin/python" R --vanilla --quiet -f script.R 2>&1) && grep -q laplace <<<"$out"; then
  echo "R smoke ok: R --vanilla -f"
else
  echo "R smoke FAILED: R --vanilla -f"; echo "$out" | tail -15; failures=$((failures + 1))
fi

if [ "${1:-}" = "--install" ]; then
  # a fresh R library and user data folder; install_ldpest() makes the Python environment from this checkout
  mkdir -p "$SCRATCH/rlib" "$SCRATCH/data"
  R CMD INSTALL --no-test-load --library="$SCRATCH/rlib" r-bindings >/dev/null 2>&1
  fresh() {  # the caller's environment (pip's index settings) without any pointer to a Python
    env -u LDPEST_PYTHON -u RETICULATE_PYTHON -u VIRTUAL_ENV -u PYTHONPATH LANG=C.UTF-8 R_LIBS="$SCRATCH/rlib" \
      R_USER_DATA_DIR="$SCRATCH/data" Rscript --vanilla -e "$1" 2>&1
  }
  base_python=$("$ROOT/.venv/bin/python" -c "import sys; print(sys._base_executable)")
  if out=$(fresh "ldpest::install_ldpest(source = \"$ROOT\", python = \"$base_python\")"); then
    echo "R smoke ok: install_ldpest()"
  else
    echo "R smoke FAILED: install_ldpest()"; echo "$out" | tail -20; failures=$((failures + 1))
  fi
  out=$(fresh 'library(ldpest); cat(ldp_python(), "\n"); print(ldp_plugins()$name)')
  if grep -q "$SCRATCH/data" <<<"$out" && grep -q "randomized-response" <<<"$out"; then
    echo "R smoke ok: a new session finds the environment without LDPEST_PYTHON"
  else
    echo "R smoke FAILED: a new session after install_ldpest()"; echo "$out" | tail -20; failures=$((failures + 1))
  fi
fi

echo "R smoke: $failures failure(s)"
[ "$failures" -eq 0 ]
