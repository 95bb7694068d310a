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
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[dev,plot,dask,spark]"
# Spark's Java runtime, from Debian
if ! command -v java >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then echo "setup: Spark needs Java: apt-get install openjdk-17-jre-headless (as root)" >&2; exit 1; fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless >/dev/null
fi

if [ "${1:-}" = "--with-r" ]; then
  bash scripts/setup-r.sh "$VENV"
fi
