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
# H200: no public operator tables; fitted to the project's own microbenchmarks of one H200 (2026-11-28,
# calibration/measure_gpu.sh): its 16-bit and tf32 GEMM sweep (the clock under the 700 W cap with it),
# copies and launch latency. The fp8 GEMM efficiency comes from Azure's published ND H200 v5 cuBLASLt
# table, as the H100's does from Azure's H100 table; the project's own fp8 sweep is held out (that GPU
# throttled its fp8 GEMMs where Azure's did not: docs/validation.md). The memory-bound operator
# families (activation, normalization, rope, embedding) keep the catalogue's values, the H100
# profile's, and so does gemm_memory_efficiency, which no GEMM of the sweep is HBM-bound enough to fix.
# Its training steps (calibration/validation/data/h200_device.json) are held out too:
# `clustersim validate h200-device`.
d=device/h200-2026-11-28
$clustersim calibrate --gpu h200-sxm-141gb \
  "$d/gemm_sweep.json#dtype=bf16,dtype=fp16,dtype=tf32" $d/copy_bandwidth.json $d/l2_bandwidth.json \
  $d/launch_latency.json 'published/microbench.json#micro-0038..micro-0046' \
  --held-out "$d/gemm_sweep.json#dtype=fp8" --fixed gemm_memory_efficiency \
  --description "H200 SXM 141GB: fitted to the project's microbenchmarks of one H200 (cuBLASLt GEMM sweep over squares and Llama-2/GPT-3 projections in fp16, bf16 and tf32 under the 700 W cap; device-to-device and L2 copies; launch latency; 2026-11-28) and Azure's published ND H200 v5 fp8 cuBLASLt table; the memory-bound operator families keep the H100 profile's values (catalogue); its own fp8 sweep and its training steps are held out (validate h200-device). gemm_memory_efficiency keeps the catalogue's value (the H100 profile's): no GEMM of the sweep is bound by HBM for long enough to fix it (its smallest token count is 512; fitted, it ran to its bound 1); l2_reuse ends at 1: its L2 copies run on buffers the L2 holds whole" \
  --out calibration/profiles/h200-sxm-141gb.json
