#!/usr/bin/env bash
# Set up everything ldpest needs on a fresh Debian machine (idempotent).
#   bash scripts/setup.sh          Python environment in .venv with all extras
#   bash scripts/setup.sh --with-r also R from Debian's packages and the R package
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${LDPEST_VENV:-.venv}

if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[dev,plot,dask]"

if [ "${1:-}" = "--with-r" ]; then
  bash scripts/setup-r.sh "$VENV"
fi
