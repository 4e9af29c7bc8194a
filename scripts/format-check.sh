#!/usr/bin/env bash
# The C++ sources follow the checked-in .clang-format (Google, 120 columns): fails, naming the
# files, when one differs. `scripts/format-check.sh --fix` rewrites them instead. CI runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh clang-format
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cc')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f"); done
if [ ${#bad[@]} -gt 0 ]; then
  echo "format: ${#bad[@]} of ${#files[@]} C++ files differ from .clang-format (scripts/format-check.sh --fix):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "format: all ${#files[@]} C++ files follow .clang-format"
