#!/usr/bin/env bash
# Proves the architecture guards catch what they guard against: runs check_layers.sh and
# check_file_sizes.sh on small temporary trees, with and without a planted violation.
#
#   bash scripts/selftest_checks.sh          # a ctest test (tests/CMakeLists.txt)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# expect RC NAME CMD...: runs CMD, checks its exit status, keeps its output in $out.
expect() {
  local want=$1 name=$2; shift 2
  out=$("$@" 2>&1); local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: $name: exit $got, expected $want. Output:"; printf '%s\n' "$out"
    failures=$((failures + 1))
  else
    echo "ok:   $name"
  fi
}
expect_output() {  # NAME SUBSTRING: the last command's output contains SUBSTRING
  if [[ "$out" != *"$2"* ]]; then
    echo "FAIL: $1: output lacks '$2'. Output:"; printf '%s\n' "$out"
    failures=$((failures + 1))
  fi
}

# A clean tree: every include points down or sideways.
clean=$tmp/clean
mkdir -p "$clean"/{core,devices/cpu,eager/ops,tape,graph,tests}
printf '#include <vector>\n#include "absl/status/status.h"\n' > "$clean/core/shape.h"
printf '#include "core/shape.h"\n' > "$clean/devices/device.h"
printf '#include "devices/device.h"\n#include "cpu_device.h"\n#include "../../core/shape.h"\n' \
  > "$clean/devices/cpu/cpu_device.cc"
printf '#include "devices/device.h"\n#include <tapeflow/core/shape.h>\n' > "$clean/eager/ops/binary.cc"
printf '#include "eager/tensor.h"\n' > "$clean/tape/tape.cc"
printf '#include "tape/tape.h"\n#include "eager/tensor.h"\n' > "$clean/graph/graph.cc"
printf '#include "graph/graph.h"\n#include "tapeflow.h"\n' > "$clean/tests/graph_test.cc"
expect 0 "layers: a clean tree passes" bash "$here/check_layers.sh" "$clean"

# Each planted upward include must be caught and named.
plant() {  # NAME FILE LINE EXPECTED_SUBSTRING
  local tree=$tmp/bad_$RANDOM
  cp -r "$clean" "$tree"
  mkdir -p "$(dirname "$tree/$2")"
  printf '// a comment\n%s\n' "$3" >> "$tree/$2"
  expect 1 "layers: catches $1" bash "$here/check_layers.sh" "$tree"
  expect_output "layers: names $1" "$4"
}
plant "core including eager" core/shape.h '#include "eager/tensor.h"' \
  "core/shape.h:4: core (layer 0) includes eager/tensor.h (layer 2)"
plant "devices including tape via <tapeflow/...>" devices/cpu/cpu_device.cc '#include <tapeflow/tape/tape.h>' \
  "devices/cpu/cpu_device.cc:"
plant "a relative include going up" core/dtype.cc '  #  include "../graph/graph.h"' "includes graph/graph.h"
plant "eager including the umbrella header" eager/ops/binary.cc '#include "tapeflow.h"' "includes tapeflow.h"
plant "tape including graph" tape/tape.cc '#include "graph/session.h"' "tape (layer 3) includes graph/session.h"
plant "graph including saving" graph/graph.cc '#include "saving/saver.h"' "graph (layer 4) includes saving/saver.h"
plant "saving including tools" saving/saver.cc '#include "tools/cli.h"' "saving (layer 6) includes tools/cli.h"

# A commented-out include is not an include.
tree=$tmp/commented; cp -r "$clean" "$tree"
printf '// #include "eager/tensor.h"\n' >> "$tree/core/shape.h"
expect 0 "layers: ignores a commented-out include" bash "$here/check_layers.sh" "$tree"

# File sizes: 1,200 lines pass, 1,201 fail and are named; build folders are skipped.
sizes=$tmp/sizes
mkdir -p "$sizes"/{core,tests,eager/build}
seq 1200 > "$sizes/core/ok.cc"
seq 5000 > "$sizes/eager/build/generated.cc"
printf 'x' > "$sizes/tests/no_newline.h"
expect 0 "sizes: 1200 lines pass" bash "$here/check_file_sizes.sh" "$sizes"
seq 1201 > "$sizes/tests/long_test.cc"
expect 1 "sizes: 1201 lines fail" bash "$here/check_file_sizes.sh" "$sizes"
expect_output "sizes: names the file" "tests/long_test.cc: 1201 lines"
rm "$sizes/tests/long_test.cc"; seq 1201 | head -c -1 > "$sizes/core/big.cu"
expect 1 "sizes: counts a last line without a newline (.cu)" bash "$here/check_file_sizes.sh" "$sizes"

if [ "$failures" -ne 0 ]; then echo "$failures check(s) failed"; exit 1; fi
echo "all checks of the checks passed"
