#!/usr/bin/env bash
# Feeds a script to tapeflow-repl and compares the transcript with the expected one (a ctest
# test; see tests/CMakeLists.txt).
#
#   bash run_tapeflow_repl.sh TAPEFLOW_REPL SCRIPT EXPECTED [REPL ARGS...]
#
# The transcript is the REPL's stdout and stderr with --echo (each input after its prompt).
# Addresses (0x...) and timings ("wall time: N ms") are masked before comparing. Exits 77
# (ctest SKIP_RETURN_CODE) when tapeflow-repl was not built (clang's interpreter library is
# missing). TAPEFLOW_REPL_UPDATE=1 rewrites EXPECTED instead (then review the diff).
set -uo pipefail

repl=${1:-}
script=${2:?usage: run_tapeflow_repl.sh TAPEFLOW_REPL SCRIPT EXPECTED [ARGS...]}
expected=${3:?usage: run_tapeflow_repl.sh TAPEFLOW_REPL SCRIPT EXPECTED [ARGS...]}
shift 3

if [ -z "$repl" ] || [ ! -x "$repl" ]; then
  echo "SKIP: tapeflow-repl is not built (apt-get install libclang-22-dev libclang-cpp22-dev llvm-22-dev, then reconfigure)"
  exit 77
fi

normalize() { sed -E -e 's/0x[0-9a-f]+/0x_/g' -e 's/wall time: [0-9.]+ ms/wall time: _ ms/'; }

actual=$("$repl" --echo "$@" < "$script" 2>&1 | normalize)
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
  printf '%s\n' "$actual"
  echo "FAIL: tapeflow-repl exited with $rc"
  exit 1
fi
if [ "${TAPEFLOW_REPL_UPDATE:-0}" = 1 ]; then
  printf '%s\n' "$actual" > "$expected"
  echo "updated $expected"
  exit 0
fi
if ! diff -u "$expected" <(printf '%s\n' "$actual"); then
  echo "FAIL: the transcript differs from $expected (lines with - expected, + actual)"
  exit 1
fi
echo "transcript matches $(wc -l < "$expected") lines of $expected"
