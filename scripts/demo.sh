#!/usr/bin/env bash
# Installs fuzzgate and fuzzes the bundled example server (planted bugs) for the 60 seconds its
# fuzzgate.toml sets (BUDGET=30s bash scripts/demo.sh for another budget).
# The gate's outputs land in examples/servers/.fuzzgate/out/. Exit code 1 means "new findings",
# which is what the example is for.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e .
cd examples/servers
PATH="$(cd ../.. && pwd)/.venv/bin:$PATH" fuzzgate run ${BUDGET:+--budget "$BUDGET"} "$@"
