#!/usr/bin/env bash
# The README's test command. Installs missing packages, runs the architecture guards, builds
# everything (preset "release": library, tests, tutorials, benchmarks) and runs every ctest
# test; then, when time allows, builds and runs the test suite under ASan+UBSan (preset "asan").
#
#   bash scripts/test.sh [-DOPTION=VALUE ...]     # extra options for the release configure
#
# Environment:
#   TAPEFLOW_ASAN=auto|on|off   auto (default): run the sanitizer suite when the release build
#                               and its tests took under TAPEFLOW_ASAN_BUDGET_S seconds (1100),
#                               so CI on 2 cores stays well inside its 45 minutes.
#   TAPEFLOW_TSAN=auto|on|off   auto (default): build and run the tsan preset when the whole run
#                               so far took under TAPEFLOW_TSAN_BUDGET_S seconds (900).
#   TAPEFLOW_JOBS=N             parallel build and test jobs (default: nproc).
# Exits non-zero on the first failure. ccache is used when installed (CMakeLists.txt).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$TF_ROOT"

asan_mode=${TAPEFLOW_ASAN:-auto}
budget=${TAPEFLOW_ASAN_BUDGET_S:-1100}
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

# sanitizer_suite PRESET MODE SPENT_S BUDGET_S WHAT: builds and runs a sanitizer preset when MODE
# is on, or when MODE is auto and SPENT_S (the time the measure counts) is under BUDGET_S.
sanitizer_suite() {
  local preset=$1 mode=$2 spent=$3 limit=$4 what=$5 var
  var=TAPEFLOW_$(echo "$preset" | tr '[:lower:]' '[:upper:]')
  case "$mode" in
    on|1|ON|true) ;;
    off|0|OFF|false) tf_log "$preset: off ($var=$mode)"; return 0 ;;
    *)
      if [ "$spent" -ge "$limit" ]; then
        tf_log "$preset: skipped, ${spent}s spent (budget ${limit}s); run it with $var=on"
        return 0
      fi ;;
  esac
  tf_configure "$preset"
  tf_log "build: $preset ($what, tests only), $jobs jobs"
  cmake --build --preset "$preset" -j "$jobs"
  phase_end "$preset build"
  tf_log "test: $preset (the preset's filter: see CMakePresets.json)"
  ctest --preset "$preset" -j "$jobs" --output-on-failure
  phase_end "$preset tests"
}

# ASan+UBSan when the release build and tests were quick enough; then ThreadSanitizer over the
# concurrent parts (Session, executor, pool, variables, tape) when the whole run so far leaves
# room for it (a TSan build is as long as the ASan one).
sanitizer_suite asan "$asan_mode" "$release_s" "$budget" "ASan+UBSan"
sanitizer_suite tsan "${TAPEFLOW_TSAN:-auto}" "$SECONDS" "${TAPEFLOW_TSAN_BUDGET_S:-900}" "ThreadSanitizer"

tf_log "all tests passed. Times:"
printf '  %s\n' "${timings[@]}"
