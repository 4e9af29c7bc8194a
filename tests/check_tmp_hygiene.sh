#!/usr/bin/env bash
# Tests leave nothing behind (issue 18, item 12): the command-line tests, the bad-input corpus
# and the trace tests run with a fresh TMPDIR, which must be empty afterwards.
set -euo pipefail
tests_binary="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TMPDIR="$tmp" "$tests_binary" --gtest_filter='Cli.*:Corpus/*:TraceCli.*' > "$tmp.log" 2>&1 || { cat "$tmp.log"; rm -f "$tmp.log"; exit 1; }
rm -f "$tmp.log"
left=$(find "$tmp" -mindepth 1 | head -20)
if [ -n "$left" ]; then
  echo "tests left these in TMPDIR:"; echo "$left"; exit 1
fi
echo "TMPDIR clean"
