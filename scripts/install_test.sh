#!/usr/bin/env bash
# Installs a built tapeflow into a temporary prefix, builds tests/install (a separate project
# using find_package(tapeflow) and tapeflow::tapeflow) against it, runs it and checks its output.
#
#   bash scripts/install_test.sh BUILD_DIR [SOURCE_DIR]     # a ctest test
set -euo pipefail

build=$(cd "${1:?usage: install_test.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
src=$(cd "${2:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

cmake --install "$build" --prefix "$prefix" > "$tmp/install.log" || { cat "$tmp/install.log"; exit 1; }

# What the package must hold: the umbrella header, layered headers, the library, the config.
for f in include/tapeflow/tapeflow.h include/tapeflow/core/shape.h include/tapeflow/eager/tensor.h \
         include/tapeflow/devices/device.h include/tapeflow/graph/graph_def.h include/tapeflow/proto/graph.pb.h; do
  [ -f "$prefix/$f" ] || { echo "FAIL: $f is not installed"; exit 1; }
done
ls "$prefix"/lib*/libtapeflow.so > /dev/null 2>&1 || { echo "FAIL: libtapeflow.so is not installed"; exit 1; }
ls "$prefix"/lib*/cmake/tapeflow/tapeflowConfig.cmake > /dev/null 2>&1 ||
  { echo "FAIL: tapeflowConfig.cmake is not installed"; exit 1; }
# The installed tree must not point back into the source or build tree.
if grep -rqs -e "$src" -e "$build" "$prefix"/lib*/cmake/tapeflow; then
  echo "FAIL: the installed CMake package refers to the source or build tree:"
  grep -rn -e "$src" -e "$build" "$prefix"/lib*/cmake/tapeflow
  exit 1
fi

launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$src/tests/install" -B "$tmp/app" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  "${launcher[@]}" > "$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/app" > "$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }

out=$("$tmp/app/app" 2>&1) || { echo "FAIL: the app exited with $?:"; printf '%s\n' "$out"; exit 1; }
printf '%s\n' "$out"
want=("values: 11 22 13 24" "shape=(2, 2), dtype=float32" "caught: [add] " "[2,2]" "[3]")
for w in "${want[@]}"; do
  [[ "$out" == *"$w"* ]] || { echo "FAIL: the output lacks '$w'"; exit 1; }
done
# The app must use the installed library, not the build tree's.
if command -v ldd > /dev/null; then
  lib=$(ldd "$tmp/app/app" | awk '/libtapeflow/ {print $3}')
  [[ "$lib" == "$prefix"/* ]] || { echo "FAIL: the app loads $lib, not the installed library"; exit 1; }
fi
# The installed REPL (when it was built) finds the installed library and headers by itself.
if [ -x "$build/tapeflow-repl" ]; then
  [ -x "$prefix/bin/tapeflow-repl" ] || { echo "FAIL: tapeflow-repl is not installed"; exit 1; }
  repl_out=$(printf 'Tensor t = {1.f, 2.f};\nt * 2\n' | "$prefix/bin/tapeflow-repl" 2>&1) ||
    { printf '%s\n' "$repl_out"; echo "FAIL: the installed tapeflow-repl exited with $?"; exit 1; }
  printf '%s\n' "$repl_out"
  [[ "$repl_out" == *"tapeflow.Tensor([2. 4.], shape=(2,), dtype=float32)"* ]] ||
    { echo "FAIL: the installed tapeflow-repl did not print t * 2"; exit 1; }
  [[ "$repl_out" != *"error"* ]] || { echo "FAIL: the installed tapeflow-repl reported an error"; exit 1; }
fi
echo "install test: OK"
