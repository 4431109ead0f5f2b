#!/usr/bin/env bash
# Measures one GPU as the H200 profile and the device validation rows were measured: builds the CUDA
# microbenchmarks with nvcc alone (no CMake, no clustersim build needed on the GPU machine), runs them,
# samples the GPU's clock and power while they run, then times the single-GPU GPT training steps.
#
#   calibration/measure_gpu.sh OUT_DIR [ROWS]      ROWS: gpt_train_step.py --rows (default: its rows)
#
# Writes to OUT_DIR: gemm_sweep.json copy_bandwidth.json l2_bandwidth.json launch_latency.json
# (clustersim-measurements/1: feed them to `clustersim calibrate`), train_steps.json (the rows of
# calibration/validation/data/*_device.json), smi_samples.csv (clock and power every 200 ms) and
# nvidia_smi.txt; it prints the UTC time each program starts (to place the samples). Needs nvcc,
# cuBLASLt, nvidia-smi and PyTorch (python3). About two minutes on an H200 (2026-11-28).
set -euo pipefail
out=${1:?usage: calibration/measure_gpu.sh OUT_DIR [ROWS]}
rows=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
bin=$(mktemp -d)
trap 'rm -rf "$bin"; [ -n "${sampler:-}" ] && kill "$sampler" 2>/dev/null || true' EXIT
arch=${CUDA_ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)}
nvidia-smi > "$out/nvidia_smi.txt"
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,clocks.max.mem,memory.total --format=csv >> "$out/nvidia_smi.txt"
for p in gemm_sweep copy_bandwidth l2_bandwidth launch_latency; do
  libs=""
  [ "$p" = gemm_sweep ] && libs="-lcublasLt"
  nvcc -O3 -std=c++17 -arch="sm_$arch" "$here/microbench/$p.cu" -o "$bin/$p" $libs &
done
wait
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
  --format=csv,nounits -lms 200 > "$out/smi_samples.csv" &
sampler=$!
for p in launch_latency copy_bandwidth l2_bandwidth gemm_sweep; do
  echo "== $p $(date -u +%H:%M:%S)"
  "$bin/$p" --out "$out/$p.json"
done
echo "== gpt_train_step $(date -u +%H:%M:%S)"
python3 "$here/microbench/gpt_train_step.py" ${rows:+--rows "$rows"} --out "$out/train_steps.json"
kill "$sampler"
sampler=
