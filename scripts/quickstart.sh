#!/usr/bin/env bash
# Quick start, step 1: install the dependencies, build, and run the default experiment.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
./build/cubesim run configs/quickstart.json --out out/quickstart
echo "report: out/quickstart/report.json and out/quickstart/runs.csv"
