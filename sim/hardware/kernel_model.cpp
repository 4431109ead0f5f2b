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
//               E       = gemm_fp8_efficiency for fp8, mxfp8, nvfp4 when set, else gemm_max_efficiency;
//                         gemm_fp8_blockwise_efficiency for block-scaled fp8 GEMMs (op.fp8_blockwise)
//               t_main  = flops * quant / (peak(dtype) * eff)
//               t_split = s > 1: 2 * s * m * n * batch * 4 bytes / bw (fp32 partial tiles written, then
//                         read back and reduced), after the main loop
//               the library's choice: the (tm, tn, s) of least max(t_main, t_operands) + t_split, with
//               t_operands = (bytes - C) / bw the operand stream below (it overlaps the main loop, so a
//               split-K whose reduction buys tensor time the stream does not let the kernel use is not
//               taken: a small-M GEMM streaming its weights runs unsplit); equal totals: least t_main
//             t_compute = t_main at the clock the power cap allows (power_capped_clock.cpp): the main
//             loop's cycles, with the tensor cores busy u = flops / (peak(dtype) * t_main), stretched by
//             the clock falling from boost towards the sustained clock while the kernel runs.
//             The same rule for every precision: the kernel's power per busy cycle is its dtype's
//             (power_capped_clock.cpp, tensor_fp8_power_ratio), so an fp8 GEMM, which spends less
//             energy per flop, throttles less than a bf16 one at the same cap: on a 700 W H100 not at
//             all (Azure's sustained fp8 table, microbench.json micro-0022..0024, rises with size by
//             wave quantization alone: the ratio is the bound it sets), under a 500 W cap by what the
//             same power model says.
//             The operands stream in while the tensor cores work (a pipelined main loop), but the
//             epilogue's store of the C tile follows its main loop: a 128 x 256 tile holds an SM's
//             shared memory, so no other tile's main loop hides it. With bw = hbm_bandwidth_Bps *
//             gemm_memory_efficiency and C = m n batch x 2 bytes (4 for fp32 / tf32; fp8 GEMMs write bf16):
//               t = gemm_launch_s + max(t_compute, (bytes - C) / bw) + t_split + C / bw
//             (bytes - C: the operands A and B). On the fifth-generation tensor cores (Blackwell:
//             GPUs with an nvfp4 path) the accumulator lives in Tensor Memory and the library's
//             persistent kernels double-buffer it, so the store of one tile's C overlaps the next
//             tile's main loop: there t = gemm_launch_s + max(t_compute, bytes / bw) + t_split
//             (mamf-finder's best Blackwell shapes, whose C is up to a third of their time at bw,
//             were 19-29 % slower in the model with the store serial: docs/validation.md).
//             Tile candidates tm, tn in {16, ..., 256}: a GEMM with
//             few rows puts them in a narrow tile side (wgmma / mma tiles 16 or 32 wide, cuBLAS swaps
//             A and B), so it does not pay for 64 padded rows.
//             An op without a shape (m, n or k = 0): t_compute = flops / (peak(dtype) * E) and the
//             epilogue overlaps (t = fixed + max(t_compute, bytes / bw)).
// attention   fused FlashAttention-2 kernel, m query rows and n keys per (sequence, head), head dimension
//             d = k, batch = sequences x heads; fixed = gemm_launch_s. FlashAttention-2 tiles the score
//             matrix (flash-attention's launch templates; block shapes by head dimension in
//             kFlashBlockShapes): the forward runs one thread block per R queries of one (sequence, head),
//             looping over key tiles of C; the backward one block per C keys, looping over query tiles
//             of R. A tile of R x C scores costs 4 R C d flops (forward; the backward's five matmuls and
//             recomputed softmax: 2.5 x). Per SM, one tile takes
//               tau   = 4 R C d [x 2.5 / b_bwd] / (peak(dtype) / sm_count * attention_efficiency * hd(d))
//               hd(d) = (d / (d + d_half)) / (128 / (128 + d_half)) * (128 / d)^gamma for d > 128
//                       (the softmax's work per score does not scale with d: small heads run below the
//                       d = 128 rate; d = 256 takes smaller blocks; hd(128) = 1, so attention_efficiency
//                       is the rate of head dimension 128 on long sequences)
//             A block costs its tiles plus a fixed cost of h_fwd keys (forward: loading Q, the
//             epilogue's O and log-sum-exp) or h_bwd queries (backward: dK, dV) in tile units.
//             Dense (no mask): every block has ceil(n / C) tiles (forward); the blocks run in waves:
//               t_compute = ceil(blocks / sm_count) * (tiles + h) * tau   (a short sequence underfills
//                           the GPU by the wave quantization of its blocks)
//             Causal mask (query i sees keys <= i + n - m): a block runs only the tiles that hold an
//             unmasked score, about half of them; the ceil(R / C) tiles on the diagonal cost c_diag
//             each (the mask is applied there), and the blocks differ in length, so the last ones to
//             start leave SMs idle: with W the summed block lengths and L the longest,
//               t_compute = max(W / sm_count + alpha * L, L) * tau
//             The op's flops (4 m n d batch, halved when causal, 2.5 x in the backward) set only the
//             tensor-core utilization of the clock under the power cap (as a GEMM's main loop).
//             d_half, gamma, h_fwd, h_bwd, b_bwd, c_diag and alpha: fitted to FlashAttention-2's
//             published H100 figures (calibration/attention/flash-attention-2-h100.json, from the
//             FlashAttention-3 paper: 30 figures fitted, median |error| 1.0 %, max 3.4 %; causal head
//             dimension 256 and backward head dimension 64 held out, 9 figures: median 3.3 %, max
//             5.0 %); attention_efficiency per GPU by the calibration profile (kernel_fit.cpp).
//             An op without a shape: t_compute = flops / (peak(dtype) * attention_efficiency [* b_bwd]).
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
#include <iterator>
#include <limits>
#include <string_view>

#include "sim/hardware/host_memory_tier.hpp"
#include "sim/hardware/power_capped_clock.hpp"

namespace clustersim {
namespace {

// FlashAttention-2's thread-block shapes by head dimension (flash-attention csrc/flash_attn/src
// flash_fwd_launch_template.h and flash_bwd_launch_template.h, the configurations an A100 / H100 takes
// without dropout; head dimension 256 on H100: 64 x 64, two blocks per SM). The first row whose
// head_dim_max is at least the op's head dimension applies (the last one beyond it).
struct FlashBlockShape {
  double head_dim_max;
  double forward_rows, forward_cols;    // forward kBlockM x kBlockN: queries per block, keys per tile
  double backward_rows, backward_cols;  // backward kBlockM x kBlockN: queries per tile, keys per block
};
constexpr FlashBlockShape kFlashBlockShapes[] = {
    {64.0, 128.0, 128.0, 128.0, 128.0},
    {128.0, 128.0, 64.0, 64.0, 128.0},
    {256.0, 64.0, 64.0, 64.0, 64.0},
};
// The attention model's shape parameters (top of the file), fitted by bench/fit_attention_shape.py to
// calibration/attention/flash-attention-2-h100.json (least squares on ln time).
constexpr double kAttentionHeadDimHalf = 20.1;            // d_half: softmax work per score, in head dims
constexpr double kAttentionWideHeadExponent = 0.279;      // gamma: d > 128 takes smaller blocks
constexpr double kAttentionForwardBlockKeys = 91.9;       // h_fwd: a forward block's fixed cost, in keys
constexpr double kAttentionBackwardBlockQueries = 273.7;  // h_bwd: a backward block's fixed cost, in queries
constexpr double kAttentionBackwardEfficiency = 0.879;    // b_bwd: backward rate / forward rate
constexpr double kAttentionDiagonalTileCost = 1.457;      // c_diag: a masked diagonal tile, in tiles
constexpr double kAttentionCausalTail = 0.788;            // alpha: the idle tail of unequal causal blocks
constexpr double kAttentionReferenceHeadDim = 128.0;      // hd(128) = 1
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
  return large_gemm_utilization(gpu, p);
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
  if (boost_s <= 0.0) return boost_s;
  const double utilization = op.flops / (gpu.peak_flops(op.precision) * boost_s);
  return capped_clock(gpu, utilization, boost_s, op.precision).duration_s;
}

// The bytes of C the epilogue stores (0 for an op without a shape: its bytes all overlap).
double gemm_output_bytes(const ComputeOp& op) {
  if (!has_shape(op)) return 0.0;
  // C is written in 32 bits for fp32 / tf32, else in 16 (fp8, mxfp8, nvfp4 GEMMs write bf16)
  const double element_bytes = op.precision == Precision::fp32 || op.precision == Precision::tf32 ? 4.0 : 2.0;
  const double c = double(op.m) * double(op.n) * std::max<std::uint32_t>(op.batch, 1) * element_bytes;
  return std::clamp(c, 0.0, std::max(op.bytes, 0.0));
}

// True when the GPU's GEMMs store C while the next tile's main loop runs (top of the file): the
// fifth-generation tensor cores (Blackwell, tcgen05) accumulate in Tensor Memory, not in registers, and
// the library's persistent kernels double-buffer that accumulator, so a tile's epilogue overlaps the
// next tile's MMAs (CUTLASS sm100 kernels). The block-scaled FP4 path is a tcgen05 feature: a GPU with
// an nvfp4 peak has it.
bool overlaps_gemm_epilogue(const GpuSpec& gpu) {
  return gpu.tensor_nvfp4_flops > 0.0;
}

// The library's fastest (tile, split-K) at the boost clock: main-loop time and split-K reduction.
struct GemmPlan {
  double compute_s = 0.0;
  double reduction_s = 0.0;
};

GemmPlan gemm_plan(const GpuSpec& gpu, const ComputeOp& op) {
  const double peak = gpu.peak_flops(op.precision);
  const double e = op.fp8_blockwise && gpu.gemm_fp8_blockwise_efficiency > 0.0 ? gpu.gemm_fp8_blockwise_efficiency
                                                                               : gemm_efficiency(gpu, op.precision);
  if (!has_shape(op)) return {op.flops / (peak * e), 0.0};
  const double m = op.m, n = op.n, k = op.k, batch = std::max<std::uint32_t>(op.batch, 1);
  const double sms = std::max(gpu.sm_count, 1);
  const double largest_m = gpu.gemm_tile_m, largest_n = gpu.gemm_tile_n;
  const double k_half = gpu.gemm_k_half * peak / gpu.peak_16bit_flops();
  const double rate = peak * e * alignment_factor(gpu, op);
  // The operands stream in while the main loop runs: a plan is as fast as the slower of the two, then
  // its split-K reduction (the library's heuristic picks by the kernel's time, not by its arithmetic:
  // no split-K whose reduction buys tensor time the operand stream does not let it use).
  // (with the epilogue overlapped, C's store streams with them: gemm_parts)
  const double streamed_bytes = op.bytes - (overlaps_gemm_epilogue(gpu) ? 0.0 : gemm_output_bytes(op));
  const double operands_s = op.bytes > 0.0 ? streamed_bytes / gemm_bandwidth_Bps(gpu) : 0.0;
  GemmPlan best{std::numeric_limits<double>::infinity(), 0.0};
  double best_total_s = std::numeric_limits<double>::infinity();
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
        const double total_s = std::max(compute_s, operands_s) + reduction_s;
        // equal totals (bound by the operand stream): the plan with the least tensor time
        if (total_s < best_total_s || (total_s == best_total_s && compute_s < best.compute_s)) {
          best = {compute_s, reduction_s};
          best_total_s = total_s;
        }
      }
    }
  }
  return best;
}

// t = fixed + max(compute, memory) + serial: the parts of one kernel's time.
struct KernelParts {
  double compute_s = 0.0;
  double memory_s = 0.0;
  double serial_s = 0.0;  // overlaps neither
};

// Main loop at the capped clock; operand traffic overlapped with it; then the split-K reduction and
// the epilogue's store of C (overlapped with the main loop where the accumulator is in Tensor Memory).
KernelParts gemm_parts(const GpuSpec& gpu, const ComputeOp& op) {
  KernelParts p;
  const double c_bytes = gemm_output_bytes(op);
  if (op.flops > 0.0) {
    const GemmPlan plan = gemm_plan(gpu, op);
    p.compute_s = at_capped_clock_s(gpu, op, plan.compute_s);
    p.serial_s = plan.reduction_s;
  }
  if (op.bytes > 0.0) {
    const bool overlapped = overlaps_gemm_epilogue(gpu);
    p.memory_s = (op.bytes - (overlapped ? 0.0 : c_bytes)) / gemm_bandwidth_Bps(gpu);
    if (!overlapped) p.serial_s += c_bytes / gemm_bandwidth_Bps(gpu);
  }
  return p;
}

const FlashBlockShape& flash_block_shape(double head_dim) {
  for (const auto& shape : kFlashBlockShapes)
    if (head_dim <= shape.head_dim_max) return shape;
  return kFlashBlockShapes[std::size(kFlashBlockShapes) - 1];
}

// hd(d): the rate of head dimension d relative to 128 (top of the file).
double head_dim_factor(double d) {
  const double h = kAttentionHeadDimHalf;
  const double softmax = (d / (d + h)) / (kAttentionReferenceHeadDim / (kAttentionReferenceHeadDim + h));
  return d > kAttentionReferenceHeadDim ? softmax * std::pow(kAttentionReferenceHeadDim / d, kAttentionWideHeadExponent)
                                        : softmax;
}

// The tiles of one thread block and how many blocks there are, per (sequence, head).
struct AttentionBlocks {
  double count = 0.0;       // blocks per (sequence, head)
  double tiles_sum = 0.0;   // tiles summed over those blocks (the fixed costs and diagonal extra included)
  double tiles_max = 0.0;   // the longest block
  double tile_flops = 0.0;  // flops of one tile
};

// The blocks' tiles, given b.count: without the causal mask every block runs `full_tiles`; with it
// block k runs tiles(k). Each block adds `fixed` tiles and the extra cost of its `diagonal` tiles.
template <class Tiles>
AttentionBlocks add_block_tiles(AttentionBlocks b, bool causal, double full_tiles, double fixed, double diagonal,
                                Tiles tiles) {
  if (!causal) {
    b.tiles_max = full_tiles + fixed;
    b.tiles_sum = b.count * b.tiles_max;
    return b;
  }
  for (double k = 0.0; k < b.count; ++k) {
    const double block = tiles(k) + fixed + (kAttentionDiagonalTileCost - 1.0) * diagonal;
    b.tiles_sum += block;
    b.tiles_max = std::max(b.tiles_max, block);
  }
  return b;
}

// Forward: blocks of R queries over key tiles of C; backward: blocks of C keys over query tiles of R.
// With the causal mask (query i sees keys up to i + n - m) a block runs only its tiles with an unmasked
// score; ceil(R / C) (forward) or ceil(C / R) (backward) of them lie on the diagonal and cost c_diag.
AttentionBlocks attention_blocks(const ComputeOp& op) {
  const FlashBlockShape& shape = flash_block_shape(op.k);
  const double m = op.m, n = op.n, d = op.k;
  const double offset = std::max(n - m, 0.0);  // keys every query sees besides its own prefix
  AttentionBlocks b;
  if (!op.backward) {
    const double rows = shape.forward_rows, cols = shape.forward_cols;
    b.count = ceil_div(m, rows);
    b.tile_flops = 4.0 * rows * cols * d;
    // block i: the keys up to the last of its queries
    return add_block_tiles(b, op.causal, ceil_div(n, cols), kAttentionForwardBlockKeys / cols,
                           std::max(1.0, std::ceil(rows / cols)),
                           [&](double i) { return ceil_div(std::min(n, offset + (i + 1.0) * rows), cols); });
  }
  const double rows = shape.backward_rows, cols = shape.backward_cols;
  b.count = ceil_div(n, cols);
  b.tile_flops = kAttentionBackwardFlopsFactor * 4.0 * rows * cols * d / kAttentionBackwardEfficiency;
  // block j: the queries that see key j * C or a later one
  return add_block_tiles(b, op.causal, ceil_div(m, rows), kAttentionBackwardBlockQueries / rows,
                         std::max(1.0, std::ceil(cols / rows)),
                         [&](double j) { return ceil_div(m - std::max(0.0, j * cols - offset), rows); });
}

// Compute time at the boost clock (top of the file).
double attention_boost_s(const GpuSpec& gpu, const ComputeOp& op) {
  const double peak = gpu.peak_flops(op.precision);
  if (op.m == 0 || op.n == 0 || op.k == 0)
    return op.flops / (peak * gpu.attention_efficiency * (op.backward ? kAttentionBackwardEfficiency : 1.0));
  const double sms = std::max(gpu.sm_count, 1);
  const double sequences_heads = std::max<std::uint32_t>(op.batch, 1);
  const AttentionBlocks b = attention_blocks(op);
  const double tau = b.tile_flops * sms / (peak * gpu.attention_efficiency * head_dim_factor(op.k));
  double tiles = 0.0;
  if (!op.causal) {
    tiles = ceil_div(b.count * sequences_heads, sms) * b.tiles_max;
  } else {
    tiles = std::max(b.tiles_sum * sequences_heads / sms + kAttentionCausalTail * b.tiles_max, b.tiles_max);
  }
  return tiles * tau;
}

KernelParts attention_parts(const GpuSpec& gpu, const ComputeOp& op) {
  KernelParts p;
  if (op.flops > 0.0) p.compute_s = at_capped_clock_s(gpu, op, attention_boost_s(gpu, op));
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

// The parts of an offloaded optimizer step (training.optimizer_offload cpu; the generator's
// "optimizer.host_copy_out", "optimizer.<name>.host_update", "optimizer.host_copy_in"): no GPU kernel,
// the copies timed over the host link and the update at the host memory's bandwidth
// (host_memory_tier.cpp), nothing fixed added.
struct HostPart {
  std::string_view name_suffix;
  double (*time_s)(const GpuSpec&, double bytes);
};
constexpr HostPart kHostParts[] = {
    {"host_copy_out", &host_transfer_s},
    {"host_copy_in", &host_transfer_s},
    {"host_update", &host_update_s},
};

const HostPart* host_part(const ComputeOp& op) {
  if (op.kernel != KernelClass::optimizer) return nullptr;
  const auto dot = op.name.rfind('.');
  const std::string_view part = dot == std::string_view::npos ? op.name : op.name.substr(dot + 1);
  for (const auto& h : kHostParts)
    if (part == h.name_suffix) return &h;
  return nullptr;
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

bool host_side_op(const ComputeOp& op) {
  return host_part(op) != nullptr;
}

std::string_view kernel_role(const ComputeOp& op) {
  if (op.kernel == KernelClass::gemm) return "gemm";
  if (op.kernel == KernelClass::attention) return "attention";
  const MemoryRole* r = memory_role(op);
  return r != nullptr ? r->role : to_string(op.kernel);
}

std::string_view efficiency_parameter(const ComputeOp& op) {
  if (op.kernel == KernelClass::gemm) {
    if (op.fp8_blockwise) return "gemm_fp8_blockwise_efficiency";
    return low_precision(op.precision) ? "gemm_fp8_efficiency" : "gemm_max_efficiency";
  }
  if (op.kernel == KernelClass::attention) return "attention_efficiency";
  const MemoryRole* r = memory_role(op);
  return r != nullptr ? r->efficiency_key : "memory_efficiency";
}

KernelTime kernel_time(const GpuSpec& gpu, const ComputeOp& op, KernelTiming timing) {
  if (const HostPart* h = host_part(op)) return KernelTime{h->time_s(gpu, op.bytes), false};
  for (const auto& model : kKernelModels) {
    if (model.kernel != op.kernel) continue;
    const KernelParts p = model.parts(gpu, op);
    return KernelTime{fixed_s(gpu, model, timing) + std::max(p.compute_s, p.memory_s) + p.serial_s,
                      p.compute_s > p.memory_s + p.serial_s};
  }
  return KernelTime{};
}

}  // namespace clustersim
