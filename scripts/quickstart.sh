#!/usr/bin/env bash
# Quick start, step 1: install the dependencies, build the simulator and its Python module (not the
# tests: scripts/test.sh builds those), run the default experiment, and make `import cubesim` work.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh cubesim
./build/cubesim run configs/quickstart.json --out out/quickstart
echo "report: out/quickstart/report.json and out/quickstart/runs.csv"
# `import cubesim` in the system Python (docs/python.md): the module, then a .pth file naming
# build/python.
scripts/build.sh cubesim_python
scripts/install-python.sh build
/usr/bin/python3 -c "import cubesim; print('python: import cubesim works:', cubesim.__file__)"
