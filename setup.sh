#!/usr/bin/env bash
# clustersim: set everything up, then run the demo or the tests.
#
#   ./setup.sh demo    install what is missing, build, simulate a real cluster (the demo)
#   ./setup.sh test    install what is missing, build, run every test
#   ./setup.sh build   install what is missing, build only
#
# Python: a virtual environment in .venv (Debian's /usr/bin/python3, or $CLUSTERSIM_PYTHON) gets the
# package's dependencies from PyPI; the C++ build also builds the module clustersim._core and an
# importable package in build/python (PYTHONPATH=build/python), so the tests need no second C++ build.
# Users install the package with `pip install .` instead (README).
#
# Idempotent: packages already present are not reinstalled and the build is incremental. Installing
# needs root (apt-get) on Debian bookworm; without root, missing packages are listed and it stops.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(pwd)
BUILD_DIR=${CLUSTERSIM_BUILD_DIR:-$ROOT/build}
JOBS=$(nproc 2>/dev/null || echo 2)
PYTHON=${CLUSTERSIM_PYTHON:-/usr/bin/python3}
VENV=$ROOT/.venv
# PyPI packages of the venv: the package's dependencies, then the tests' and notebooks'.
PYTHON_PACKAGES=(numpy pandas matplotlib tqdm "dask[distributed]" pytest nbclient nbformat ipykernel)

# Debian packages the build and the tests need.
PACKAGES=(g++ cmake ninja-build pkg-config
          libsimgrid-dev libboost-graph-dev libeigen3-dev nlohmann-json3-dev
          libgtest-dev pybind11-dev libprotobuf-dev protobuf-compiler
          python3 python3-dev python3-venv python3-pip)
# Debian packages only the tests need: headless Chromium renders the purchase report (compare --html).
TEST_PACKAGES=(chromium)

install_packages() {
  local missing=()
  for p in "${PACKAGES[@]}" "$@"; do
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

# The venv, with its PyPI packages installed once (again only when the list changes).
setup_python() {
  [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
  local stamp="$VENV/.clustersim-packages" wanted="${PYTHON_PACKAGES[*]}"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
    echo "setup.sh: installing Python packages into .venv: $wanted"
    "$VENV/bin/python" -m pip install --disable-pip-version-check -q "${PYTHON_PACKAGES[@]}"
    echo "$wanted" > "$stamp"
  fi
}

build() {
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCLUSTERSIM_BUILD_PYTHON=ON -DPython_EXECUTABLE="$VENV/bin/python" >/dev/null
  cmake --build "$BUILD_DIR" -j "$JOBS"
}

# Python from the build: the package in build/python (its .py files link to bindings/python).
py() {
  PYTHONPATH="$BUILD_DIR/python${PYTHONPATH:+:$PYTHONPATH}" CLUSTERSIM_CLI="$BUILD_DIR/bin/clustersim" \
    "$VENV/bin/python" "$@"
}

demo() {
  echo
  echo "== Demo: GPT-3 1.3B, data parallel, on a DGX H100 SuperPOD (32 nodes, 256 GPUs) =="
  echo "   $BUILD_DIR/bin/clustersim simulate --cluster dgx-h100-superpod --workload gpt3-1.3b"
  echo
  "$BUILD_DIR/bin/clustersim" simulate --cluster dgx-h100-superpod --workload gpt3-1.3b
  echo
  echo "== The same from Python, and a sweep of cluster sizes (notebooks/ has more) =="
  echo
  py - <<'PY'
import clustersim as cs
report = cs.simulate(cs.Cluster.preset("dgx-h100-superpod"), cs.Workload.preset("gpt3-1.3b"))
print(repr(report))
print(report.breakdown, end="\n\n")
df = cs.sweep("dgx-h100-superpod", "gpt3-1.3b", grid={"nodes": [1, 4, 16, 64, 256]}, progress=False)
print(df[["nodes", "gpus", "step_time_s", "tokens_per_s", "mfu", "exposed_communication_s", "fits"]].to_string(index=False))
PY
}

run_tests() {
  ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS"
  echo "== Python: the package, sweeps, plots and notebooks (pytest tests/python) =="
  py -m pytest -p no:cacheprovider -q tests/python
}

case "${1:-}" in
  demo) install_packages; setup_python; build; demo ;;
  test) install_packages "${TEST_PACKAGES[@]}"; setup_python; build; run_tests ;;
  build) install_packages; setup_python; build ;;
  *) echo "usage: ./setup.sh demo|test|build" >&2; exit 2 ;;
esac
