#!/usr/bin/env bash
# Installs fuzzgate with its test dependencies and the output validators, then runs every check.
# Usage: bash scripts/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[test]"
bash scripts/install-validators.sh
.venv/bin/ruff check src tests
.venv/bin/mypy
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
