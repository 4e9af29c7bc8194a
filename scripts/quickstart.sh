#!/usr/bin/env bash
# Quick start, step 1: install the dependencies, build the simulator (not the tests: scripts/test.sh
# builds those), and run the default experiment.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh cubesim
./build/cubesim run configs/quickstart.json --out out/quickstart
echo "report: out/quickstart/report.json and out/quickstart/runs.csv"
