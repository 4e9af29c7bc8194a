#!/usr/bin/env bash
# Configures and builds cubesim (Release) into build/: every target, or those named
# (scripts/quickstart.sh builds only `cubesim`, so that the first run does not wait for the tests).
# Says how long the build took.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build -j "$(nproc)" "${targets[@]}"
echo "build: ${*:-all targets} in $(( $(date +%s) - start )) s" >&2
