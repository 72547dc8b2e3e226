#!/usr/bin/env bash
# Installs the Debian packages tapeflow needs (only the missing ones) and configures a build.
#
#   bash scripts/setup.sh            # packages + configure build/ (preset "release")
#   source scripts/setup.sh          # from another script: defines tf_install_packages, tf_configure
#
# Idempotent: dpkg-query checks each package first, and `apt-get update` runs only when
# something is missing. Needs root (or sudo) only when a package is missing.
set -euo pipefail

TF_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Why each package: see README.md, "Dependencies".
TF_PACKAGES=(
  build-essential cmake
  libeigen3-dev libabsl-dev libxtensor-dev xtl-dev libxsimd-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  libopenblas-dev zlib1g-dev ccache
  libprotobuf-dev protobuf-compiler  # GraphDef and saved-model signatures (TensorFlow's wire format)
  nlohmann-json3-dev       # safetensors checkpoint headers
  libonnx-dev              # ONNX's onnx.proto, compiled for export_onnx (the library is not linked)
  python3-onnx             # onnx.checker, for the ONNX export test (tests/saving/onnx)
  graphviz                 # dot: renders exported graphs (tests of the DOT export)
  clang-tools-22           # clang-repl-22, for the REPL test
  clang-22 libclang-rt-22-dev  # the asan preset: clang's ASan/UBSan and libFuzzer (tests/fuzz)
  libclang-22-dev libclang-cpp22-dev llvm-22-dev  # clang::Interpreter and LineEditor: tapeflow-repl (tools/repl)
  gdb                      # the pretty-printer test (tests/gdb)
  dataset-fashion-mnist    # the Fashion-MNIST IDX files (tutorials, later issues)
  libgrpc++-dev protobuf-compiler-grpc  # the cluster: Server, grpc:// sessions (distributed/)
  libopenmpi-dev openmpi-bin            # all_reduce and data-parallel training under mpirun (distributed/)
)

tf_log() { printf '\033[1m[tapeflow]\033[0m %s\n' "$*"; }

tf_install_packages() {
  local missing=() p
  for p in "${TF_PACKAGES[@]}"; do
    if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then
      missing+=("$p")
    fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    tf_log "packages: all ${#TF_PACKAGES[@]} present"
    return 0
  fi
  tf_log "packages: installing ${missing[*]}"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo=(sudo); else
      tf_log "error: missing packages (${missing[*]}) and not root; install them or run as root" >&2
      return 1
    fi
  fi
  local apt=(apt-get -o DPkg::Lock::Timeout=600 -y -q)
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive "${apt[@]}" update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive "${apt[@]}" install --no-install-recommends "${missing[@]}"
}

# tf_configure PRESET: configures the preset's build folder (see CMakePresets.json).
tf_configure() {
  local preset=${1:-release}
  shift || true
  tf_log "configure: cmake --preset $preset $*"
  (cd "$TF_ROOT" && cmake --preset "$preset" "$@")
}

# tf_jobs: parallel build jobs (one per core unless TAPEFLOW_JOBS says otherwise).
tf_jobs() { echo "${TAPEFLOW_JOBS:-$(nproc)}"; }

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  tf_install_packages
  tf_configure release "$@"
fi
