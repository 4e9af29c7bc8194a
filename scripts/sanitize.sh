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
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DCUBESIM_FUZZ=ON -DCUBESIM_BUILD_BENCH=OFF >/dev/null
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
ctest --test-dir build-sanitize --output-on-failure -j "$(nproc)" -L 'quick|engine' -LE plot "$@"
