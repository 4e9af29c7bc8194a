#!/usr/bin/env bash
# Seeds tests/fuzz/corpus/<harness>/ from what the project ships: configs, sample traces, machine
# presets and a small suite with its golden file (docs/reliability.md "Fuzzing"). The fuzzers add
# what they find to the same folders; `-merge=1` keeps them small. Needs build/cubesim.
set -euo pipefail
cd "$(dirname "$0")/../.."
C=tests/fuzz/corpus
mkdir -p $C/config $C/native_trace $C/simgrid_ti $C/goal $C/machine $C/suite $C/measured
# The selection maps (thousands of points each) take seconds an input: left out.
for f in $(find configs -name "*.json" ! -name schema.json ! -name golden.json ! -name suite.json ! -path "*maps*" | sort); do
  cp "$f" "$C/config/seed-$(echo "${f#configs/}" | tr '/' '-')"
done
for f in traces/samples/*.trace; do cp "$f" "$C/native_trace/seed-$(basename "$f" .trace)"; done
S=traces/samples/simgrid-handwritten
{ printf 'f1.txt\nf2.txt\nf3.txt\nf4.txt\n'; for i in 0 1 2 3; do printf '====\n'; cat $S/ranks/rank-$i.txt; done; } > $C/simgrid_ti/seed-index-and-ranks
cat $S/ranks/rank-*.txt > $C/simgrid_ti/seed-one-file
printf '0 init\n1 init\n0 compute 1000\n0 isend 1 0 64\n1 irecv 0 0 64\n0 waitall\n1 wait 0 1 0\n1 sleep 0.5\n0 finalize\n1 finalize\n' \
  > $C/simgrid_ti/seed-nonblocking
for f in traces/samples/goal-handwritten/*.goal; do cp "$f" "$C/goal/seed-$(basename "$f" .goal)"; done
# GOAL exports of recorded runs: awaits of several operations (zero-time joins), requests
# (irequires) and concurrent strands.
for c in "configs/quickstart.json --set topology.dim=2 --set sweep={}" "configs/regress/transpose-mpt.json --set sweep={}"; do
  g=$(mktemp -d)
  build/cubesim run $c --trace goal --out "$g" >/dev/null
  cp "$g"/traces/*.goal "$C/goal/seed-export-$(basename "$(ls "$g"/traces/*.goal)" .goal)"
  rm -rf "$g"
done
printf 'num_ranks 2\nrank 0 {\nl1: calc 5\nl2: calc 5\nl2 requires l1\nl1 irequires l2\n}\nrank 1 { }\n' > $C/goal/seed-cycle
printf 'num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0\n}\nrank 1 {\nl1: recv 4b from 0 tag 0\n}\n' > $C/goal/seed-sizes-differ
printf 'num_ranks 2\nrank 0 {\nl1: recv 4b from -1 tag -1 cpu 1 nic 2\n}\nrank 1 {\nl1: ca' > $C/goal/seed-cut
for f in machines/presets/*.json; do cp "$f" "$C/machine/seed-$(basename "$f" .json)"; done
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
# The two configs the suite harness puts beside its input (tests/fuzz/fuzz_suite.cpp).
printf '{"schema": "cubesim.config/1", "machine": "ipsc-nx", "algorithm": "broadcast.sbt",\n      "topology": {"kind": "hypercube", "dim": 2}, "params": {"M": 4}}' > "$d/a.json"
printf '{"schema": "cubesim.config/1", "machine": "ipsc-nx", "algorithm": "allgather.sbt",\n      "topology": {"kind": "hypercube", "dim": 2}, "params": {"M": 2}, "sweep": {"params.M": [1, 2]}}' > "$d/b.json"
printf '{"schema": "cubesim.suite/1", "name": "fuzz", "golden": "golden.json", "experiments": [{"config": "a.json", "expect": "exact"}, {"config": "b.json", "expect": {"approx": 0.01}, "description": "two points"}]}\n' > "$d/suite.json"
build/cubesim regress "$d/suite.json" --update >/dev/null
{ cat "$d/suite.json"; printf '====\n'; cat "$d/golden.json"; } > $C/suite/seed-suite-and-golden
cp "$d/suite.json" $C/suite/seed-suite-only
cp configs/regress/suite.json $C/suite/seed-project-suite

# The reproducers of issue 18 (tests/test_bad_input.cpp has them as exit-2 cases): the fuzzers
# start from them, and the corpus replay runs over them.
cfg() { printf '{"schema": "cubesim.config/1", "machine": "ipsc-nx", %s}' "$1"; }
cube='"topology": {"kind": "hypercube", "dim": 3}'
cfg "$(printf '%s, "algorithm": "broadcast.sbt", "params": %s%s' "$cube" "$(printf '[%.0s' $(seq 1000))" "$(printf ']%.0s' $(seq 1000))")" > $C/config/issue18-deep
cfg '"topology": {"kind": "hypercube", "dim": 24}, "algorithm": "alltoall.sbt", "params": {"M": 1099511627776}, "mode": "timing"' > $C/config/issue18-overflow
cfg "$cube"', "algorithm": "broadcast.sbt", "params": 5, "sweep": {"params.M": [1, 2]}' > $C/config/issue18-params-not-object
cfg "$cube"', "algorithm": "broadcast.sbt", "params": {"M": 4}, "sweep": {"params.a~2": [1, 2]}' > $C/config/issue18-tilde
cfg '"machine_overrides": [1], '"$cube"', "algorithm": "broadcast.sbt", "params": {"M": 4}, "sweep": {"machine_overrides.ports": [1, 2]}' > $C/config/issue18-overrides-array
cfg "$cube"', "algorithm": "broadcast.sbt", "params": {"M": 1e400}' > $C/config/issue18-1e400
cfg "$cube"', "algorithm": "broadcast.sbt", "params": {"M": 4}, "sweep": {"params.M": [1000, 1125899906842624]}' > $C/config/issue18-sweep-overflow
cfg "$cube"', "algorithm": "broadcast.sbt", "params": {"M": 4, "a\nb": 1, "\u001b[31m": 2}' > $C/config/issue18-control-keys
# A native trace ends with "end <steps> <bytes>" (docs/traces.md): these get theirs, so that the
# reader reaches what they test.
seal() {
  local end
  end=$(awk -v b="$(wc -c < "$1")" 'NR > 1 && $1 != "" && substr($1, 1, 1) != "#" { n++ } END { printf "end %d %d", n, b }' "$1")
  echo "$end" >> "$1"
}
head -1 traces/samples/quickstart.trace | sed 's/"M":15360/"M":1e400/' > $C/native_trace/issue18-1e400
{ head -1 traces/samples/quickstart.trace; printf '0 16777216 compute 1\n'; } > $C/native_trace/issue18-undeclared-strand
{ head -1 traces/samples/quickstart.trace; printf '0 0 fork 1 1048576\n'; } > $C/native_trace/issue18-forks
for f in issue18-1e400 issue18-undeclared-strand issue18-forks; do seal $C/native_trace/$f; done
printf '99999999999999999999 init\n' > $C/simgrid_ti/issue18-rank
printf '0 init\n1 init\n0 send 1 0 1e300\n1 recv 0 0 1\n' > $C/simgrid_ti/issue18-count-1e300
printf '0 init\n1 init\n0 send 1 0 9300000000000000000\n1 recv 0 0 1\n' > $C/simgrid_ti/issue18-count-9e18
printf '0 init\n1 init\n0 send 1 3000000000 1\n1 recv 0 0 1\n' > $C/simgrid_ti/issue18-tag
printf '0 init\n1 init\n0 sleep 1e10\n0 compute 1e30\n' > $C/simgrid_ti/issue18-sleep-compute
printf '{"schema": "cubesim.suite/1", "tolerance": 1e400, "experiments": []}' > $C/suite/issue18-1e400
printf '{"schema": "cubesim.suite/1", "experiments": [{"config": "%s.json"}]}' "$(printf 'a%.0s' $(seq 300))" > $C/suite/issue18-long-name
for f in configs/calibrate/*.csv; do cp "$f" "$C/measured/seed-$(basename "$f" .csv)"; done
printf 'config , "topology.shape", params.M, time, weight\n# a comment\n"a,b.json", "[4, 4]", , 1.5e-3, 2\nc.json,,100,12.5ms,\n' \
  > $C/measured/seed-quoted-and-empty
