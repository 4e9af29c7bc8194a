#!/usr/bin/env bash
# The engine's prefetch hints survive the compiler (docs/performance.md "Prefetches that were not
# there"). GCC 12 at -O3 took a function that only reads memory and prefetches for "pure" and
# deleted every call of it, so MatchTable::prefetch -- every search of a receiver's match slot the
# event window and a group's stages asked for -- compiled to nothing. This compiles a call of each
# hint, with the compiler and optimisation of the build, in functions of its own, and checks that
# each still holds a prefetch instruction.
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
  if grep -Eq 'prefetch|prfm' <<<"$body"; then
    echo "ok: $f keeps its prefetch"
  else
    echo "FAILED: $f has no prefetch instruction:"
    echo "$body"
    status=1
  fi
done
exit $status
