#!/usr/bin/env bash
# The README's test command. Installs missing packages, runs the architecture guards, builds
# everything (preset "release": library, tests, tutorials, benchmarks) and runs every ctest
# test; then, when time allows, builds and runs the test suite under ASan+UBSan (preset "asan").
#
#   bash scripts/test.sh [-DOPTION=VALUE ...]     # extra options for the release configure
#
# Environment:
#   TAPEFLOW_ASAN=auto|on|off   auto (default): run the sanitizer suite when the release build
#                               and its tests took under TAPEFLOW_ASAN_BUDGET_S seconds (1200),
#                               so CI on 2 cores stays well inside its 45 minutes.
#   TAPEFLOW_TSAN=auto|on|off   auto (default): build and run the tsan preset when the whole run
#                               so far took under TAPEFLOW_TSAN_BUDGET_S seconds (900).
#   TAPEFLOW_JOBS=N             parallel build and test jobs (default: nproc).
# Exits non-zero on the first failure. ccache is used when installed (CMakeLists.txt).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$TF_ROOT"

asan_mode=${TAPEFLOW_ASAN:-auto}
budget=${TAPEFLOW_ASAN_BUDGET_S:-1200}
jobs=$(tf_jobs)
timings=()
phase_start=$SECONDS
phase_end() { timings+=("$(printf '%-24s %4ds' "$1" $((SECONDS - phase_start)))"); phase_start=$SECONDS; }

tf_install_packages
phase_end "packages"

tf_log "architecture guards"
bash scripts/check_layers.sh
bash scripts/check_file_sizes.sh

if command -v ccache > /dev/null; then tf_log "ccache: on ($(ccache --version | sed -n 1p))"; else
  tf_log "ccache: not installed, building from scratch"; fi

release_start=$SECONDS
tf_configure release "$@"
tf_log "build: release, $jobs jobs"
cmake --build --preset release -j "$jobs"
phase_end "release build"
tf_log "test: release"
ctest --preset release -j "$jobs" --output-on-failure
phase_end "release tests"
release_s=$((SECONDS - release_start))

run_asan=0
case "$asan_mode" in
  on|1|ON|true) run_asan=1 ;;
  off|0|OFF|false) tf_log "asan: off (TAPEFLOW_ASAN=$asan_mode)" ;;
  *)
    if [ "$release_s" -lt "$budget" ]; then run_asan=1; else
      tf_log "asan: skipped, the release build and tests took ${release_s}s (budget ${budget}s); run it with TAPEFLOW_ASAN=on"
    fi ;;
esac
if [ "$run_asan" -eq 1 ]; then
  tf_configure asan
  tf_log "build: asan (ASan+UBSan, tests only), $jobs jobs"
  cmake --build --preset asan -j "$jobs"
  phase_end "asan build"
  tf_log "test: asan (tests labelled lint/integration and names with 'Slow' excluded)"
  ctest --preset asan -j "$jobs" --output-on-failure
  phase_end "asan tests"
fi

# ThreadSanitizer over the concurrent parts (Session, executor, pool, variables, tape), when the
# whole run so far leaves room for it (a TSan build is as long as the ASan one).
tsan_mode=${TAPEFLOW_TSAN:-auto}
tsan_budget=${TAPEFLOW_TSAN_BUDGET_S:-900}
run_tsan=0
case "$tsan_mode" in
  on|1|ON|true) run_tsan=1 ;;
  off|0|OFF|false) tf_log "tsan: off (TAPEFLOW_TSAN=$tsan_mode)" ;;
  *)
    if [ "$SECONDS" -lt "$tsan_budget" ]; then run_tsan=1; else
      tf_log "tsan: skipped, the run took ${SECONDS}s so far (budget ${tsan_budget}s); run it with TAPEFLOW_TSAN=on"
    fi ;;
esac
if [ "$run_tsan" -eq 1 ]; then
  tf_configure tsan
  tf_log "build: tsan (ThreadSanitizer, tests only), $jobs jobs"
  cmake --build --preset tsan -j "$jobs"
  phase_end "tsan build"
  tf_log "test: tsan (Session, executor, thread pool, variables, tape)"
  ctest --preset tsan -j "$jobs" --output-on-failure
  phase_end "tsan tests"
fi

tf_log "all tests passed. Times:"
printf '  %s\n' "${timings[@]}"
