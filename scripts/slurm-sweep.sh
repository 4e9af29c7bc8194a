#!/bin/bash
# A sweep on a Slurm cluster: one shard per task of a job array, then `cubesim merge`
# (docs/performance.md "On a cluster: shards").
#
#   scripts/slurm-sweep.sh CONFIG SHARDS OUT [OPTION...]
#
# submits this script as a job array of SHARDS tasks and a merge job that waits for them
# (--dependency=afterok), and prints the two job ids. Task I runs
#
#   cubesim run CONFIG --shard I/SHARDS --jobs $SLURM_CPUS_PER_TASK --out OUT/shards/I --resume OPTION...
#
# so that a task that is killed (the time limit's SIGKILL, preemption, the OOM killer, a node
# that fails) and requeued (--requeue, or `scontrol requeue`) goes on from the points its journal
# holds; the merge then writes OUT/report.json and OUT/runs.csv, the unsharded sweep's report.
# OPTIONs go to the shards and to the merge alike: --reproducible, --engine, --machine, --set, -v.
# Logs: OUT/logs/shard-I.log, OUT/logs/merge.log. The binary: $CUBESIM, else cubesim on PATH.
#SBATCH --job-name=cubesim-sweep
#SBATCH --cpus-per-task=4
#SBATCH --mem=16G
#SBATCH --requeue
#SBATCH --open-mode=append
set -euo pipefail
cubesim=${CUBESIM:-cubesim}

if [ $# -lt 3 ]; then
  echo "usage: $0 CONFIG SHARDS OUT [OPTION...]" >&2
  exit 2
fi
config=$1 shards=$2 out=$3
shift 3

if [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then
  # Submitting: the array, then the merge once every task has ended well.
  case $shards in '' | *[!0-9]* | 0)
    echo "$0: SHARDS must be a count of shards, not \"$shards\"" >&2
    exit 2
    ;;
  esac
  mkdir -p "$out/shards" "$out/logs"
  self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
  array=$(sbatch --parsable --array="1-$shards" --output="$out/logs/shard-%a.log" \
    "$self" "$config" "$shards" "$out" "$@")
  array=${array%%;*}  # "id;cluster" on a federation
  merge=$(printf '%q ' "$cubesim" merge "$config")
  for ((i = 1; i <= shards; i++)); do merge+=$(printf '%q ' "$out/shards/$i"); done
  merge+=$(printf '%q ' --out "$out" "$@")
  merged=$(sbatch --parsable --dependency="afterok:$array" --job-name=cubesim-merge \
    --output="$out/logs/merge.log" --wrap="$merge")
  echo "array $array (shards in $out/shards), merge ${merged%%;*} (report in $out)"
  exit 0
fi

# One array task: its shard, resumed from its journal when this is a requeued attempt.
exec "$cubesim" run "$config" --shard "$SLURM_ARRAY_TASK_ID/$shards" --jobs "${SLURM_CPUS_PER_TASK:-1}" \
  --out "$out/shards/$SLURM_ARRAY_TASK_ID" --resume "$@"
