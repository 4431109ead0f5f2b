// Kernel time of a compute op: a roofline with calibrated efficiencies per kernel class. SI units
// throughout (seconds, flop, bytes, flop/s, byte/s). The parameters are GpuSpec's kernel-model fields:
// assumed in the catalogue, fitted to measurements by a calibration profile (kernel_fit.cpp).
//
//   t = fixed + max(t_compute, t_memory) (+ a GEMM's epilogue, below)
//
// gemm        C[m x n] = A[m x k] B[k x n], `batch` times, on the tensor cores of the op's dtype.
//             fixed = gemm_launch_s. One thread block computes one tm x tn output tile on one SM at a
//             time. The library (cuBLAS) picks, per shape, the fastest of its tiles; the candidates are
//             tm, tn in {16, 32, 64, 128, 256} with tm * tn <= gemm_tile_m * gemm_tile_n (the largest tile):
//               tiles   = ceil(m / tm) * ceil(n / tn) * batch
//               waves   = ceil(tiles / sm_count)
//               quant   = waves * sm_count * tm * tn / (m * n * batch)   (a partial tile or a partial
//                         wave costs as much as a full one: tile and wave quantization)
//               eff     = E(dtype) * tile(tm, tn) * k / (k + k_half(dtype))
//               tile    = ((1/tm + 1/tn) / (1/gemm_tile_m + 1/gemm_tile_n)) ^ -gemm_tile_exponent
//                         (operand bytes per flop grow as 1/tm + 1/tn: smaller tiles run less
//                         efficiently; 1 for the largest tile)
//               k_half  = gemm_k_half * peak(dtype) / peak_16bit  (a per-tile fixed cost besides the
//                         store of C below: prologue, pipeline fill; in time it is the same, in k it
//                         scales with the dtype's rate)
//               E       = gemm_fp8_efficiency for fp8, mxfp8, nvfp4 when set, else gemm_max_efficiency
//               t_compute = min over tiles of flops * quant / (peak(dtype) * eff)
//             The operands stream in while the tensor cores work (a pipelined main loop), but the
//             epilogue's store of the C tile follows its main loop: a 128 x 256 tile holds an SM's
//             shared memory, so no other tile's main loop hides it. With bw = hbm_bandwidth_Bps *
//             gemm_memory_efficiency and C = m n batch x 2 bytes (4 for fp32 / tf32; fp8 GEMMs write bf16):
//               t = gemm_launch_s + max(t_compute, (bytes - C) / bw) + C / bw
//             (bytes - C: the operands A and B). Tile candidates tm, tn in {16, ..., 256}: a GEMM with
//             few rows puts them in a narrow tile side (wgmma / mma tiles 16 or 32 wide, cuBLAS swaps
//             A and B), so it does not pay for 64 padded rows.
//             An op without a shape (m, n or k = 0): t_compute = flops / (peak(dtype) * E) and the
//             epilogue overlaps (t = fixed + max(t_compute, bytes / bw)).
// attention   fused (FlashAttention-style) kernel, m query rows and n keys per (sequence, head), head
//             dimension k, batch = sequences x heads; fixed = gemm_launch_s. One thread block per 128
//             query rows of one head (FlashAttention-2's forward block):
//               blocks = batch * ceil(m / 128), quant = ceil(blocks / sm_count) * sm_count / blocks
//               t_compute = flops * quant / (peak(dtype) * attention_efficiency)
//             Causal masking is in the flops the op gives (half the score matrix is computed).
//             t_memory = bytes / (hbm_bandwidth_Bps * memory_efficiency).
// memory-bound kernels (elementwise, normalization, embedding, optimizer, loss); fixed = kernel_launch_s.
//               bw     = hbm_bandwidth_Bps * eff(role), and at most m * row_bandwidth_Bps when the op
//                        gives m > 0 rows (a row-wise kernel runs one thread block per row: with few
//                        rows the GPU is not filled)
//               f_L2   = l2_reuse * min(1, l2_bytes / bytes)  (the part of the working set that stays
//                        in L2 between kernels; 0 without an L2 bandwidth)
//               t_memory  = bytes * (1 - f_L2) / bw + bytes * f_L2 / l2_bandwidth_Bps
//               t_compute = flops / vector_fp32_flops
//             eff(role) by the registry kMemoryRoles: the kernel class, and for elementwise kernels the
//             role named by the last part of the op's name ("fwd.activation", "rope").
//
// peak(dtype) is GpuSpec::peak_flops: the dense tensor-core peak of the dtype, or the vector fp32
// peak where the GPU has no tensor path for it.
#include "sim/hardware/kernel_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

namespace clustersim {
namespace {

constexpr double kAttentionQueryRows = 128.0;  // FlashAttention-2 forward: query rows per thread block
constexpr double kTileSizes[] = {16.0, 32.0, 64.0, 128.0, 256.0};

double ceil_div(double a, double b) {
  return std::ceil(a / b);
}

double gemm_efficiency(const GpuSpec& gpu, Precision p) {
  if (low_precision(p) && gpu.gemm_fp8_efficiency > 0.0) return gpu.gemm_fp8_efficiency;
  return gpu.gemm_max_efficiency;
}

double gemm_compute_s(const GpuSpec& gpu, const ComputeOp& op) {
  const double peak = gpu.peak_flops(op.precision);
  const double e = gemm_efficiency(gpu, op.precision);
  if (op.m == 0 || op.n == 0 || op.k == 0) return op.flops / (peak * e);
  const double m = op.m, n = op.n, k = op.k, batch = std::max<std::uint32_t>(op.batch, 1);
  const double sms = std::max(gpu.sm_count, 1);
  const double largest_m = gpu.gemm_tile_m, largest_n = gpu.gemm_tile_n;
  const double k_half = gpu.gemm_k_half * peak / gpu.peak_16bit_flops();
  const double k_efficiency = k / (k + k_half);
  double best = std::numeric_limits<double>::infinity();
  for (double tm : kTileSizes) {
    for (double tn : kTileSizes) {
      if (tm * tn > largest_m * largest_n) continue;
      const double tiles = ceil_div(m, tm) * ceil_div(n, tn) * batch;
      const double quant = ceil_div(tiles, sms) * sms * tm * tn / (m * n * batch);
      const double tile =
          std::pow((1.0 / tm + 1.0 / tn) / (1.0 / largest_m + 1.0 / largest_n), -gpu.gemm_tile_exponent);
      best = std::min(best, op.flops * quant / (peak * e * tile * k_efficiency));
    }
  }
  return best;
}

// The bytes of C the epilogue stores (0 for an op without a shape: its bytes all overlap).
double gemm_output_bytes(const ComputeOp& op) {
  if (op.m == 0 || op.n == 0 || op.k == 0) return 0.0;
  // C is written in 32 bits for fp32 / tf32, else in 16 (fp8, mxfp8, nvfp4 GEMMs write bf16)
  const double element_bytes = op.precision == Precision::fp32 || op.precision == Precision::tf32 ? 4.0 : 2.0;
  const double c = double(op.m) * double(op.n) * std::max<std::uint32_t>(op.batch, 1) * element_bytes;
  return std::clamp(c, 0.0, std::max(op.bytes, 0.0));
}

// Operand traffic, overlapped with the main loop.
double gemm_memory_s(const GpuSpec& gpu, const ComputeOp& op) {
  return (op.bytes - gemm_output_bytes(op)) / (gpu.hbm_bandwidth_Bps * gpu.gemm_memory_efficiency);
}

// The epilogue's store of C, after the main loop.
double gemm_epilogue_s(const GpuSpec& gpu, const ComputeOp& op) {
  return gemm_output_bytes(op) / (gpu.hbm_bandwidth_Bps * gpu.gemm_memory_efficiency);
}

double attention_compute_s(const GpuSpec& gpu, const ComputeOp& op) {
  double quant = 1.0;
  if (op.m > 0) {
    const double sms = std::max(gpu.sm_count, 1);
    const double blocks = std::max<std::uint32_t>(op.batch, 1) * ceil_div(op.m, kAttentionQueryRows);
    quant = ceil_div(blocks, sms) * sms / blocks;
  }
  return op.flops * quant / (gpu.peak_flops(op.precision) * gpu.attention_efficiency);
}

double attention_memory_s(const GpuSpec& gpu, const ComputeOp& op) {
  return op.bytes / (gpu.hbm_bandwidth_Bps * gpu.memory_efficiency);
}

// Memory-bound kernels by role: the kernel class, and for elementwise kernels the prefix of the last
// part of the op's name (the first matching row; an empty prefix matches every name).
struct MemoryRole {
  KernelClass kernel;
  std::string_view name_prefix;
  std::string_view role;
  double GpuSpec::*efficiency;
  std::string_view efficiency_key;  // its catalogue key
};
constexpr MemoryRole kMemoryRoles[] = {
    {KernelClass::elementwise, "activation", "activation", &GpuSpec::activation_efficiency, "activation_efficiency"},
    {KernelClass::elementwise, "rope", "rope", &GpuSpec::rope_efficiency, "rope_efficiency"},
    // residual adds, copies
    {KernelClass::elementwise, "", "elementwise", &GpuSpec::memory_efficiency, "memory_efficiency"},
    {KernelClass::normalization, "", "normalization", &GpuSpec::normalization_efficiency, "normalization_efficiency"},
    {KernelClass::embedding, "", "embedding", &GpuSpec::embedding_efficiency, "embedding_efficiency"},
    {KernelClass::optimizer, "", "optimizer", &GpuSpec::memory_efficiency, "memory_efficiency"},
    {KernelClass::loss, "", "loss", &GpuSpec::memory_efficiency, "memory_efficiency"},
};

const MemoryRole* memory_role(const ComputeOp& op) {
  const auto dot = op.name.rfind('.');
  const std::string_view part = dot == std::string_view::npos ? op.name : op.name.substr(dot + 1);
  for (const auto& r : kMemoryRoles) {
    if (r.kernel == op.kernel && part.substr(0, r.name_prefix.size()) == r.name_prefix) return &r;
  }
  return nullptr;
}

double memory_bound_efficiency(const GpuSpec& gpu, const ComputeOp& op) {
  const MemoryRole* r = memory_role(op);
  return r != nullptr ? gpu.*r->efficiency : gpu.memory_efficiency;
}

double streaming_memory_s(const GpuSpec& gpu, const ComputeOp& op) {
  if (op.bytes <= 0.0) return 0.0;
  double bandwidth = gpu.hbm_bandwidth_Bps * memory_bound_efficiency(gpu, op);
  if (op.m > 0 && gpu.row_bandwidth_Bps > 0.0) bandwidth = std::min(bandwidth, op.m * gpu.row_bandwidth_Bps);
  const double l2 = gpu.l2_bandwidth_Bps > 0.0 ? gpu.l2_reuse * std::min(1.0, gpu.l2_bytes / op.bytes) : 0.0;
  return op.bytes * (1.0 - l2) / bandwidth + (l2 > 0.0 ? op.bytes * l2 / gpu.l2_bandwidth_Bps : 0.0);
}

double vector_compute_s(const GpuSpec& gpu, const ComputeOp& op) {
  return op.flops / gpu.vector_fp32_flops;
}

// t = fixed + max(compute, memory) + serial (the part that overlaps neither; nullptr: none).
struct KernelModel {
  KernelClass kernel;
  double GpuSpec::*fixed_s;
  double (*compute_s)(const GpuSpec&, const ComputeOp&);
  double (*memory_s)(const GpuSpec&, const ComputeOp&);
  double (*serial_s)(const GpuSpec&, const ComputeOp&);
};
constexpr KernelModel kKernelModels[] = {
    {KernelClass::gemm, &GpuSpec::gemm_launch_s, gemm_compute_s, gemm_memory_s, gemm_epilogue_s},
    {KernelClass::attention, &GpuSpec::gemm_launch_s, attention_compute_s, attention_memory_s, nullptr},
    {KernelClass::elementwise, &GpuSpec::kernel_launch_s, vector_compute_s, streaming_memory_s, nullptr},
    {KernelClass::normalization, &GpuSpec::kernel_launch_s, vector_compute_s, streaming_memory_s, nullptr},
    {KernelClass::optimizer, &GpuSpec::kernel_launch_s, vector_compute_s, streaming_memory_s, nullptr},
    {KernelClass::embedding, &GpuSpec::kernel_launch_s, vector_compute_s, streaming_memory_s, nullptr},
    {KernelClass::loss, &GpuSpec::kernel_launch_s, vector_compute_s, streaming_memory_s, nullptr},
};

}  // namespace

std::string_view kernel_role(const ComputeOp& op) {
  if (op.kernel == KernelClass::gemm) return "gemm";
  if (op.kernel == KernelClass::attention) return "attention";
  const MemoryRole* r = memory_role(op);
  return r != nullptr ? r->role : to_string(op.kernel);
}

std::string_view efficiency_parameter(const ComputeOp& op) {
  if (op.kernel == KernelClass::gemm)
    return low_precision(op.precision) ? "gemm_fp8_efficiency" : "gemm_max_efficiency";
  if (op.kernel == KernelClass::attention) return "attention_efficiency";
  const MemoryRole* r = memory_role(op);
  return r != nullptr ? r->efficiency_key : "memory_efficiency";
}

KernelTime kernel_time(const GpuSpec& gpu, const ComputeOp& op) {
  for (const auto& model : kKernelModels) {
    if (model.kernel != op.kernel) continue;
    const double compute_s = op.flops > 0.0 ? model.compute_s(gpu, op) : 0.0;
    const double memory_s = op.bytes > 0.0 ? model.memory_s(gpu, op) : 0.0;
    const double serial_s = op.bytes > 0.0 && model.serial_s != nullptr ? model.serial_s(gpu, op) : 0.0;
    return KernelTime{gpu.*model.fixed_s + std::max(compute_s, memory_s) + serial_s, compute_s > memory_s + serial_s};
  }
  return KernelTime{};
}

}  // namespace clustersim
