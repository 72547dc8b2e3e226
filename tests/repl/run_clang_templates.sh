#!/usr/bin/env bash
# Compiles tests/repl/clang_templates.cc with clang++-22 against the g++-built libtapeflow and
# runs it (a ctest test). Exits 77 (skip) when clang++-22 is not installed.
#
#   bash run_clang_templates.sh CLANGXX LIBRARY SOURCE INCLUDE_DIR...
set -uo pipefail
clangxx=${1:-}
lib=${2:?usage: run_clang_templates.sh CLANGXX LIBRARY SOURCE INCLUDE_DIR...}
src=${3:?usage: run_clang_templates.sh CLANGXX LIBRARY SOURCE INCLUDE_DIR...}
shift 3
if [ -z "$clangxx" ] || [ ! -x "$clangxx" ]; then
  echo "SKIP: clang++-22 is not installed (apt-get install clang-22)"
  exit 77
fi
incs=()
for d in "$@"; do incs+=("-I$d"); done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$clangxx" -std=c++20 -O1 -DTAPEFLOW_WITH_CUDA=0 "${incs[@]}" "$src" "$lib" -Wl,-rpath,"$(dirname "$lib")" \
  -o "$tmp/clang_templates" || { echo "FAIL: clang++ could not build or link $src"; exit 1; }
"$tmp/clang_templates"
