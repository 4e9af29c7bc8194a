#!/usr/bin/env bash
# The sanitizer suite (docs/reliability.md "Sanitizers and fuzzing"): the test suite built with
# clang under AddressSanitizer and UndefinedBehaviorSanitizer, halting at the first finding, its
# quick tier and engine tests run, and the fuzz corpora of tests/fuzz replayed by their libFuzzer
# harnesses. Into build-sanitize/.
# Arguments go to ctest (e.g. -R Corpus to run some tests only).
set -euo pipefail
cd "$(dirname "$0")/.."
# clang, its sanitizer and libFuzzer runtimes, and llvm-symbolizer for readable reports.
scripts/deps.sh clang libclang-rt-14-dev llvm
CC=clang CXX=clang++ cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DCUBESIM_FUZZ=ON -DCUBESIM_FUZZ_COVERAGE=OFF \
  -DCUBESIM_BUILD_BENCH=OFF >/dev/null
start=$(date +%s)
cmake --build build-sanitize -j "$(nproc)"
echo "build-sanitize: all targets in $(( $(date +%s) - start )) s" >&2
# Halt (and fail the test) at the first finding of either sanitizer; leaks are findings too.
export ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# The quick tier, every test of the kernel and its network models, and the fuzz corpora
# (docs/reliability.md "Test tiers"); CUBESIM_TEST_TIER=quick thins the few grids that say so.
# The extensive tier and the plot tests (Python drawing) run in scripts/test.sh, the plain build.
export CUBESIM_TEST_TIER=quick
if [ $# -gt 0 ]; then  # a developer's selection: ctest's, one process a test
  exec ctest --test-dir build-sanitize --output-on-failure -j "$(nproc)" -L 'quick|engine' -LE plot "$@"
fi
# The GoogleTest part in 4 x nproc shards (GTEST_SHARD_INDEX), nproc at a time: under the
# sanitizers a process takes 0.3-0.4 s to start and end, and ctest starts one a test (600 of
# them). A shard stops at its first finding; its log names the test.
start=$(date +%s)
filter=$(cat build-sanitize/sanitizer-gtest-filter.txt)
shards=$((4 * $(nproc)))  # small shards even out: 4 of 150 tests took 137 to 237 s
export filter shards
rm -f build-sanitize/gtest-shard-*.log  # an earlier run's shards would count again below
if ! seq 0 $((shards - 1)) | xargs -P "$(nproc)" -I{} bash -c \
  'GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX={} build-sanitize/cubesim_tests --gtest_filter="$filter" \
     > build-sanitize/gtest-shard-{}.log 2>&1 || { echo "gtest shard {} failed:"; tail -n 60 build-sanitize/gtest-shard-{}.log; exit 1; }'; then
  exit 1
fi
passed=$(cat build-sanitize/gtest-shard-*.log | grep -o '^\[  PASSED  \] [0-9]*' | awk '{s += $4} END {print s}')
echo "sanitizers: ${passed} GoogleTest tests passed in ${shards} shards, $(($(date +%s) - start)) s" >&2
# Where that time went: the ten longest tests under the sanitizers, from the shards' logs.
echo "sanitizers: the longest tests (ms):" >&2
cat build-sanitize/gtest-shard-*.log | sed -n 's/^\[       OK \] \(.*\) (\([0-9]*\) ms)$/\2 \1/p' | sort -rn | awk 'NR <= 10 { print "  " $0 }' >&2
# The rest of the selection: the fuzz corpora, the schema check, the tier check.
ctest --test-dir build-sanitize --output-on-failure -j "$(nproc)" -L 'quick|engine' -LE plot -R '^(fuzz|schema|hygiene)\.'

