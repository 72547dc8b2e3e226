#!/usr/bin/env bash
# Fails when a file in a lower layer includes a file from a higher one.
#
#   bash scripts/check_layers.sh [ROOT]     # ROOT defaults to the repository
#
# Layers, lowest first: core < devices < eager < tape < graph < nn, data < saving < distributed
# < tools (see ARCHITECTURE.md; nn and data share a level). The
# umbrella header tapeflow.h counts as above them all. Includes are matched as
#   "layer/...", <layer/...>, <tapeflow/layer/...> and relative "../layer/..." paths.
# Where a lower layer must call up, it defines an interface that the higher layer implements.
set -euo pipefail

root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$root"

layers=(core devices eager tape graph nn data saving distributed tools)
present=()
for d in "${layers[@]}"; do [ -d "$d" ] && present+=("$d"); done
[ ${#present[@]} -gt 0 ] || { echo "check_layers: no layer folders under $root" >&2; exit 2; }

# file:line:text for every #include in the layer folders (-H keeps the name for one file too).
hits=$(find "${present[@]}" -type f \( -name '*.h' -o -name '*.hpp' -o -name '*.cc' -o -name '*.cpp' \
         -o -name '*.cu' -o -name '*.cuh' -o -name '*.inc' \) -print0 |
       xargs -0 -r grep -HnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' || true)

violations=$(printf '%s\n' "$hits" | awk '
  BEGIN { r["core"] = 0; r["devices"] = 1; r["eager"] = 2; r["tape"] = 3; r["graph"] = 4
          r["nn"] = 5; r["data"] = 5; r["saving"] = 6; r["distributed"] = 7; r["tools"] = 8; top = 9 }
  # Normalises a/b/../c into a/c (paths relative to the repository root).
  function norm(p,   n, parts, out, k, i) {
    n = split(p, parts, "/"); k = 0
    for (i = 1; i <= n; i++) {
      if (parts[i] == "" || parts[i] == ".") continue
      if (parts[i] == "..") { if (k > 0) k--; continue }
      out[++k] = parts[i]
    }
    p = ""
    for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
    return p
  }
  NF == 0 { next }
  {
    file = $0; sub(/:.*/, "", file)
    rest = substr($0, length(file) + 2)
    line = rest; sub(/:.*/, "", line)
    text = substr(rest, length(line) + 2)
    if (!match(text, /[<"][^>"]+[>"]/)) next
    target = substr(text, RSTART + 1, RLENGTH - 2)
    mine = file; sub(/\/.*/, "", mine)
    if (target ~ /^\.\.?\//) {           # relative to the including file
      dir = file; sub(/\/[^\/]*$/, "", dir)
      target = norm(dir "/" target)
    }
    sub(/^tapeflow\//, "", target)
    first = target; sub(/\/.*/, "", first)
    if (target == "tapeflow.h") theirs = top
    else if (first in r && index(target, "/") > 0) theirs = r[first]
    else next
    if (theirs > r[mine])
      printf "%s:%s: %s (layer %d) includes %s (layer %d)\n", file, line, mine, r[mine], target, theirs
  }')

if [ -n "$violations" ]; then
  echo "check_layers: includes that point up a layer (core < devices < eager < tape < graph < nn, data < saving < distributed < tools):"
  printf '%s\n' "$violations"
  echo "Invert the dependency: define a small interface in the lower layer and implement it above."
  exit 1
fi
echo "check_layers: OK (${present[*]})"
