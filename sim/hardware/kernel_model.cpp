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
//               for split-K slices s = 1, 2, 4, ... 16 while the grid does not fill the SMs
//               (tiles * s / 2 < sm_count) and each slice keeps k / s >= 256 (four 64-deep stages):
//               tiles   = ceil(m / tm) * ceil(n / tn) * batch
//               waves   = ceil(tiles * s / sm_count)
//               quant   = waves * sm_count * tm * tn / (m * n * batch * s)   (a partial tile or a partial
//                         wave costs as much as a full one: tile and wave quantization)
//               eff     = E(dtype) * tile(tm, tn) * align * (k/s) / (k/s + k_half(dtype))
//               tile    = ((1/tm + 1/tn) / (1/gemm_tile_m + 1/gemm_tile_n)) ^ -gemm_tile_exponent
//                         (operand bytes per flop grow as 1/tm + 1/tn: smaller tiles run less
//                         efficiently; 1 for the largest tile)
//               align   = (w / 16) ^ gemm_alignment_exponent, w the widest load (16, 8, 4, 2, 1 bytes)
//                         dividing a row of k operand elements (both operands K-major, as torch.nn.Linear
//                         calls cuBLAS): a row not a multiple of 16 bytes takes narrower-load kernels
//               k_half  = gemm_k_half * peak(dtype) / peak_16bit  (a per-tile fixed cost besides the
//                         store of C below: prologue, pipeline fill; in time it is the same, in k it
//                         scales with the dtype's rate)
//               E       = gemm_fp8_efficiency for fp8, mxfp8, nvfp4 when set, else gemm_max_efficiency
//               t_main  = flops * quant / (peak(dtype) * eff)
//               t_split = s > 1: 2 * s * m * n * batch * 4 bytes / bw (fp32 partial tiles written, then
//                         read back and reduced), after the main loop
//               the library's choice: the (tm, tn, s) of least t_main + t_split
//             t_compute = t_main at the clock the power cap allows (power_capped_clock.cpp): the main
//             loop's cycles, with the tensor cores busy u = flops / (peak(dtype) * t_main), stretched by
//             the clock falling from boost towards the sustained clock while the kernel runs.
//             fp8 (mxfp8, nvfp4) GEMMs keep the boost clock: Azure's cuBLASLt fp8 table on H100 (microbench.json
//             micro-0022..0024) rises from 8192^3 to 32768^3 (1290, 1377, 1382 TFLOP/s), no sign of
//             the throttling its bf16 shows, and the fp8 fit leaves 3.9 % median with the boost clock
//             against 6.9 % at the capped clock.
//             The operands stream in while the tensor cores work (a pipelined main loop), but the
//             epilogue's store of the C tile follows its main loop: a 128 x 256 tile holds an SM's
//             shared memory, so no other tile's main loop hides it. With bw = hbm_bandwidth_Bps *
//             gemm_memory_efficiency and C = m n batch x 2 bytes (4 for fp32 / tf32; fp8 GEMMs write bf16):
//               t = gemm_launch_s + max(t_compute, (bytes - C) / bw) + t_split + C / bw
//             (bytes - C: the operands A and B). Tile candidates tm, tn in {16, ..., 256}: a GEMM with
//             few rows puts them in a narrow tile side (wgmma / mma tiles 16 or 32 wide, cuBLAS swaps
//             A and B), so it does not pay for 64 padded rows.
//             An op without a shape (m, n or k = 0): t_compute = flops / (peak(dtype) * E) and the
//             epilogue overlaps (t = fixed + max(t_compute, bytes / bw)).
// attention   fused (FlashAttention-style) kernel, m query rows and n keys per (sequence, head), head
//             dimension k, batch = sequences x heads; fixed = gemm_launch_s. One thread block per 128
//             query rows of one head (FlashAttention-2's forward block):
//               blocks = batch * ceil(m / 128), quant = ceil(blocks / sm_count) * sm_count / blocks
//               t_compute = flops * quant / (peak(dtype) * attention_efficiency), at the capped clock as
//                           a GEMM's main loop
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
// fixed       the kernel class's (gemm_launch_s, kernel_launch_s) for a time per call (KernelTiming::
//             per_call: what the simulator and most measurements use). A profiler's kernel duration
//             (KernelTiming::kernel_duration, DeepGEMM's tables) pays min(that, kernel_launch_s): the
//             fixed time every kernel pays, fitted on the memory-bound kernels; the rest of a GEMM's
//             fixed cost (Vidur's H100: gemm_launch 4.5 us against kernel_launch 1.5 us) is the
//             library's host-side work per call (cuBLAS's heuristic and launch), which a per-call
//             timing of an op on an idle GPU sees and a kernel duration does not. Tested on DeepGEMM's
//             held-out small-M fp8 shapes (calibration/README.md): their times are 5..15 us, most of
//             which streams the weights at the fitted bandwidth.
//
// peak(dtype) is GpuSpec::peak_flops: the dense tensor-core peak of the dtype, or the vector fp32
// peak where the GPU has no tensor path for it.
#include "sim/hardware/kernel_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "sim/hardware/power_capped_clock.hpp"

namespace clustersim {
namespace {

constexpr double kAttentionQueryRows = 128.0;  // FlashAttention-2 forward: query rows per thread block
constexpr double kTileSizes[] = {16.0, 32.0, 64.0, 128.0, 256.0};
constexpr double kFullLoadBytes = 16.0;    // widest vector load (TMA / cp.async 16 B)
constexpr double kSplitKMaxSlices = 16.0;  // split-K slices the library considers
constexpr double kSplitKMinDepth = 256.0;  // smallest K per slice (four 64-deep stages of the main loop)
constexpr double kPartialBytes = 4.0;      // split-K partial tiles are fp32

double ceil_div(double a, double b) {
  return std::ceil(a / b);
}

bool has_shape(const ComputeOp& op) {
  return op.m > 0 && op.n > 0 && op.k > 0;
}

double gemm_efficiency(const GpuSpec& gpu, Precision p) {
  if (low_precision(p) && gpu.gemm_fp8_efficiency > 0.0) return gpu.gemm_fp8_efficiency;
  return gpu.gemm_max_efficiency;
}

double operand_element_bytes(Precision p) {
  if (low_precision(p)) return bytes_per_element(p);
  return p == Precision::fp32 || p == Precision::tf32 ? 4.0 : 2.0;
}

// The widest load (bytes, 16 down to 1) that divides a row of k operand elements.
double load_width_bytes(const ComputeOp& op) {
  const auto row_bytes = static_cast<std::uint64_t>(double(op.k) * operand_element_bytes(op.precision));
  std::uint64_t width = static_cast<std::uint64_t>(kFullLoadBytes);
  while (width > 1 && row_bytes % width != 0)
    width /= 2;
  return double(width);
}

double alignment_factor(const GpuSpec& gpu, const ComputeOp& op) {
  return std::pow(load_width_bytes(op) / kFullLoadBytes, gpu.gemm_alignment_exponent);
}

double gemm_bandwidth_Bps(const GpuSpec& gpu) {
  return gpu.hbm_bandwidth_Bps * gpu.gemm_memory_efficiency;
}

// The compute time of a tensor-core kernel that takes `boost_s` at the boost clock: at the clock the
// power cap allows (power_capped_clock.cpp), with the tensor cores busy flops / (peak * boost_s).
double at_capped_clock_s(const GpuSpec& gpu, const ComputeOp& op, double boost_s) {
  if (boost_s <= 0.0 || low_precision(op.precision)) return boost_s;  // fp8: the boost clock (above)
  const double utilization = op.flops / (gpu.peak_flops(op.precision) * boost_s);
  return capped_clock(gpu, utilization, boost_s).duration_s;
}

// The library's fastest (tile, split-K) at the boost clock: main-loop time and split-K reduction.
struct GemmPlan {
  double compute_s = 0.0;
  double reduction_s = 0.0;
};

GemmPlan gemm_plan(const GpuSpec& gpu, const ComputeOp& op) {
  const double peak = gpu.peak_flops(op.precision);
  const double e = gemm_efficiency(gpu, op.precision);
  if (!has_shape(op)) return {op.flops / (peak * e), 0.0};
  const double m = op.m, n = op.n, k = op.k, batch = std::max<std::uint32_t>(op.batch, 1);
  const double sms = std::max(gpu.sm_count, 1);
  const double largest_m = gpu.gemm_tile_m, largest_n = gpu.gemm_tile_n;
  const double k_half = gpu.gemm_k_half * peak / gpu.peak_16bit_flops();
  const double rate = peak * e * alignment_factor(gpu, op);
  GemmPlan best{std::numeric_limits<double>::infinity(), 0.0};
  for (double tm : kTileSizes) {
    for (double tn : kTileSizes) {
      if (tm * tn > largest_m * largest_n) continue;
      const double tiles = ceil_div(m, tm) * ceil_div(n, tn) * batch;
      const double tile =
          std::pow((1.0 / tm + 1.0 / tn) / (1.0 / largest_m + 1.0 / largest_n), -gpu.gemm_tile_exponent);
      for (double s = 1.0; s <= kSplitKMaxSlices; s *= 2.0) {
        if (s > 1.0 && (tiles * s / 2.0 >= sms || k / s < kSplitKMinDepth)) break;
        const double depth = k / s;
        const double quant = ceil_div(tiles * s, sms) * sms * tm * tn / (m * n * batch * s);
        const double compute_s = op.flops * quant / (rate * tile * depth / (depth + k_half));
        const double reduction_s = s > 1.0 ? 2.0 * s * m * n * batch * kPartialBytes / gemm_bandwidth_Bps(gpu) : 0.0;
        if (compute_s + reduction_s < best.compute_s + best.reduction_s) best = {compute_s, reduction_s};
      }
    }
  }
  return best;
}

// The bytes of C the epilogue stores (0 for an op without a shape: its bytes all overlap).
double gemm_output_bytes(const ComputeOp& op) {
  if (!has_shape(op)) return 0.0;
  // C is written in 32 bits for fp32 / tf32, else in 16 (fp8, mxfp8, nvfp4 GEMMs write bf16)
  const double element_bytes = op.precision == Precision::fp32 || op.precision == Precision::tf32 ? 4.0 : 2.0;
  const double c = double(op.m) * double(op.n) * std::max<std::uint32_t>(op.batch, 1) * element_bytes;
  return std::clamp(c, 0.0, std::max(op.bytes, 0.0));
}

// t = fixed + max(compute, memory) + serial: the parts of one kernel's time.
struct KernelParts {
  double compute_s = 0.0;
  double memory_s = 0.0;
  double serial_s = 0.0;  // overlaps neither
};

// Main loop at the capped clock; operand traffic overlapped with it; then the split-K reduction and
// the epilogue's store of C.
KernelParts gemm_parts(const GpuSpec& gpu, const ComputeOp& op) {
  KernelParts p;
  const double c_bytes = gemm_output_bytes(op);
  if (op.flops > 0.0) {
    const GemmPlan plan = gemm_plan(gpu, op);
    p.compute_s = at_capped_clock_s(gpu, op, plan.compute_s);
    p.serial_s = plan.reduction_s;
  }
  if (op.bytes > 0.0) {
    p.memory_s = (op.bytes - c_bytes) / gemm_bandwidth_Bps(gpu);
    p.serial_s += c_bytes / gemm_bandwidth_Bps(gpu);
  }
  return p;
}

KernelParts attention_parts(const GpuSpec& gpu, const ComputeOp& op) {
  KernelParts p;
  if (op.flops > 0.0) {
    double quant = 1.0;
    if (op.m > 0) {
      const double sms = std::max(gpu.sm_count, 1);
      const double blocks = std::max<std::uint32_t>(op.batch, 1) * ceil_div(op.m, kAttentionQueryRows);
      quant = ceil_div(blocks, sms) * sms / blocks;
    }
    p.compute_s =
        at_capped_clock_s(gpu, op, op.flops * quant / (gpu.peak_flops(op.precision) * gpu.attention_efficiency));
  }
  if (op.bytes > 0.0) p.memory_s = op.bytes / (gpu.hbm_bandwidth_Bps * gpu.memory_efficiency);
  return p;
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

KernelParts memory_bound_parts(const GpuSpec& gpu, const ComputeOp& op) {
  return {op.flops > 0.0 ? op.flops / gpu.vector_fp32_flops : 0.0, streaming_memory_s(gpu, op), 0.0};
}

struct KernelModel {
  KernelClass kernel;
  double GpuSpec::*fixed_s;
  KernelParts (*parts)(const GpuSpec&, const ComputeOp&);
};
constexpr KernelModel kKernelModels[] = {
    {KernelClass::gemm, &GpuSpec::gemm_launch_s, gemm_parts},
    {KernelClass::attention, &GpuSpec::gemm_launch_s, attention_parts},
    {KernelClass::elementwise, &GpuSpec::kernel_launch_s, memory_bound_parts},
    {KernelClass::normalization, &GpuSpec::kernel_launch_s, memory_bound_parts},
    {KernelClass::optimizer, &GpuSpec::kernel_launch_s, memory_bound_parts},
    {KernelClass::embedding, &GpuSpec::kernel_launch_s, memory_bound_parts},
    {KernelClass::loss, &GpuSpec::kernel_launch_s, memory_bound_parts},
};

// The fixed time of one call: the kernel class's; a kernel duration pays at most kernel_launch_s,
// the fixed time every kernel pays (fitted on the memory-bound kernels): the rest of a GEMM library's
// per-call cost (gemm_launch_s - kernel_launch_s) is its host-side work, outside the kernel.
double fixed_s(const GpuSpec& gpu, const KernelModel& model, KernelTiming timing) {
  const double per_call_s = gpu.*model.fixed_s;
  return timing == KernelTiming::kernel_duration ? std::min(per_call_s, gpu.kernel_launch_s) : per_call_s;
}

}  // namespace

std::string_view to_string(KernelTiming timing) {
  return timing == KernelTiming::kernel_duration ? "kernel_duration" : "per_call";
}

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

KernelTime kernel_time(const GpuSpec& gpu, const ComputeOp& op, KernelTiming timing) {
  for (const auto& model : kKernelModels) {
    if (model.kernel != op.kernel) continue;
    const KernelParts p = model.parts(gpu, op);
    return KernelTime{fixed_s(gpu, model, timing) + std::max(p.compute_s, p.memory_s) + p.serial_s,
                      p.compute_s > p.memory_s + p.serial_s};
  }
  return KernelTime{};
}

}  // namespace clustersim
