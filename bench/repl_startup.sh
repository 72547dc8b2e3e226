#!/usr/bin/env bash
# Start-up time of tapeflow-repl: `echo %quit | tapeflow-repl`, with the precompiled prelude
# (the default) and without it (--no-pch). The issue's bar: ready in at most 3 s.
#
#   bash bench/repl_startup.sh [path/to/tapeflow-repl]     # RUNS=10 by default
#
# Uses hyperfine when installed; otherwise a loop that prints each run's wall and CPU time and
# the median wall time. Wall time depends on what else the machine runs: compare CPU times too.
set -euo pipefail
repl=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/tapeflow-repl}
runs=${RUNS:-10}
[ -x "$repl" ] || { echo "no tapeflow-repl at $repl (build the tapeflow-repl target)"; exit 1; }

if command -v hyperfine >/dev/null 2>&1; then
  exec hyperfine --warmup 1 --runs "$runs" "echo %quit | $repl" "echo %quit | $repl --no-pch"
fi

measure() {
  local label=$1; shift
  local walls=() tfile
  tfile=$(mktemp)
  for _ in $(seq "$runs"); do
    /usr/bin/time -o "$tfile" -f '%e %U %S' "$@" <<< '%quit' >/dev/null 2>&1
    read -r wall user sys < "$tfile"
    walls+=("$wall")
    printf '  %-22s wall %5.2f s   cpu %5.2f s\n' "$label" "$wall" "$(echo "$user + $sys" | bc)"
  done
  printf '%-24s median wall %.2f s over %d runs\n' "$label" \
    "$(printf '%s\n' "${walls[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')" "$runs"
  rm -f "$tfile"
}
"$repl" <<< '%quit' >/dev/null  # warm the page cache
measure "precompiled prelude" "$repl"
measure "--no-pch" "$repl" --no-pch
