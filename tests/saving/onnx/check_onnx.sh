#!/usr/bin/env bash
# onnx's own checker on every exported model (full_check: strict shape and type inference too).
#   check_onnx.sh <dir with *.onnx>
# Exit 77 (ctest: skipped) when no python3 can import onnx (Debian: python3-onnx).
set -euo pipefail
dir=$1
# Debian's python3-onnx is in the system python's path; a pyenv python3 earlier on PATH lacks it.
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import onnx' >/dev/null 2>&1; then
    exec "$py" "$(dirname "$0")/check_onnx.py" "$dir"
  fi
done
echo "check_onnx: skipped: no python3 with the onnx module (apt-get install python3-onnx)"
exit 77
