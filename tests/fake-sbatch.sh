#!/bin/bash
# A fake `sbatch` for the tests of scripts/slurm-sweep.sh (ctest slurm.array_with_a_killed_task):
# runs a job at once, on this machine, and returns when it has ended. It knows the options that
# script uses: --parsable, --array=A-B (the tasks one after the other, SLURM_ARRAY_TASK_ID set),
# --dependency=afterok:ID (refused, exit 1, when job ID did not end well), --output=FILE (%a the
# task, %A/%j the job; appended to), --wrap=COMMAND, --job-name; the script's #SBATCH
# --cpus-per-task sets SLURM_CPUS_PER_TASK (FAKE_SBATCH_CPUS overrides it). Others are ignored.
#
# FAKE_SBATCH_KILL_TASK=I and FAKE_SBATCH_KILL_WHEN=SHELL-CONDITION: array task I is killed with
# SIGKILL as soon as the condition holds (tested every 10 ms), as a time limit or the OOM killer
# would, and requeued: started again with SLURM_RESTART_COUNT=1. If the task ends before the
# condition holds, the kill did not land: the job fails. FAKE_SBATCH_STATE: a folder for job ids
# and states (default: a folder under TMPDIR, per user).
set -uo pipefail
state=${FAKE_SBATCH_STATE:-${TMPDIR:-/tmp}/fake-sbatch-$(id -u)}
mkdir -p "$state"
say() { echo "fake-sbatch: $*" >&2; }

parsable=0 array="" dependency="" output="" wrap=""
while [ $# -gt 0 ]; do
  case $1 in
    --parsable) parsable=1 ;;
    --array=*) array=${1#*=} ;;
    --dependency=*) dependency=${1#*=} ;;
    --output=*) output=${1#*=} ;;
    --wrap=*) wrap=${1#*=} ;;
    --array | --dependency | --output | --wrap | --job-name | --cpus-per-task | --mem | -o | -J)
      case $1 in --array) array=$2 ;; --dependency) dependency=$2 ;; --output | -o) output=$2 ;; --wrap) wrap=$2 ;; esac
      shift ;;
    --*) ;;
    *) break ;;
  esac
  shift
done
if [ -z "$wrap" ] && [ $# -eq 0 ]; then say "no script to run"; exit 1; fi

id=$(( $(cat "$state/last" 2>/dev/null || echo 1000) + 1 ))
echo "$id" > "$state/last"

if [ -n "$dependency" ]; then
  case $dependency in
    afterok:*)
      for dep in ${dependency#afterok:}; do
        if [ "$(cat "$state/$dep" 2>/dev/null)" != ok ]; then
          say "job $id: dependency $dependency never satisfied (job $dep did not end well)"
          echo failed > "$state/$id"
          [ $parsable = 1 ] && echo "$id"
          exit 0
        fi
      done ;;
    *) say "dependency $dependency: only afterok:ID is known" ; exit 1 ;;
  esac
fi

cpus=${FAKE_SBATCH_CPUS:-}
if [ -z "$cpus" ] && [ $# -gt 0 ]; then
  cpus=$(sed -n 's/^#SBATCH  *--cpus-per-task=\([0-9]*\).*/\1/p' "$1" | head -1)
fi
export SLURM_JOB_ID=$id SLURM_CPUS_PER_TASK=${cpus:-1}

log_of() {  # the output file of task $1
  local f=${output:-slurm-%j.out}
  f=${f//%a/$1}; f=${f//%A/$id}; f=${f//%j/$id}
  echo "$f"
}

# Runs task $1 (empty: not an array); 0 when it ended well.
run_task() {
  local task=$1 log pid status
  log=$(log_of "$task")
  if [ -n "$task" ]; then export SLURM_ARRAY_JOB_ID=$id SLURM_ARRAY_TASK_ID=$task; fi
  if [ -n "$wrap" ]; then set -- /bin/sh -c "$wrap"; else set -- /bin/bash "${script[@]}"; fi
  if [ -n "$task" ] && [ "$task" = "${FAKE_SBATCH_KILL_TASK:-}" ]; then
    "$@" >> "$log" 2>&1 &
    pid=$!
    until eval "${FAKE_SBATCH_KILL_WHEN:-true}" 2>/dev/null; do
      if ! kill -0 "$pid" 2>/dev/null; then
        wait "$pid"
        say "job ${id}_$task ended (status $?) before ${FAKE_SBATCH_KILL_WHEN:-}: the kill did not land"
        return 1
      fi
      sleep 0.01
    done
    kill -KILL "$pid"
    wait "$pid" 2>/dev/null
    status=$?
    say "job ${id}_$task killed by SIGKILL (status $status); requeued"
    echo "fake-sbatch: killed by SIGKILL; requeued" >> "$log"
    SLURM_RESTART_COUNT=1 "$@" >> "$log" 2>&1
  else
    "$@" >> "$log" 2>&1
  fi
}

script=("$@")
ok=ok
if [ -n "$array" ]; then
  first=${array%-*} last=${array#*-}
  for ((t = first; t <= last; t++)); do
    run_task "$t" || { say "job ${id}_$t failed"; ok=failed; }
  done
else
  run_task "" || { say "job $id failed"; ok=failed; }
fi
echo "$ok" > "$state/$id"
if [ $parsable = 1 ]; then echo "$id"; else echo "Submitted batch job $id"; fi
