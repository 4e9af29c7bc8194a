#!/usr/bin/env bash
# Makes `import cubesim` work in the system Python (/usr/bin/python3, docs/python.md): writes
# cubesim.pth, one line naming BUILD/python (the package the build made: build/python/cubesim/),
# into the first site-packages folder of that Python (/usr/local/lib/python3.11/dist-packages on
# Debian 12; with sudo when not root), or into the user's site-packages with --user. Nothing is
# copied: a rebuild is seen at once; removing cubesim.pth undoes it.
# Usage: scripts/install-python.sh [BUILD_DIR (default build)] [--user]
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
user=0
for a in "$@"; do
  case "$a" in
    --user) user=1 ;;
    *) build="$a" ;;
  esac
done
python=${CUBESIM_PYTHON:-/usr/bin/python3}
pkg="$(cd "$build" && pwd)/python"
if [ ! -f "$pkg/cubesim/__init__.py" ] || ! ls "$pkg"/cubesim/_cubesim*.so >/dev/null 2>&1; then
  echo "install-python: no module in $pkg/cubesim: build it first (scripts/build.sh cubesim_python)" >&2
  exit 2
fi
if [ "$user" -eq 1 ]; then
  site=$("$python" -m site --user-site)
  SUDO=""
else
  site=${CUBESIM_SITE_DIR:-$("$python" -c 'import site; print(site.getsitepackages()[0])')}
  SUDO=""; [ -w "$(dirname "$site")" ] || [ "$(id -u)" -eq 0 ] || SUDO=sudo
fi
$SUDO mkdir -p "$site"
echo "$pkg" | $SUDO tee "$site/cubesim.pth" >/dev/null
echo "install-python: $site/cubesim.pth -> $pkg" >&2
