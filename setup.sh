#!/usr/bin/env bash
# clustersim: set everything up, then run the demo or the tests.
#
#   ./setup.sh demo    install what is missing, build, simulate a real cluster (the demo)
#   ./setup.sh test    install what is missing, build, run every test
#   ./setup.sh build   install what is missing, build only
#
# Idempotent: packages already present are not reinstalled and the build is incremental. Installing
# needs root (apt-get) on Debian bookworm; without root, missing packages are listed and it stops.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(pwd)
BUILD_DIR=${CLUSTERSIM_BUILD_DIR:-$ROOT/build}
JOBS=$(nproc 2>/dev/null || echo 2)

# Debian packages the build and the tests need.
PACKAGES=(g++ cmake ninja-build pkg-config
          libsimgrid-dev libboost-graph-dev libeigen3-dev nlohmann-json3-dev
          libgtest-dev pybind11-dev libprotobuf-dev protobuf-compiler)

install_packages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup.sh: missing Debian packages: ${missing[*]}" >&2
    echo "setup.sh: run as root, or: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  echo "setup.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

build() {
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD_DIR" -j "$JOBS"
}

demo() {
  echo
  echo "== Demo: GPT-3 1.3B, data parallel, on a DGX H100 SuperPOD (32 nodes, 256 GPUs) =="
  echo "   $BUILD_DIR/bin/clustersim simulate --cluster dgx-h100-superpod --workload gpt3-1.3b"
  echo
  "$BUILD_DIR/bin/clustersim" simulate --cluster dgx-h100-superpod --workload gpt3-1.3b
}

run_tests() {
  ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS"
}

case "${1:-}" in
  demo) install_packages; build; demo ;;
  test) install_packages; build; run_tests ;;
  build) install_packages; build ;;
  *) echo "usage: ./setup.sh demo|test|build" >&2; exit 2 ;;
esac
