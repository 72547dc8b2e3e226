#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded, seeded number of executions (ctest fuzz_<target>).
#
#   run_libfuzzer.sh TARGET SEED_CORPUS WORK_CORPUS RUNS [extra libFuzzer flags]
#
# The seed corpus (in the repository) is read only; inputs libFuzzer finds interesting go to
# WORK_CORPUS, emptied first so each ctest run is the same run. A crash, an untyped exception
# (the target aborts), a sanitizer report, a leak, an input slower than 10 s or a process over
# 2 GB fails the test, and libFuzzer leaves the input as crash-*/leak-*/timeout-* in WORK_CORPUS/..
set -euo pipefail
target=$1 seeds=$2 work=$3 runs=$4
shift 4
rm -rf "$work"
mkdir -p "$work"
cd "$(dirname "$work")"
exec "$target" -runs="$runs" -seed=1 -max_len=16384 -timeout=10 -rss_limit_mb=2048 -max_total_time=400 \
  -print_final_stats=1 "$@" "$work" "$seeds"
