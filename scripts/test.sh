#!/usr/bin/env bash
# Quick start, step 2: the test suite (installs and builds first if needed).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
