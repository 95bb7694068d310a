#!/usr/bin/env bash
# Set up, then run the whole test suite (Python, and R when set up).  Idempotent.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --with-r || exit 1
# pure-ldp, multi-freq-ldpy and OpenDP, whose reports docs/other-libraries.md estimates (own venv)
.venv/bin/python bench/peers.py || exit 1

# The habits: lint (ruff), the floors (import-linter: README, "Layout"), then pytest with warnings as errors
.venv/bin/ruff check . || exit 1
PYTHONPATH=plugins/ldpest-oue/src:plugins/ldpest-one-bit-mean/src .venv/bin/lint-imports || exit 1

LDPEST_REQUIRE_PEERS=1 LDPEST_REQUIRE_SPARK=1 .venv/bin/python -m pytest tests
status=$?
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: failing" >&2
  exit 1
fi
[ "$status" -eq 0 ] || exit "$status"

if [ -f scripts/test-r.sh ]; then
  bash scripts/test-r.sh || exit 1
fi
