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
bare "formula and data =" "== north" 'df <- data.frame(answer = rep(c("a", "b", "b"), 400), region = rep(c("north", "south"), 600)); r <- ldp_privatize(~ answer, data = df, "randomized-response", epsilon = 2, categories = c("a", "b"), seed = 1); print(r); g <- ldp_estimate(~ report | region, data = data.frame(report = r$values, region = df$region), mechanism = "randomized-response", epsilon = 2, categories = c("a", "b")); print(g); print(as.data.frame(g)); print(generics::tidy(g)); print(generics::glance(g))'
bare "tidy, glance, augment, nobs" "conf.high" 'p <- ldp_estimate(ldp_privatize(rep(c("a", "b", "b"), 400), "randomized-response", epsilon = 2, categories = c("a", "b"), seed = 1)); print(nobs(p)); print(generics::tidy(p)); print(generics::glance(p)); print(generics::augment(p, newdata = data.frame(category = c("a", "b")))); print(round(p * 100)); print(sqrt(p))'
# every kind of picture, base and ggplot2, written to PNG and checked to be non-empty
bare "pictures to PNG" "pictures: 14 non-empty PNG files" '
  ages <- data.frame(age = seq(18, 89, length.out = 2000), income = rep(c(25, 60), 1000))
  x <- list(bars = ldp_estimate(ldp_privatize(rep(c("a", "b", "b"), 400), "randomized-response", epsilon = 1, categories = c("a", "b"), seed = 1)),
            cells = ldp_estimate(ldp_privatize(ages["age"], "laplace-histogram", epsilon = 1, low = 18, high = 90, bins = 6, seed = 2)),
            map = ldp_estimate(ldp_privatize(ages, "laplace-histogram", epsilon = 1, low = c(18, 0), high = c(90, 100), bins = c(4, 3), seed = 3)),
            curve = ldp_estimate(ldp_privatize(seq(0.01, 0.99, length.out = 500), "linf-sampling", epsilon = 1, basis = "trigonometric", k = 3, seed = 4)),
            mean = ldp_estimate(ldp_privatize(rep(c(-0.5, 0.5), 500), "duchi", epsilon = 1, low = -1, high = 1, seed = 5)),
            grouped = ldp_estimate(ldp_privatize(rep(c("a", "b", "b"), 400), "randomized-response", epsilon = 1, categories = c("a", "b"), seed = 6), by = rep(c("n", "s"), 600)),
            simulation = ldp_simulate("randomized-response", epsilon = c(1, 2), n = c(1e3, 1e4), categories = c("a", "b"), reps = 3))
  sizes <- c()
  for (kind in names(x)) {
    file <- sprintf("%s.png", kind); grDevices::png(file, width = 900, height = 450); plot(x[[kind]]); grDevices::dev.off()
    gg <- sprintf("gg-%s.png", kind); ggplot2::ggsave(gg, ggplot2::autoplot(x[[kind]]), width = 7, height = 4, dpi = 72)
    sizes <- c(sizes, file.size(file), file.size(gg))
  }
  if (all(sizes > 3000)) cat(sprintf("pictures: %d non-empty PNG files\n", length(sizes))) else print(sizes)'
bare "errors are R conditions" "ldpest_error" 'r <- tryCatch(ldp_plan(d = 1, epsilon = 1, n = 10), error = function(e) class(e)); print(r)'

# docs/r-guide.md and r-bindings/README.md, each page's R blocks in order, in one bare session
for page in docs/r-guide.md r-bindings/README.md; do
  awk '/^```r$/ {on = 1; next} /^```$/ {on = 0} on' "$page" > "$SCRATCH/page.R"
  if out=$(cd "$SCRATCH" && env -i PATH=/usr/bin:/bin HOME="$SCRATCH" LANG=C.UTF-8 R_LIBS="$ROOT/.rlib" \
           LDPEST_PYTHON="$ROOT/.venv/bin/python" Rscript --vanilla page.R 2>&1); then
    echo "R smoke ok: $page"
  else
    echo "R smoke FAILED: $page"; echo "$out" | tail -15; failures=$((failures + 1))
  fi
done

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
  "$ROOT/.venv/bin/python" -c "import sys, ldpest
ldpest.mechanism('randomized-response', epsilon=1, categories=['yes', 'no']).privatize(['yes', 'no', 'no'], rng=1).to_zarr(sys.argv[1])" \
    "$SCRATCH/reports.zarr"
  out=$(fresh "library(ldpest); cat(ldp_python(), '\n'); print(ldp_plugins()\$name); print(ldp_read('$SCRATCH/reports.zarr'))")
  if grep -q "$SCRATCH/data" <<<"$out" && grep -q "randomized-response" <<<"$out" && grep -q "ldp_reports: 3 reports" <<<"$out"; then
    echo "R smoke ok: a new session finds the environment without LDPEST_PYTHON, and reads .zarr reports"
  else
    echo "R smoke FAILED: a new session after install_ldpest()"; echo "$out" | tail -20; failures=$((failures + 1))
  fi
fi

echo "R smoke: $failures failure(s)"
[ "$failures" -eq 0 ]
