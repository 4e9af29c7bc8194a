#!/usr/bin/env bash
# Seeds tests/fuzz/corpus/<harness>/ from what the project ships: configs, sample traces, machine
# presets and a small suite with its golden file (docs/reliability.md "Fuzzing"). The fuzzers add
# what they find to the same folders; `-merge=1` keeps them small. Needs build/cubesim.
set -euo pipefail
cd "$(dirname "$0")/../.."
C=tests/fuzz/corpus
mkdir -p $C/config $C/native_trace $C/simgrid_ti $C/machine $C/suite
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
