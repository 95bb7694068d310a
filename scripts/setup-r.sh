#!/usr/bin/env bash
# The R side (idempotent): R from Debian's packages, rpy2 in the venv, the R package in .rlib.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${1:-.venv}
# generics, ggplot2, tibble and vdiffr: Suggests of the R package (tidy/autoplot, their tests, picture snapshots)
PACKAGES="r-base-core r-base-dev r-cran-reticulate r-cran-testthat r-cran-jsonlite r-cran-generics r-cran-ggplot2 r-cran-tibble r-cran-vdiffr"
missing=""
for p in $PACKAGES; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" -ne 0 ]; then echo "setup-r: need root to apt-get install$missing" >&2; exit 1; fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
# rpy2 pins from R-BRIDGE.md: rpy2-rinterface 3.6.6+ needs R >= 4.5 (Debian 12 has 4.2)
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[r]"
mkdir -p .rlib
R CMD INSTALL --no-test-load --library=.rlib r-bindings >/dev/null
