#!/usr/bin/env bash
# End-to-end test of the `tapeflow` command-line tool (tools/cli/): a bundle made by
# make_test_bundle is shown, run (outputs compared byte for byte with the eager results, inputs
# hand-assembled the way NumPy's np.save lays them out) and drawn; every bad input must exit
# non-zero with exactly one line on stderr, never a crash.
#
#   bash tests/tools/cli_test.sh TAPEFLOW_BIN MAKE_TEST_BUNDLE_BIN     # a ctest test
set -uo pipefail

tf=${1:?usage: cli_test.sh TAPEFLOW_BIN MAKE_TEST_BUNDLE_BIN}
make_bundle=${2:?usage: cli_test.sh TAPEFLOW_BIN MAKE_TEST_BUNDLE_BIN}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_ok NAME WANT... -- CMD...: CMD exits 0 and its stdout holds every WANT.
expect_ok() {
  local name=$1; shift
  local wants=()
  while [ "$1" != "--" ]; do wants+=("$1"); shift; done
  shift
  local out rc
  out=$("$@" 2> "$tmp/stderr"); rc=$?
  if [ $rc -ne 0 ]; then fail "$name: exit status $rc: $(cat "$tmp/stderr")"; return; fi
  for w in "${wants[@]}"; do
    [[ "$out" == *"$w"* ]] || { fail "$name: stdout lacks '$w'"; printf '%s\n' "$out" | head -40; }
  done
  printf '%s\n' "$out" > "$tmp/last_stdout"
}

# expect_error NAME STATUS WANT -- CMD...: CMD exits with STATUS and writes exactly one line to
# stderr, "tapeflow <command>: [...", holding WANT and no "(at file:line)" suffix.
expect_error() {
  local name=$1 status=$2 want=$3; shift 4
  "$@" > /dev/null 2> "$tmp/stderr"
  local rc=$?
  local err; err=$(cat "$tmp/stderr")
  [ $rc -eq "$status" ] || fail "$name: exit status $rc, expected $status (stderr: $err)"
  [ "$(wc -l < "$tmp/stderr")" -eq 1 ] || fail "$name: stderr is not one line: $err"
  [[ "$err" == "tapeflow "*": ["* ]] || fail "$name: stderr does not start with 'tapeflow <command>: [': $err"
  [[ "$err" == *"$want"* ]] || fail "$name: stderr lacks '$want': $err"
  [[ "$err" != *"(at "*".cc:"* ]] || fail "$name: stderr names the tool's source line: $err"
}

"$make_bundle" "$tmp" > /dev/null || { echo "FAIL: make_test_bundle failed"; exit 1; }
m=$tmp/model
version=$("$tf" --version) || fail "--version"
[[ "$version" == "tapeflow "[0-9]* ]] || fail "--version printed '$version'"

# ---- help ----
expect_ok "help" "usage: tapeflow <command>" "show DIR" "run DIR" "graph DIR|FILE.pb" -- "$tf" --help
expect_ok "help show" "usage: tapeflow show DIR" -- "$tf" show --help
expect_ok "help run" "usage: tapeflow run DIR" "--input NAME=FILE.npy" "--output NAME=FILE.npy" -- "$tf" run -h
expect_ok "help graph" "usage: tapeflow graph DIR|FILE" "--format dot|svg|text" -- "$tf" help graph

# ---- show ----
expect_ok "show" "written by tapeflow ${version#tapeflow }" "signatures (2):" "add (tapeflow/serve)" \
  "serve (tapeflow/serve)" "args_0  float32 [?,3]" "output_0  float32 [?,2]" "output_1  int64" \
  "args_1  int32   [?]" "MatMul" "ArgMax" "VarHandleOp" "stored tensors: 2 (2 variables), 32 bytes" \
  "serve/w  variable float32 [3,2]" "24 bytes" "serve/b  variable float32 [2]" -- "$tf" show "$m"
grep -Eq '^  MatMul +1$' "$tmp/last_stdout" || fail "show: no 'MatMul 1' op count line"
grep -Eq '^graph: [0-9]+ nodes, [0-9]+ op types$' "$tmp/last_stdout" || fail "show: no node count line"

# A bundle with cond and while_loop: its functions are listed, and it runs to the eager result.
expect_ok "show, control flow" "StatelessIf" "StatelessWhile" "functions (4):" "tapeflow_while_body_" -- "$tf" show "$tmp/looped"
grep -Eq '^  tapeflow_cond_true_[0-9]+ +[0-9]+ nodes?$' "$tmp/last_stdout" || fail "show: no function line for the cond"
expect_ok "run, control flow" "output_0: float32 [2,3] -> $tmp/looped.npy" -- \
  "$tf" run "$tmp/looped" --input "$tmp/x.npy" --output output_0="$tmp/looped.npy"
cmp -s "$tmp/looped.npy" "$tmp/expected_looped.npy" || fail "run: the control-flow bundle's output differs from the eager result"

# ---- run ----
expect_ok "run, printed" "output_0: " "9.5" "11.5" "-3.5" "-4.5" "output_1: " -- \
  "$tf" run "$m" --input args_0="$tmp/x.npy"
expect_ok "run, to files" "output_0: float32 [2,2] -> $tmp/o0.npy" "output_1: int64 [2] -> $tmp/o1.npy" -- \
  "$tf" run "$m" --signature serve --input "$tmp/x.npy" --output output_0="$tmp/o0.npy" --output=output_1="$tmp/o1.npy"
cmp -s "$tmp/o0.npy" "$tmp/expected_output_0.npy" || fail "run: output_0.npy differs from the eager result"
cmp -s "$tmp/o1.npy" "$tmp/expected_output_1.npy" || fail "run: output_1.npy differs from the eager result"
# The .npy bytes themselves: NumPy's v1.0 header for float32 (2, 2), data at byte 128.
head -c 128 "$tmp/o0.npy" | tail -c +11 | grep -q "^{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), } *$" ||
  fail "run: output_0.npy's header is not NumPy's"
[ "$(od -An -tx1 -j 128 "$tmp/o0.npy" | tr -d ' \n')" = "0000184100003841000060c0000090c0" ] ||
  fail "run: output_0.npy does not hold [[9.5, 11.5], [-3.5, -4.5]]"

# Destinations that are not plain files (Note [Atomic write]), all made inside $tmp: a link
# stays a link and its target gets the bytes; a FIFO is written through and stays a FIFO; a link
# to this process's stdout (what /dev/stdout is) when stdout is a pipe gets the bytes in it.
ln -s o_target.npy "$tmp/o_link.npy"
expect_ok "run, to a symlink" "-> $tmp/o_link.npy" -- "$tf" run "$m" --input "$tmp/x.npy" --output output_0="$tmp/o_link.npy"
[ -L "$tmp/o_link.npy" ] || fail "run to a symlink: the link was replaced"
cmp -s "$tmp/o_target.npy" "$tmp/expected_output_0.npy" || fail "run to a symlink: its target lacks output_0"
mkfifo "$tmp/o.fifo"
timeout 20 cat "$tmp/o.fifo" > "$tmp/fifo_out" &
reader=$!
expect_ok "run, to a FIFO" "-> $tmp/o.fifo" -- timeout 20 "$tf" run "$m" --input "$tmp/x.npy" --output output_0="$tmp/o.fifo"
[ -p "$tmp/o.fifo" ] || fail "run to a FIFO: the FIFO was replaced"
if [ -p "$tmp/o.fifo" ] && ! wait $reader; then fail "run to a FIFO: the reader got no end of file"; fi
cmp -s "$tmp/fifo_out" "$tmp/expected_output_0.npy" || fail "run to a FIFO: the reader did not get output_0"
kill $reader 2> /dev/null
ln -s /proc/self/fd/1 "$tmp/stdout_link"
"$tf" run "$m" --input "$tmp/x.npy" --output output_0="$tmp/stdout_link" 2> "$tmp/stderr" | cat > "$tmp/piped" ||
  fail "run to a link to stdout: $(cat "$tmp/stderr")"
[ -L "$tmp/stdout_link" ] || fail "run to a link to stdout: the link was replaced"
cmp -s <(head -c 144 "$tmp/piped") "$tmp/expected_output_0.npy" || fail "run to a link to stdout: no .npy on stdout"
[ "$(tail -c +145 "$tmp/piped")" = "output_0: float32 [2,2] -> $tmp/stdout_link" ] ||
  fail "run to a link to stdout: the line after the .npy is '$(tail -c +145 "$tmp/piped")'"

# An input laid out byte for byte as np.save writes np.array([[1, 1, 1], [1, 0, -1]], '<f4').
npy_header() {  # DICT: magic, v1.0, u16 length, the dict padded with spaces to 64, '\n'
  local dict=$1 pad
  pad=$(( (64 - (10 + ${#dict} + 1) % 64) % 64 ))
  local len=$(( ${#dict} + pad + 1 ))
  printf '\x93NUMPY\x01\x00'
  printf "\\x$(printf %02x $((len & 255)))\\x$(printf %02x $((len >> 8)))"
  printf '%s%*s\n' "$dict" "$pad" ""
}
{ npy_header "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
  printf '\x00\x00\x80\x3f\x00\x00\x80\x3f\x00\x00\x80\x3f\x00\x00\x80\x3f\x00\x00\x00\x00\x00\x00\x80\xbf'
} > "$tmp/numpy_x.npy"
[ "$(stat -c %s "$tmp/numpy_x.npy")" -eq 152 ] || fail "the hand-made .npy is not 128 + 24 bytes"
cmp -s "$tmp/numpy_x.npy" "$tmp/x.npy" || fail "make_test_bundle's x.npy differs from NumPy's layout"
expect_ok "run, numpy input" "-> $tmp/n0.npy" -- "$tf" run "$m" --input args_0="$tmp/numpy_x.npy" --output output_0="$tmp/n0.npy"
cmp -s "$tmp/n0.npy" "$tmp/expected_output_0.npy" || fail "run on NumPy's bytes: output_0 differs"

# Several inputs, int32, one-dimensional "(3,)" shapes.
{ npy_header "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }"
  printf '\x01\x00\x00\x00\x02\x00\x00\x00\xfd\xff\xff\xff'; } > "$tmp/a.npy"
{ npy_header "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }"
  printf '\x0a\x00\x00\x00\x14\x00\x00\x00\x1e\x00\x00\x00'; } > "$tmp/b.npy"
expect_ok "run add" "output_0: " "[11 22 27]" -- "$tf" run "$m" --signature add --input args_0="$tmp/a.npy" --input args_1="$tmp/b.npy"

# A run that fails inside the graph (the outer sum of 2^20 values would be 4 TiB): the kernel's
# message names no op, so the line gets the command's "[tapeflow run]" like every other.
expect_ok "run outer" "[[ 2  3 -2]" -- "$tf" run "$tmp/outer" --input "$tmp/a.npy"
{ npy_header "{'descr': '<i4', 'fortran_order': False, 'shape': (1048576,), }"; head -c 4194304 /dev/zero; } > "$tmp/big.npy"
expect_error "run, an error inside the graph" 1 \
  "tapeflow run: [tapeflow run] a int32 tensor of shape [1048576,1048576] needs 4398046511104 bytes, over the limit" -- \
  "$tf" run "$tmp/outer" --input "$tmp/big.npy"
# It names the bundle's node, and no line of the tool's own source ("created at tools/cli/...").
grep -q "in node 'Add' (Add)" "$tmp/stderr" || fail "run, an error inside the graph: no node named: $(cat "$tmp/stderr")"
grep -q "created at\|imported at" "$tmp/stderr" && fail "run, an error inside the graph: a source line: $(cat "$tmp/stderr")"

# ---- graph ----
expect_ok "graph dot" "digraph" "MatMul" "ArgMax" -- "$tf" graph "$m"
expect_ok "graph text" 'op: "MatMul"' 'name: "serve/w"' -- "$tf" graph "$m" --format text
cp "$tmp/last_stdout" "$tmp/g.pbtxt"
expect_ok "graph of a .pbtxt file" "digraph" "MatMul" -- "$tf" graph "$tmp/g.pbtxt" --format=dot
expect_ok "graph of a .pb file" 'op: "ArgMax"' -- "$tf" graph "$m/graph.pb" --format text
if command -v dot > /dev/null; then
  expect_ok "graph svg" "<svg" "</svg>" "MatMul" -- "$tf" graph "$m" --format svg
else
  echo "note: graphviz's dot is not installed; the svg output was not checked"
fi

# ---- bad input: one line on stderr, exit 1 (error) or 2 (usage) ----
"$tf" > /dev/null 2>&1; [ $? -eq 2 ] || fail "no arguments: exit status is not 2"
expect_error "unknown command" 2 "unknown command 'shw'" -- "$tf" shw "$m"
expect_error "--version extra" 2 "[tapeflow] unexpected argument 'extra' after '--version'" -- "$tf" --version extra
expect_error "help with two commands" 2 "unexpected argument 'graph' after 'help run'" -- "$tf" help run graph
expect_error "show --help extra" 2 "[tapeflow show] unexpected argument 'extra'" -- "$tf" show "$m" --help extra
expect_error "run --help, two dirs" 2 "[tapeflow run] unexpected argument" -- "$tf" run -h "$m" "$m"
expect_error "unknown option" 2 "unknown option '--sig'" -- "$tf" run "$m" --sig serve
expect_error "option without value" 2 "option '--input' needs a value" -- "$tf" run "$m" --input
expect_error "show without DIR" 2 "missing DIR" -- "$tf" show
expect_error "show two dirs" 2 "unexpected argument" -- "$tf" show "$m" "$m"
expect_error "show missing dir" 1 "[load_model] $tmp/nope: no such saved model directory" -- "$tf" show "$tmp/nope"
expect_error "show a file" 2 "is a file" -- "$tf" show "$m/graph.pb"
expect_error "run without --input" 2 "no --input" -- "$tf" run "$m"
expect_error "run unknown input" 2 "the signature has no input 'y' (inputs: args_0)" -- \
  "$tf" run "$m" --input y="$tmp/x.npy"
expect_error "run bare input, two inputs" 2 "has 2 inputs (args_0, args_1)" -- \
  "$tf" run "$m" --signature add --input "$tmp/a.npy"
expect_error "run missing input" 1 "input 'args_1' is not fed" -- "$tf" run "$m" --signature add --input args_0="$tmp/a.npy"
expect_error "run unknown signature" 1 "no signature 'nope' (signatures: add, serve)" -- \
  "$tf" run "$m" --signature nope --input "$tmp/x.npy"
expect_error "run wrong dtype" 1 "expected dtype float32 and shape [?,3], got int32 [3]" -- \
  "$tf" run "$m" --input "$tmp/a.npy"
head -c 140 "$tmp/x.npy" > "$tmp/truncated.npy"
expect_error "run truncated npy" 1 "[npy] $tmp/truncated.npy: shape [2,3] of float32 needs 24 bytes of data but the file holds 12 (truncated file?)" -- \
  "$tf" run "$m" --input "$tmp/truncated.npy"
printf 'not an array' > "$tmp/text.npy"
expect_error "run not npy" 1 "not a .npy file" -- "$tf" run "$m" --input "$tmp/text.npy"
expect_error "run missing npy" 1 "$tmp/missing.npy" -- "$tf" run "$m" --input "$tmp/missing.npy"
expect_error "run output to a missing dir" 1 "$tmp/no/dir/" -- \
  "$tf" run "$m" --input "$tmp/x.npy" --output output_0="$tmp/no/dir/o.npy"
mkdir "$tmp/out_dir"
expect_error "run output to a directory" 1 "[file_io] $tmp/out_dir: is a directory, not a file" -- \
  "$tf" run "$m" --input "$tmp/x.npy" --output output_0="$tmp/out_dir"
expect_error "run two outputs, one file" 2 "two outputs would be written to" -- \
  "$tf" run "$m" --input "$tmp/x.npy" --output output_0="$tmp/o.npy" --output output_1="$tmp/o.npy"
expect_error "graph bad format" 2 "unknown --format 'png' (dot, svg or text)" -- "$tf" graph "$m" --format png
expect_error "graph missing file" 1 "$tmp/none.pb" -- "$tf" graph "$tmp/none.pb"
# Ops tapeflow lacks: the graph is still drawn, from the GraphDef, the import's error in a comment.
printf 'node { name: "a" op: "NoSuchOp" }\nnode { name: "s/b" op: "AlsoMissing" input: "a:1" input: "^a" }\n' > "$tmp/unknown.pbtxt"
expect_ok "graph unknown ops" "// drawn from the GraphDef without importing it" "NoSuchOp (node a)" \
  '"a" -> "s/b" [label=":1"];' '"a" -> "s/b" [style=dashed];' 'label="s";' -- "$tf" graph "$tmp/unknown.pbtxt"
if command -v dot > /dev/null; then
  expect_ok "graph svg of unknown ops" "<svg" "AlsoMissing" -- "$tf" graph "$tmp/unknown.pbtxt" --format svg
fi
printf 'node { name: "a" op: ' > "$tmp/broken.pbtxt"
expect_error "graph broken text" 1 "broken.pbtxt" -- "$tf" graph "$tmp/broken.pbtxt" --format text
# Not UTF-8 in a string field (node { name: "\xff" }): only our line, not libprotobuf's own too.
printf '\x0a\x03\x0a\x01\xff' > "$tmp/utf8.pb"
expect_error "graph invalid UTF-8" 1 \
  "[read_graph_def] '$tmp/utf8.pb': [graph_def_from_binary] 5 bytes are not a GraphDef in binary format" -- \
  "$tf" graph "$tmp/utf8.pb"
expect_error "graph of a directory without graph.pb" 1 \
  "[read_graph_def] cannot open '$tmp/out_dir/graph.pb': No such file or directory" -- "$tf" graph "$tmp/out_dir"
expect_error "graph svg without dot" 1 "needs Graphviz's 'dot' program, which is not on PATH" -- \
  env PATH=/nonexistent "$tf" graph "$m" --format svg

# A damaged bundle: every command that loads it refuses it with the file's name.
cp -r "$m" "$tmp/damaged"
printf 'garbage' > "$tmp/damaged/variables.safetensors"
expect_error "show damaged" 1 "$tmp/damaged" -- "$tf" show "$tmp/damaged"
expect_error "run damaged" 1 "variables.safetensors" -- "$tf" run "$tmp/damaged" --input "$tmp/x.npy"
rm "$tmp/damaged/saved_model.pb"
expect_error "show incomplete" 1 "saved_model.pb: missing" -- "$tf" show "$tmp/damaged"

if [ $failures -ne 0 ]; then echo "cli test: $failures failure(s)"; exit 1; fi
echo "cli test: OK"
