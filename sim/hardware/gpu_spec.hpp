#pragma once
// One GPU model of the catalogue: datasheet figures and the kernel-model parameters, each with the
// source it came from (sim/hardware/catalogue/<id>.json).
#include <map>
#include <string>

#include "workloads/workload_spec.hpp"

namespace clustersim {

struct GpuSpec {
  std::string id;    // catalogue id: "h100-sxm5-80gb"
  std::string name;  // "NVIDIA H100 SXM5 80GB"

  // Dense tensor-core peaks (no sparsity), flop/s.
  double tensor_fp32_flops = 0.0;  // 0 when the GPU has no fp32 tensor path (then vector fp32 is used)
  double tensor_tf32_flops = 0.0;
  double tensor_fp16_flops = 0.0;
  double tensor_bf16_flops = 0.0;
  double tensor_fp8_flops = 0.0;   // 0: not supported
  double vector_fp32_flops = 0.0;  // CUDA cores

  int sm_count = 0;
  double boost_clock_hz = 0.0;
  double hbm_capacity_bytes = 0.0;
  double hbm_bandwidth_Bps = 0.0;
  double l2_bytes = 0.0;
  double l2_bandwidth_Bps = 0.0;
  double nvlink_bandwidth_Bps = 0.0;  // per direction, all links together
  double pcie_bandwidth_Bps = 0.0;    // per direction
  double tdp_w = 0.0;
  double idle_w = 0.0;

  // Kernel-model parameters (assumed until fitted by calibration).
  double kernel_launch_s = 4e-6;      // launch plus inter-kernel gap
  double gemm_max_efficiency = 0.8;   // fraction of tensor peak a large, well-shaped GEMM reaches
  double memory_efficiency = 0.85;    // fraction of HBM bandwidth a streaming kernel reaches
  double attention_efficiency = 0.6;  // fraction of tensor peak of fused attention
  // GEMM output tile of one thread block (one SM at a time) for tile and wave quantization, and the
  // inner dimension k at which a GEMM reaches half of gemm_max_efficiency (see kernel_model.cpp).
  int gemm_tile_m = 128;
  int gemm_tile_n = 128;
  double gemm_k_half = 64.0;

  // catalogue key ("tensor_bf16_tflops", with its unit) -> where the figure comes from
  std::map<std::string, std::string> sources;

  // Dense tensor-core peak for a dtype (falls back to the vector peak for fp32 without tensor cores).
  double peak_flops(Precision p) const;
  // True when the GPU has a tensor-core path for the dtype (false: peak_flops falls back to the
  // CUDA cores, e.g. bf16 on V100; fp8 before Hopper). Callers report such a fallback.
  bool has_tensor_path(Precision p) const;
};

}  // namespace clustersim
