#!/usr/bin/env bash
# The main job (tutorial 04's CNN, 6 epochs on Fashion-MNIST) with several seeds, one after the
# other, and a table of test accuracy and time per seed: the evidence for "at least 0.92 with each
# seed" (issue 14). Each run uses both cores for ~5 minutes; run it on an otherwise idle machine.
#
#   bash bench/main_job_seeds.sh [SEED ...]      # default: 1 2 3 4 5
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
program="$root/build/tutorials/04_cnn"
[ -x "$program" ] || { echo "build first: cmake --build build --target 04_cnn" >&2; exit 1; }
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(1 2 3 4 5)
rows=()
for seed in "${seeds[@]}"; do
  echo "== seed $seed" >&2
  out=$("$program" --seed "$seed" | tr '\r' '\n')
  accuracy=$(sed -n 's/^test accuracy: \([0-9.]*\).*/\1/p' <<< "$out")
  seconds=$(sed -n 's/^trained [0-9]* steps in \([0-9]*\) s$/\1/p' <<< "$out")
  rows+=("$(printf '| %4s | %s | %s s |' "$seed" "$accuracy" "$seconds")")
done
echo "| seed | test accuracy | training time |"
echo "|---|---|---|"
printf '%s\n' "${rows[@]}"
