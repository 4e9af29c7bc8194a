#!/usr/bin/env bash
# The engine's prefetch hints survive the compiler (sim/kernel/prefetch.hpp; docs/performance.md
# "Prefetches that were not there"). This compiles a call of each hint with the build's compiler
# at -O3 (the release build's level), each in a function of its own, and checks that each holds a
# prefetch instruction itself -- not a call of a function that may hold none.
# Arguments: the C++ compiler, the source folder.
set -euo pipefail
cxx="$1"
src="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/probe.cpp" <<'CPP'
#include "sim/kernel/prefetch.hpp"
#include "sim/match_table.hpp"
using cubesim::detail::MatchTable;
extern "C" {
__attribute__((noinline)) void probe_match(const MatchTable& m, long node, long src, int tag) {
  m.prefetch(node, src, tag);
}
__attribute__((noinline)) void probe_line(const long* p) { cubesim::detail::prefetch(p); }
}
CPP
"$cxx" -std=c++20 -O3 -I"$src" -S -o "$work/probe.s" "$work/probe.cpp"
status=0
for f in probe_match probe_line; do
  # The function's body: from its label to its end, with whatever it calls inline.
  body=$(awk -v f="$f" '$0 ~ "^"f"(\\.[a-z0-9.]+)?:" {on=1} on {print} on && /\.cfi_endproc|\.size/ {exit}' "$work/probe.s")
  if grep -Eq '^[[:space:]]+(prefetch(t0|t1|t2|nta|w|wt1)?|prfm)[[:space:]]' <<<"$body" &&
    ! grep -Eq '^[[:space:]]+(call|jmp|bl?)[[:space:]].*prefetch' <<<"$body"; then
    echo "ok: $f keeps its prefetch"
  else
    echo "FAILED: $f has no prefetch instruction:"
    echo "$body"
    status=1
  fi
done
exit $status
