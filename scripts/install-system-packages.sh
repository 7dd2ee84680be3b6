#!/usr/bin/env bash
# Installs the system programs the tests run for real, from Debian (apt) when they are missing:
# Node.js with npm (the npm reference servers and the SARIF validator), redis-server (the shared
# store's Redis backend, started by the tests on loopback), chromium (the HTML report, checked
# headless) and systemd-analyze (the worker's example unit is verified with it). Without root or
# apt it says what is missing and fails: the tests that need a program fail without it rather than
# skip.
set -euo pipefail

need=()
command -v npm >/dev/null 2>&1 || need+=(nodejs npm)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)
[[ ${#need[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    echo "install-system-packages: missing ${need[*]}; install them (Debian/Ubuntu: apt-get install ${need[*]})" >&2
    exit 2
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
