#!/usr/bin/env bash
# tapeflow beside libtorch in the configurations a libtorch user would tune to, and tapeflow
# against the best of them (Note [Best libtorch]). Every libtorch figure the README quotes comes
# from this command.
#
#   bash bench/libtorch_compare.sh [--rounds=15] [other libtorch_compare flags]
#
# Installs Debian's libtorch-dev when it is missing (the test and main commands never do: it is
# about 1 GB), configures the release build so CMake finds Torch, builds bench/libtorch_compare
# and runs it once per configuration:
#   passive   libtorch's intra-op threads = tapeflow's, OpenBLAS as many, OMP_WAIT_POLICY=PASSIVE
#             (the program's default, Note [OpenMP spinning] in libtorch_compare.cc)
#   omp       libgomp's default wait policy (spinning), OpenBLAS single-threaded: the usual advice
#             for PyTorch with OpenMP on a small machine
#   serial    OMP_NUM_THREADS=1 and single-threaded OpenBLAS: one core for libtorch
# Each run first checks that both frameworks compute the same chain gradient and MLP losses
# (Note [Checks fail the run]); a mismatch fails this script.
#
# Note [Best libtorch]: per workload, the reference is the configuration in which libtorch's
# median was lowest, and the figure quoted is the paired ratio (tapeflow / libtorch, median over
# interleaved rounds) measured in that same run, so both sides come from one process at one time.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source scripts/setup.sh

if [ "$(dpkg-query -W -f='${Status}' libtorch-dev 2>/dev/null)" != "install ok installed" ]; then
  TF_PACKAGES=(libtorch-dev)
  tf_install_packages
fi
tf_configure release > /dev/null
cmake --build --preset release -j "$(tf_jobs)" --target libtorch_compare
program=build/bench/libtorch_compare
[ -x "$program" ] || { tf_log "error: CMake did not find Torch; see build/CMakeCache.txt (Torch_DIR)"; exit 1; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() {  # run NAME [env ...] -- [flags ...]
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  tf_log "libtorch configuration '$name': ${envs[*]:-} $program $*"
  if ! env "${envs[@]}" "$program" "$@" | tee "$out/$name.txt"; then
    tf_log "error: configuration '$name' failed (a check disagreed or the program crashed)"
    exit 1
  fi
}
run passive -- "$@"
run omp -- --omp-default --torch-blas-threads=1 "$@"
run serial OMP_NUM_THREADS=1 -- --torch-blas-threads=1 "$@"

echo
echo "Summary (Note [Best libtorch]): per workload, libtorch's median in each configuration, and the"
echo "paired ratio tapeflow/libtorch from the run of the fastest libtorch configuration."
awk -F, '
  FNR == 1 { config = FILENAME; sub(/.*\//, "", config); sub(/\.txt$/, "", config); configs[++n] = config }
  $1 == "row" && $2 != "rss_growth" {
    if (!($2 in unit)) order[++rows] = $2
    unit[$2] = $3; lt[$2, config] = $5; ratio[$2, config] = $6
    if (!($2 in best) || $5 + 0 < lt[$2, best[$2]] + 0) best[$2] = config
  }
  END {
    printf "%-8s %-4s", "workload", "unit"
    for (i = 1; i <= n; i++) printf " %12s", "lt " configs[i]
    printf "   %-8s %s\n", "best", "tapeflow/best (paired)"
    for (r = 1; r <= rows; r++) {
      w = order[r]; printf "%-8s %-4s", w, unit[w]
      for (i = 1; i <= n; i++) printf " %12.4g", lt[w, configs[i]]
      printf "   %-8s %.2f\n", best[w], ratio[w, best[w]]
    }
  }' "$out/passive.txt" "$out/omp.txt" "$out/serial.txt"
