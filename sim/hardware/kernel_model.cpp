// Kernel time of a compute op: a roofline with efficiencies per kernel class. SI units throughout
// (seconds, flop, bytes, flop/s, byte/s).
//
//   t = kernel_launch_s + max(t_compute, t_memory)
//   t_memory = bytes / (hbm_bandwidth_Bps * memory_efficiency)
//
// t_compute by kernel class (the registry kKernelModels below):
//
//   gemm        C[m x n] = A[m x k] B[k x n], `batch` times, on the tensor cores of the op's dtype.
//               One thread block computes one tile_m x tile_n output tile on one SM at a time:
//                 tiles   = ceil(m / tile_m) * ceil(n / tile_n) * batch
//                 waves   = ceil(tiles / sm_count)
//                 flops_q = waves * sm_count * tile_m * tile_n * k * 2  (a partial tile or a partial
//                           wave costs as much as a full one: tile and wave quantization)
//                 eff(k)  = gemm_max_efficiency * k / (k + gemm_k_half)  (short inner loops cannot hide
//                           the prologue/epilogue; assumed form until the calibration milestone fits it)
//                 t_compute = flops * (flops_q / (2 m n k batch)) / (peak(dtype) * eff(k))
//               An op without a shape (m, n or k = 0): flops / (peak(dtype) * gemm_max_efficiency).
//   attention   fused (FlashAttention-style) kernel: flops / (peak(dtype) * attention_efficiency).
//   elementwise, normalization, optimizer, embedding, loss: CUDA-core work,
//               flops / vector_fp32_flops; in practice t_memory dominates (memory-bound kernels).
//
// peak(dtype) is GpuSpec::peak_flops: the dense tensor-core peak of the dtype, or the vector fp32
// peak where the GPU has no tensor path for it. L2 reuse between kernels is not modelled yet.
#include "sim/hardware/kernel_model.hpp"

#include <algorithm>
#include <cmath>

namespace clustersim {
namespace {

double ceil_div(double a, double b) {
  return std::ceil(a / b);
}

double gemm_compute_s(const GpuSpec& gpu, const ComputeOp& op) {
  const double peak = gpu.peak_flops(op.precision);
  if (op.m == 0 || op.n == 0 || op.k == 0) return op.flops / (peak * gpu.gemm_max_efficiency);
  const double m = op.m, n = op.n, k = op.k, batch = std::max<std::uint32_t>(op.batch, 1);
  const double tile_m = gpu.gemm_tile_m, tile_n = gpu.gemm_tile_n, sms = gpu.sm_count;
  const double tiles = ceil_div(m, tile_m) * ceil_div(n, tile_n) * batch;
  const double waves = ceil_div(tiles, sms);
  const double quantized_flops = waves * sms * tile_m * tile_n * k * 2.0;
  const double shape_flops = 2.0 * m * n * k * batch;
  const double efficiency = gpu.gemm_max_efficiency * k / (k + gpu.gemm_k_half);
  return op.flops * (quantized_flops / shape_flops) / (peak * efficiency);
}

double attention_compute_s(const GpuSpec& gpu, const ComputeOp& op) {
  return op.flops / (gpu.peak_flops(op.precision) * gpu.attention_efficiency);
}

double vector_compute_s(const GpuSpec& gpu, const ComputeOp& op) {
  return op.flops / gpu.vector_fp32_flops;
}

struct KernelModel {
  KernelClass kernel;
  double (*compute_s)(const GpuSpec&, const ComputeOp&);
};
constexpr KernelModel kKernelModels[] = {
    {KernelClass::gemm, gemm_compute_s},          {KernelClass::attention, attention_compute_s},
    {KernelClass::elementwise, vector_compute_s}, {KernelClass::normalization, vector_compute_s},
    {KernelClass::optimizer, vector_compute_s},   {KernelClass::embedding, vector_compute_s},
    {KernelClass::loss, vector_compute_s},
};

}  // namespace

KernelTime kernel_time(const GpuSpec& gpu, const ComputeOp& op) {
  double compute_s = 0.0;
  for (const auto& model : kKernelModels) {
    if (model.kernel == op.kernel) {
      compute_s = op.flops > 0.0 ? model.compute_s(gpu, op) : 0.0;
      break;
    }
  }
  const double memory_s = op.bytes / (gpu.hbm_bandwidth_Bps * gpu.memory_efficiency);
  return KernelTime{gpu.kernel_launch_s + std::max(compute_s, memory_s), compute_s > memory_s};
}

}  // namespace clustersim
