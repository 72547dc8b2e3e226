#!/usr/bin/env bash
# Runs every exported model of <dir>/manifest.json in ONNX Runtime (Node.js, npm package
# onnxruntime-node) and compares its outputs with tapeflow's (max abs difference <= 1e-5).
#   run_onnxruntime.sh <dir> <npm prefix, e.g. build/tests/onnxruntime_node>
# The package is installed into the prefix on first use (its CPU binaries ship inside it, so
# install scripts are not run). Exit 77 (ctest: skipped) without node and npm, or when the
# install fails (offline).
set -euo pipefail
dir=$1
prefix=$2
version=1.30.0
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "run_onnxruntime: skipped: Node.js and npm are not installed"
  exit 77
fi
if [ ! -f "$prefix/node_modules/onnxruntime-node/package.json" ] ||
   ! grep -q "\"version\": \"$version\"" "$prefix/node_modules/onnxruntime-node/package.json"; then
  mkdir -p "$prefix"
  echo "run_onnxruntime: npm install onnxruntime-node@$version into $prefix"
  [ -f "$prefix/package.json" ] || echo '{"private": true}' >"$prefix/package.json"
  if ! timeout 300 npm install --prefix "$prefix" --no-audit --no-fund --ignore-scripts \
       "onnxruntime-node@$version" >"$prefix/npm-install.log" 2>&1; then
    echo "run_onnxruntime: skipped: npm install failed (offline?); see $prefix/npm-install.log"
    tail -5 "$prefix/npm-install.log" || true
    exit 77
  fi
fi
NODE_PATH="$prefix/node_modules" exec node "$(dirname "$0")/run_onnxruntime.js" "$dir"
