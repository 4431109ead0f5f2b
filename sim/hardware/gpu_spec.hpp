#pragma once
// One GPU model of the catalogue: datasheet figures and the kernel-model parameters, each with the
// source it came from (sim/hardware/catalogue/<id>.json).
#include <map>
#include <string>

#include "sim/core/precision.hpp"

namespace clustersim {

struct GpuSpec {
  std::string id;    // catalogue id: "h100-sxm5-80gb"
  std::string name;  // "NVIDIA H100 SXM5 80GB"

  // Dense tensor-core peaks (no sparsity), flop/s.
  double tensor_fp32_flops = 0.0;  // 0 when the GPU has no fp32 tensor path (then vector fp32 is used)
  double tensor_tf32_flops = 0.0;
  double tensor_fp16_flops = 0.0;
  double tensor_bf16_flops = 0.0;
  double tensor_fp8_flops = 0.0;    // 0: not supported
  double tensor_mxfp8_flops = 0.0;  // block-scaled fp8 (OCP MXFP8, Blackwell); 0: not supported
  double tensor_nvfp4_flops = 0.0;  // block-scaled fp4 (NVFP4, Blackwell); 0: not supported
  double vector_fp32_flops = 0.0;   // CUDA cores

  int sm_count = 0;
  double boost_clock_hz = 0.0;
  double hbm_capacity_bytes = 0.0;
  double hbm_bandwidth_Bps = 0.0;
  double l2_bytes = 0.0;
  double l2_bandwidth_Bps = 0.0;
  double nvlink_bandwidth_Bps = 0.0;  // per direction, all links together
  double pcie_bandwidth_Bps = 0.0;    // per direction: the host link (PCIe, or NVLink-C2C on Grace systems)
  // The host memory tier (host_memory_tier.hpp): the host memory this GPU's share of its CPU holds and
  // streams (per GPU; a Grace CPU's LPDDR5X on GB200 / GB300). 0: not given (a PCIe host's DRAM, whose
  // size and bandwidth depend on the server, not the GPU).
  double host_memory_bytes = 0.0;
  double host_memory_bandwidth_Bps = 0.0;
  double tdp_w = 0.0;
  double idle_w = 0.0;

  // Kernel-model parameters (equations in kernel_model.cpp). The catalogue gives assumed values; a
  // calibration profile (calibration_profile.hpp) replaces them with values fitted to measurements.
  double kernel_launch_s = 2e-6;     // fixed time of a memory-bound kernel (launch, ramp-up, tail)
  double gemm_launch_s = 4e-6;       // fixed time of a GEMM or fused-attention kernel
  double gemm_max_efficiency = 0.8;  // fraction of the tensor peak a large, well-shaped GEMM reaches
  double gemm_fp8_efficiency = 0.0;  // the same for fp8 (and mxfp8, nvfp4) GEMMs; 0: gemm_max_efficiency
  // The same for fp8 GEMMs with DeepSeek-V3's fine-grained block scales and CUDA-core promotion
  // (training.fp8_recipe blockwise, DeepGEMM's kernels); 0: the GPU has no such kernels (blockwise refused).
  double gemm_fp8_blockwise_efficiency = 0.0;
  // GEMM output tile of one thread block (one SM at a time): the largest tile the library uses.
  int gemm_tile_m = 128;
  int gemm_tile_n = 128;
  double gemm_tile_exponent = 0.25;     // efficiency of smaller tiles (kernel_model.cpp)
  double gemm_k_half = 64.0;            // inner dimension (16-bit) at which a GEMM reaches half efficiency
  double gemm_memory_efficiency = 0.8;  // fraction of HBM bandwidth a memory-bound GEMM streams at
  // Efficiency of a GEMM whose operand rows are not a multiple of 16 bytes: (load width / 16)^this.
  double gemm_alignment_exponent = 0.0;
  double attention_efficiency = 0.6;  // fraction of tensor peak of fused attention
  // Fractions of HBM bandwidth reached by memory-bound kernels, by what they do.
  double memory_efficiency = 0.85;         // streaming: residual adds, copies, optimizer, loss
  double activation_efficiency = 0.85;     // activation functions (gelu, swiglu)
  double normalization_efficiency = 0.85;  // layer norm, RMS norm
  double rope_efficiency = 0.85;           // rotary position embedding
  double embedding_efficiency = 0.85;      // embedding lookup (gather) and its backward
  double row_bandwidth_Bps = 0.0;          // bandwidth of one thread block of a row-wise kernel; 0: unlimited
  double l2_reuse = 0.0;                   // fraction of a kernel's bytes served by L2 when they fit in it

  // Clock under the power cap (power_capped_clock.cpp): what a fully busy tensor path would draw at
  // the boost clock without a cap (0: not modelled, the boost clock holds), how steeply power rises
  // with the clock, and how fast the power controller brings the clock down to what tdp_w allows.
  double tensor_boost_w = 0.0;
  // Power of the fp8 (mxfp8, nvfp4) tensor path fully busy at a clock, / the 16-bit path's at the same
  // clock: the dynamic power per busy cycle by precision (energy per flop = this / the dtype's
  // flop-per-cycle ratio). 1: as the 16-bit path (fp8 then spends half the energy per flop).
  double tensor_fp8_power_ratio = 1.0;
  double clock_power_exponent = 3.0;
  double power_response_s = 0.0;
  // Not a catalogue figure: the power the tensor-core kernels may draw while they run, set per step
  // by the step clock (sim/power/step_clock.cpp) so that the step's mean power is at most tdp_w.
  // 0: tdp_w itself, the budget of a sustained load (a GEMM loop, the calibration measurements).
  double tensor_power_budget_w = 0.0;

  // catalogue key ("tensor_bf16_tflops", with its unit) -> where the figure comes from
  std::map<std::string, std::string> sources;

  // Dense tensor-core peak of the 16-bit path (bf16, else fp16; the vector peak without either):
  // the reference rate for gemm_k_half.
  double peak_16bit_flops() const;
  // Dense tensor-core peak for a dtype (falls back to the vector peak for fp32 without tensor cores).
  double peak_flops(Precision p) const;
  // True when the GPU has a tensor-core path for the dtype (false: peak_flops falls back to the
  // CUDA cores, e.g. bf16 on V100; fp8 before Hopper). Callers report such a fallback.
  bool has_tensor_path(Precision p) const;
};

}  // namespace clustersim
