#!/usr/bin/env bash
# Builds tests/install (a separate project using find_package(tapeflow) and tapeflow::tapeflow)
# against a tapeflow package, runs its programs and checks their output:
# - by default the build is installed into a temporary prefix first (what a user installs);
# - with --build-tree the project is pointed at the build tree itself (CMAKE_PREFIX_PATH=BUILD_DIR,
#   the targets exported there by export(EXPORT)), with no install step.
# With --bundle-maker PATH (tests/tools/make_test_bundle), the `serve` program (load_model and a
# signature run only) serves a bundle that PATH writes, and the installed `tapeflow` tool shows
# and runs it. With --cluster the consumer requires the "cluster" component and runs a graph
# through Session("grpc://...") on its own local server and on an installed tapeflow_server
# process; with --mpi MPIRUN it requires the "mpi" component and runs its program alone and under
# MPIRUN with two ranks ("none": no mpirun).
#
#   bash scripts/install_test.sh BUILD_DIR SOURCE_DIR [--bundle-maker PATH] [--build-tree]
#                                [--cluster] [--mpi MPIRUN]   # ctest
set -euo pipefail

build=$(cd "${1:?usage: install_test.sh BUILD_DIR SOURCE_DIR [--bundle-maker PATH] [--build-tree]}" && pwd)
src=$(cd "${2:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)
shift 2 || shift $#
bundle_maker=""
build_tree=0
cluster=0
mpi=0
mpirun=""
while [ $# -gt 0 ]; do
  case $1 in
    --bundle-maker) bundle_maker=$2; shift 2 ;;
    --build-tree) build_tree=1; shift ;;
    --cluster) cluster=1; shift ;;
    --mpi) mpi=1; mpirun=$2; [ "$mpirun" = none ] && mpirun=""; shift 2 ;;
    *) echo "install_test.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
tmp=$(mktemp -d)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2> /dev/null && wait "$server_pid" 2> /dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

if [ $build_tree -eq 1 ]; then
  prefix=$build
  [ -f "$build/tapeflowTargets.cmake" ] || { echo "FAIL: the build tree exports no tapeflowTargets.cmake"; exit 1; }
else
  prefix=$tmp/prefix
  cmake --install "$build" --prefix "$prefix" > "$tmp/install.log" || { cat "$tmp/install.log"; exit 1; }

  # What the package must hold: the umbrella header, layered headers, the library, the config.
  for f in include/tapeflow/tapeflow.h include/tapeflow/core/shape.h include/tapeflow/eager/tensor.h \
           include/tapeflow/devices/device.h include/tapeflow/graph/graph_def.h include/tapeflow/proto/graph.pb.h; do
    [ -f "$prefix/$f" ] || { echo "FAIL: $f is not installed"; exit 1; }
  done
  ls "$prefix"/lib*/libtapeflow.so > /dev/null 2>&1 || { echo "FAIL: libtapeflow.so is not installed"; exit 1; }
  if [ $cluster -eq 1 ]; then
    for f in include/tapeflow/distributed/cluster/server.h include/tapeflow/distributed/cluster/cluster_spec.h \
             bin/tapeflow_server; do
      [ -f "$prefix/$f" ] || { echo "FAIL: $f is not installed"; exit 1; }
    done
    ls "$prefix"/lib*/libtapeflow_cluster.so > /dev/null 2>&1 || { echo "FAIL: libtapeflow_cluster.so is not installed"; exit 1; }
  fi
  if [ $mpi -eq 1 ]; then
    [ -f "$prefix/include/tapeflow/distributed/mpi/collective.h" ] || { echo "FAIL: collective.h is not installed"; exit 1; }
    ls "$prefix"/lib*/libtapeflow_mpi.so > /dev/null 2>&1 || { echo "FAIL: libtapeflow_mpi.so is not installed"; exit 1; }
  fi
  ls "$prefix"/lib*/cmake/tapeflow/tapeflowConfig.cmake > /dev/null 2>&1 ||
    { echo "FAIL: tapeflowConfig.cmake is not installed"; exit 1; }
  # The installed tree must not point back into the source or build tree.
  if grep -rqs -e "$src" -e "$build" "$prefix"/lib*/cmake/tapeflow; then
    echo "FAIL: the installed CMake package refers to the source or build tree:"
    grep -rn -e "$src" -e "$build" "$prefix"/lib*/cmake/tapeflow
    exit 1
  fi
fi

launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
components=(-DTAPEFLOW_TEST_CLUSTER=$([ $cluster -eq 1 ] && echo ON || echo OFF)
            -DTAPEFLOW_TEST_MPI=$([ $mpi -eq 1 ] && echo ON || echo OFF))
cmake -S "$src/tests/install" -B "$tmp/app" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  "${launcher[@]}" "${components[@]}" > "$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/app" > "$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }

out=$("$tmp/app/app" 2>&1) || { echo "FAIL: the app exited with $?:"; printf '%s\n' "$out"; exit 1; }
printf '%s\n' "$out"
want=("values: 11 22 13 24" "shape=(2, 2), dtype=float32" "caught: [add] " "[2,2]" "[3]")
for w in "${want[@]}"; do
  [[ "$out" == *"$w"* ]] || { echo "FAIL: the output lacks '$w'"; exit 1; }
done
# The app must use the package's library (the installed one, not the build tree's).
if command -v ldd > /dev/null; then
  lib=$(ldd "$tmp/app/app" | awk '/libtapeflow/ {print $3}')
  [[ "$lib" == "$prefix"/* ]] || { echo "FAIL: the app loads $lib, not the installed library"; exit 1; }
fi

if [ -n "$bundle_maker" ]; then
  "$bundle_maker" "$tmp/data" > /dev/null || { echo "FAIL: $bundle_maker failed"; exit 1; }
  out=$("$tmp/app/serve" "$tmp/data/model" "$tmp/data/x.npy" "$tmp/served_" 2>&1) ||
    { echo "FAIL: serve exited with $?:"; printf '%s\n' "$out"; exit 1; }
  printf '%s\n' "$out"
  for o in output_0 output_1; do
    cmp -s "$tmp/served_$o.npy" "$tmp/data/expected_$o.npy" ||
      { echo "FAIL: serve's $o differs from the eager result"; exit 1; }
  done
  [[ "$out" == *"9.5"*"11.5"* ]] || { echo "FAIL: serve did not print [[9.5, 11.5], ...]"; exit 1; }
  # The tool ships with the package (bin/tapeflow installed; tools/cli/tapeflow in the build tree).
  tool=$prefix/bin/tapeflow
  [ $build_tree -eq 1 ] && tool=$build/tools/cli/tapeflow
  [ -x "$tool" ] || { echo "FAIL: $tool is not there"; exit 1; }
  shown=$("$tool" show "$tmp/data/model") && [[ "$shown" == *"serve (tapeflow/serve)"* ]] ||
    { echo "FAIL: $tool show"; exit 1; }
  "$tool" run "$tmp/data/model" --input "$tmp/data/x.npy" --output output_0="$tmp/tool_0.npy" > /dev/null &&
    cmp -s "$tmp/tool_0.npy" "$tmp/data/expected_output_0.npy" || { echo "FAIL: $tool run"; exit 1; }
  if [ $build_tree -eq 0 ] && command -v ldd > /dev/null; then
    lib=$(ldd "$tool" | awk '/libtapeflow/ {print $3}')
    [[ "$lib" == "$prefix"/* ]] || { echo "FAIL: $tool loads $lib, not the installed library"; exit 1; }
  fi
  echo "serve and the tapeflow tool: OK"
fi
# The optional components: a component tapeflow lacks is a clear error when required, a
# status line when optional; the core still configures.
mkdir -p "$tmp/nocomp"
# find_package(tapeflow REQUIRED COMPONENTS|OPTIONAL_COMPONENTS <component>) against the package
# at $1 must print $3, fail when required and configure when optional; $4: more CMake to run.
expect_component_message() {
  local package=$1 component=$2 expected=$3 more=${4:-} how kw rc cout
  for how in REQUIRED OPTIONAL; do
    kw=COMPONENTS; [ $how = OPTIONAL ] && kw=OPTIONAL_COMPONENTS
    printf 'cmake_minimum_required(VERSION 3.21)\nproject(c LANGUAGES CXX)\nfind_package(tapeflow REQUIRED %s %s)\n%s' \
      "$kw" "$component" "$more" > "$tmp/nocomp/CMakeLists.txt"
    rc=0
    cout=$(cmake -S "$tmp/nocomp" -B "$tmp/nocomp/build-$component-$how" -DCMAKE_PREFIX_PATH="$package" 2>&1) || rc=$?
    [[ "$cout" == *"$expected"* ]] ||
      { printf '%s\n' "$cout"; echo "FAIL: no message \"$expected\" ($how)"; exit 1; }
    if [ $how = REQUIRED ] && [ $rc -eq 0 ]; then echo "FAIL: required component '$component' configured"; exit 1; fi
    if [ $how = OPTIONAL ] && [ $rc -ne 0 ]; then printf '%s\n' "$cout"; echo "FAIL: optional component '$component' failed"; exit 1; fi
  done
}
expect_component_message "$prefix" nosuch "tapeflow has no component 'nosuch' (it has: cluster, mpi)"
# A package built without a component (its targets file absent, as where gRPC is missing).
if [ $build_tree -eq 0 ] && [ $cluster -eq 1 ]; then
  cp -a "$prefix" "$tmp/nocluster"
  rm "$tmp/nocluster"/lib*/cmake/tapeflow/tapeflowClusterTargets*.cmake
  expect_component_message "$tmp/nocluster" cluster "tapeflow was built without its 'cluster' component" \
    'if(NOT TARGET tapeflow::tapeflow OR TARGET tapeflow::tapeflow_cluster)
  message(FATAL_ERROR "wrong targets")
endif()
'
fi
echo "components: an unknown or unbuilt one is an error when required, a message when optional: OK"

if [ $cluster -eq 1 ]; then
  want_cluster=("remote: 55 shape [1,1]" "caught: [")
  out=$(timeout 60 "$tmp/app/cluster_app" 2>&1) || { printf '%s\n' "$out"; echo "FAIL: cluster_app exited with $?"; exit 1; }
  printf '%s\n' "$out"
  for w in "${want_cluster[@]}"; do
    [[ "$out" == *"$w"* ]] || { echo "FAIL: cluster_app's output lacks '$w'"; exit 1; }
  done
  # The packaged server as a process of its own, on a port the OS picks.
  server=$prefix/bin/tapeflow_server
  [ $build_tree -eq 1 ] && server=$build/distributed/cluster/tapeflow_server
  "$server" --cluster "local=127.0.0.1:0" --job local --task 0 --port-file "$tmp/port" 2> "$tmp/server.log" &
  server_pid=$!
  for _ in $(seq 300); do [ -f "$tmp/port.ready" ] || ! kill -0 "$server_pid" 2> /dev/null && break; sleep 0.1; done
  [ -f "$tmp/port.ready" ] || { cat "$tmp/server.log"; echo "FAIL: $server did not start"; exit 1; }
  out=$(timeout 60 "$tmp/app/cluster_app" "grpc://127.0.0.1:$(cat "$tmp/port")" 2>&1) ||
    { printf '%s\n' "$out"; echo "FAIL: cluster_app against $server exited with $?"; exit 1; }
  printf '%s\n' "$out"
  [[ "$out" == *"remote: 55 shape [1,1]"* ]] || { echo "FAIL: cluster_app against $server"; exit 1; }
  kill "$server_pid"; wait "$server_pid" 2> /dev/null || true; server_pid=""
  if [ $build_tree -eq 0 ] && command -v ldd > /dev/null; then
    lib=$(ldd "$server" | awk '/libtapeflow_cluster/ {print $3}')
    [[ "$lib" == "$prefix"/* ]] || { echo "FAIL: $server loads $lib, not the installed library"; exit 1; }
  fi
  echo "cluster component: OK"
fi
if [ $mpi -eq 1 ]; then
  out=$(timeout 60 "$tmp/app/mpi_app" 2>&1) || { printf '%s\n' "$out"; echo "FAIL: mpi_app exited with $?"; exit 1; }
  printf '%s\n' "$out"
  for w in "initialized: 0" "graph ops: CollectiveReduce" "caught: [all_reduce] MPI is not initialised"; do
    [[ "$out" == *"$w"* ]] || { echo "FAIL: mpi_app's output lacks '$w'"; exit 1; }
  done
  if [ -n "$mpirun" ]; then
    out=$("$mpirun" --allow-run-as-root --oversubscribe -np 2 --timeout 60 "$tmp/app/mpi_app" --run 2>&1) ||
      { printf '%s\n' "$out"; echo "FAIL: mpi_app under $mpirun exited with $?"; exit 1; }
    printf '%s\n' "$out"
    [[ "$out" == *"ranks 2 sum 3"* ]] || { echo "FAIL: mpi_app under $mpirun did not sum 1 + 2"; exit 1; }
  else
    echo "mpi_app --run skipped: no mpirun"
  fi
  echo "mpi component: OK"
fi

# The installed REPL (when it was built) finds the installed library and headers by itself.
if [ $build_tree -eq 0 ] && [ -x "$build/tapeflow-repl" ]; then
  [ -x "$prefix/bin/tapeflow-repl" ] || { echo "FAIL: tapeflow-repl is not installed"; exit 1; }
  repl_out=$(printf 'Tensor t = {1.f, 2.f};\nt * 2\n' | "$prefix/bin/tapeflow-repl" 2>&1) ||
    { printf '%s\n' "$repl_out"; echo "FAIL: the installed tapeflow-repl exited with $?"; exit 1; }
  printf '%s\n' "$repl_out"
  [[ "$repl_out" == *"tapeflow.Tensor([2. 4.], shape=(2,), dtype=float32)"* ]] ||
    { echo "FAIL: the installed tapeflow-repl did not print t * 2"; exit 1; }
  [[ "$repl_out" != *"error"* ]] || { echo "FAIL: the installed tapeflow-repl reported an error"; exit 1; }
fi
echo "install test: OK"
