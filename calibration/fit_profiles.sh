#!/bin/sh
# Refits the shipped calibration profiles from the measurements in calibration/data: the Llama-2-7B
# operator tables of Vidur for the GEMM and memory-bound families, the published FlashAttention-2
# figure for attention and (H100) the published cuBLASLt fp8 table for the fp8 GEMM efficiency and
# the measured H100's sustained bf16 GEMMs (calibration/power_cap/) for the clock under the power cap.
# The published STREAM figures (Azure's BabelStream-style HBM tables) set each GPU's HBM streaming
# efficiency (memory_efficiency) in closed form. Llama-2-70B's tables, the other published GEMM tables
# and the measured H100's fp16 GEMM are held out.
# Usage: calibration/fit_profiles.sh [path/to/clustersim]   (from the repository root: calibrate's
# default --data is calibration/data, relative to the working directory)
set -e
clustersim=${1:-build/bin/clustersim}
$clustersim calibrate --gpu a100-sxm4-80gb \
  vidur/compute/a100/Llama-2-7b-hf/mlp.csv 'published/microbench.json#micro-0009..micro-0013,micro-0015' \
  --held-out vidur/compute/a100/Llama-2-70b-hf/mlp.csv \
  --held-out 'published/microbench.json#micro-0001..micro-0008,micro-0058' \
  --description "A100 SXM4 80GB: fitted to Vidur's Llama-2-7B operator times (fp16, TP 1-8) and the published FlashAttention-2 figure; HBM streaming efficiency from the published STREAM table" \
  --out calibration/profiles/a100-sxm4-80gb.json
$clustersim calibrate --gpu h100-sxm5-80gb \
  vidur/compute/h100/Llama-2-7b-hf/mlp.csv 'published/microbench.json#micro-0019..micro-0032,micro-0034' \
  'calibration/power_cap/h100-device-gemm.json#h100dev-gemm-bf16-8192,h100dev-gemm-bf16-16384' \
  --held-out vidur/compute/h100/Llama-2-70b-hf/mlp.csv \
  --held-out 'published/microbench.json#micro-0061,micro-0076..micro-0098' \
  --held-out 'calibration/power_cap/h100-device-gemm.json#h100dev-gemm-fp16-8192' \
  --description "H100 SXM5 80GB: fitted to Vidur's Llama-2-7B operator times (fp16, TP 1-8), the published cuBLASLt fp8 GEMM table and FlashAttention-2 figure, and the measured H100's sustained bf16 GEMMs (the clock under the power cap); HBM streaming efficiency from the published STREAM table" \
  --out calibration/profiles/h100-sxm5-80gb.json
