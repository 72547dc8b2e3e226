#!/usr/bin/env bash
# Runs repl_pty.py (tapeflow-repl on a pseudo-terminal) with python3 (a ctest test; see
# tests/CMakeLists.txt). Exits 77 (ctest SKIP_RETURN_CODE) when python3 is not installed;
# repl_pty.py exits 77 itself when tapeflow-repl was not built.
#
#   bash run_repl_pty.sh PYTHON3 TAPEFLOW_REPL
set -uo pipefail
python=${1:-}
repl=${2:-}
if [ -z "$python" ] || [ ! -x "$python" ]; then
  echo "SKIP: python3 is not installed (apt-get install python3); it types at tapeflow-repl through a pty"
  exit 77
fi
exec "$python" "$(dirname "${BASH_SOURCE[0]}")/repl_pty.py" "$repl"
