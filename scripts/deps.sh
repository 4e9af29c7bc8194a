#!/usr/bin/env bash
# Installs cubesim's build and test dependencies from Debian packages (needs root or sudo).
set -euo pipefail
# Arguments: further packages to install with them (scripts/sanitize.sh adds clang's).
pkgs=(g++ cmake ninja-build pkg-config libsimgrid-dev nlohmann-json3-dev libspdlog-dev libcli11-dev
      libgtest-dev libbenchmark-dev python3 python3-jsonschema python3-matplotlib help2man
      python3-dev pybind11-dev python3-pybind11 python3-pandas python3-tqdm python3-nbconvert python3-ipykernel "$@")
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  echo "installing: ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
