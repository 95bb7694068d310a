#!/usr/bin/env bash
# Set up, then estimate the bundled survey (randomized response, epsilon = 1)
# and draw the result.  Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p out
.venv/bin/ldpest estimate examples/survey-reports.csv --column transport \
  --mechanism randomized-response --epsilon 1 --categories car,bus,bike,walk \
  --output out/survey-estimate.nc
.venv/bin/ldpest plot out/survey-estimate.nc --output out/survey-estimate.png
