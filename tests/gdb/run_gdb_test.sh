#!/usr/bin/env bash
# The gdb pretty-printers embedded in libtapeflow.so, on a live process and on a core file of it,
# and `catch throw` stopping with the user's file:line in the backtrace.
#
#   bash run_gdb_test.sh GDB SUBJECT LIBRARY_DIR SUBJECT_SOURCE
#
# GDB empty or not runnable: exit 77 (ctest reports the test as skipped).
set -uo pipefail

gdb_bin=${1:-}
subject=$2
libdir=$3
source=$4
if [ -z "$gdb_bin" ] || ! "$gdb_bin" --version >/dev/null 2>&1; then
  echo "gdb not found: skipped (apt-get install gdb)"
  exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# -nx: no ~/.gdbinit; the printers must come from the library's .debug_gdb_scripts alone.
run_gdb() {
  "$gdb_bin" -nx -batch -iex 'set debuginfod enabled off' -iex "add-auto-load-safe-path $libdir" \
    -iex 'set width 0' -iex 'set confirm off' "$@" 2>&1
}

# The values of `print` ("$N = value" lines), one per line.
printed() { sed -n 's/^\$[0-9]* = //p'; }

check_equal() {  # name expected actual
  if [ "$2" == "$3" ]; then
    echo "ok: $1"
  else
    echo "FAIL: $1"
    diff <(printf '%s\n' "$2") <(printf '%s\n' "$3") | sed 's/^/  /'
    failures=$((failures + 1))
  fi
}

# What the printers show for main's objects; the same on the live process and on the core.
prints=(t s v tape op g x empty big tiny mask wide 't.impl_._M_ptr->data.dtype')
expected=$(cat <<'EOF'
tapeflow.Tensor([[1. 2.] [3. 4.]], shape=[2,2], dtype=float32, device=CPU:0)
[2,?,3]
tapeflow.Variable('w', shape=[2], dtype=float32, device=CPU:0, value=[0.5 -1.])
tapeflow.GradientTape(recorded_ops=1, watched=1, persistent=true)
tapeflow.Operation('x', type=Placeholder, device='/device:CPU:0')
tapeflow.Graph(nodes=1)
tapeflow.Tensor(<symbolic 'x:0'>, shape=[?,3], dtype=float32)
tapeflow.Tensor(<empty>)
tapeflow.Tensor([[0 1 2 3] [4 5 6 7] [8 9 ...]], shape=[3,4], dtype=int32, device=CPU:0)
tapeflow.Tensor(1.e-05, shape=[], dtype=float64, device=CPU:0)
tapeflow.Tensor([True False], shape=[2], dtype=bool, device=CPU:0)
[1,2,3,4,5,6]
float32
EOF
)
print_args=()
for p in "${prints[@]}"; do print_args+=(-ex "print $p"); done

# 1. Live: stop in inspect_here(), print from main's frame, call into the program once
#    (to_string() still works beside the printers), then write a core file.
live=$(run_gdb -ex 'break inspect_here' -ex run -ex 'frame function main' "${print_args[@]}" \
  -ex 'print t.to_string()' -ex 'info auto-load python-scripts' \
  -ex "generate-core-file $work/core" -ex kill "$subject")
check_equal "live prints" "$expected"$'\n''"tapeflow.Tensor(\n[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32)"' \
  "$(printf '%s\n' "$live" | printed)"
if printf '%s\n' "$live" | grep -Eq '^Yes +tapeflow_printers\.py'; then
  echo "ok: printers auto-loaded from the library's .debug_gdb_scripts"
else
  echo "FAIL: 'info auto-load python-scripts' does not list tapeflow_printers.py as loaded"
  failures=$((failures + 1))
fi

# 2. The core file: memory only, no process.
if [ -s "$work/core" ]; then
  core=$(run_gdb -ex 'frame function main' "${print_args[@]}" "$subject" "$work/core")
  check_equal "core file prints" "$expected" "$(printf '%s\n' "$core" | printed)"
else
  echo "FAIL: gdb wrote no core file"
  printf '%s\n' "$live" | tail -20 | sed 's/^/  /'
  failures=$((failures + 1))
  core=""
fi

# 3. catch throw: a shape mismatch stops in __cxa_throw; the backtrace names the user's line,
#    and (line tables in the Release library) a tapeflow source file:line.
line=$(grep -n 'gdb-test: throws here' "$source" | cut -d: -f1)
bt=$(run_gdb -ex 'catch throw' -ex 'run throw' -ex bt -ex kill "$subject")
if printf '%s\n' "$bt" | grep -q "gdb_subject\.cc:$line\$"; then
  echo "ok: catch throw backtrace names gdb_subject.cc:$line"
else
  echo "FAIL: catch throw backtrace lacks gdb_subject.cc:$line"
  failures=$((failures + 1))
fi
if printf '%s\n' "$bt" | grep -Eq ' at [^ ]*/(core|devices|eager)/[a-z_/]+\.(cc|h):[0-9]+$'; then
  echo "ok: the library's frames have file:line"
else
  echo "FAIL: no library frame with file:line in the backtrace"
  failures=$((failures + 1))
fi

if [ "$failures" -ne 0 ]; then
  printf '\n--- live session ---\n%s\n--- core session ---\n%s\n--- catch throw ---\n%s\n' "$live" "$core" "$bt"
  exit 1
fi
echo "gdb printers: all checks passed"
