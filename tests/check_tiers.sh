#!/usr/bin/env bash
# Every test is in exactly one tier (docs/reliability.md "Test tiers"): labelled quick or extensive,
# not both, not neither. Argument: the build folder.
set -euo pipefail
build="$1"
all=$(ctest --test-dir "$build" -N | grep -c "Test *#" || true)
quick=$(ctest --test-dir "$build" -N -L quick | grep -c "Test *#" || true)
extensive=$(ctest --test-dir "$build" -N -L extensive | grep -c "Test *#" || true)
both=$(ctest --test-dir "$build" -N -L quick -L extensive | grep -c "Test *#" || true)
echo "tests: $all; quick: $quick; extensive: $extensive; both: $both"
if [ "$all" -eq 0 ] || [ "$both" -ne 0 ] || [ $((quick + extensive)) -ne "$all" ]; then
  echo "every test must be labelled quick or extensive, exactly one; untiered:"
  comm -23 <(ctest --test-dir "$build" -N | sed -n 's/.*Test *#[0-9]*: //p' | sort) \
           <( (ctest --test-dir "$build" -N -L quick; ctest --test-dir "$build" -N -L extensive) |
             sed -n 's/.*Test *#[0-9]*: //p' | sort)
  exit 1
fi
