#!/bin/bash
# ctest slurm.array_with_a_killed_task (issue 38): scripts/slurm-sweep.sh, the job array of
# docs/performance.md "On a cluster: shards", run against a fake sbatch (tests/fake-sbatch.sh)
# that runs the array's tasks here, one of them killed with SIGKILL once it has finished two
# points and requeued. The requeued task resumes from its journal, and the merge job's report
# and CSV are the unsharded run's, byte for byte.
# Arguments: the cubesim binary, the source folder.
set -euo pipefail
bin=$1 src=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/cubesim_slurm_XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat > "$work/sweep.json" <<'JSON'
{"schema": "cubesim.config/1", "name": "slurm", "machine": "ipsc-nx", "algorithm": "allgather.sbt",
 "topology": {"kind": "hypercube", "dim": 9}, "params": {"M": 4}, "mode": "timing",
 "sweep": {"topology.dim": [9, 10, 11], "params.M": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]}}
JSON
"$bin" run "$work/sweep.json" --out "$work/whole" --reproducible --jobs 2 >/dev/null

mkdir -p "$work/bin"
ln -s "$src/tests/fake-sbatch.sh" "$work/bin/sbatch"
journal="$work/out/shards/2/.cubesim-journal"
PATH="$work/bin:$PATH" CUBESIM="$bin" FAKE_SBATCH_STATE="$work/sbatch" FAKE_SBATCH_CPUS=2 \
  FAKE_SBATCH_KILL_TASK=2 FAKE_SBATCH_KILL_WHEN="[ \$(wc -l < '$journal') -ge 3 ]" \
  bash "$src/scripts/slurm-sweep.sh" "$work/sweep.json" 3 "$work/out" --reproducible -v 2> "$work/sbatch.err" ||
  fail "slurm-sweep.sh: $(cat "$work/sbatch.err")"
cat "$work/sbatch.err"
grep -q "job [0-9]*_2 killed by SIGKILL" "$work/sbatch.err" || fail "task 2 was not killed: $(cat "$work/sbatch.err")"
grep -q "failed\|never satisfied" "$work/sbatch.err" && fail "a job failed: $(cat "$work/sbatch.err")"
# The requeued task took the points its journal held, and ran only the rest.
taken=$(sed -n 's/.*--resume: \([0-9]*\) of 12 points taken from.*/\1/p' "$work/out/logs/shard-2.log")
if [ -z "$taken" ] || [ "$taken" -lt 2 ] || [ "$taken" -ge 12 ]; then
  fail "the requeued task did not resume from its journal: $(cat "$work/out/logs/shard-2.log")"
fi
echo "the requeued task 2 took $taken of its 12 points from its journal"
for f in report.json runs.csv; do
  cmp "$work/out/$f" "$work/whole/$f" || fail "the merged $f differs from the unsharded run's"
done
[ ! -e "$journal" ] || fail "the finished shard left its journal"
echo "the merged report and CSV are the unsharded run's"
