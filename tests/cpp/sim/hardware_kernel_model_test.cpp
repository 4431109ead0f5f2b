// Kernel time: the roofline with tile and wave quantization, against hand-worked cases on the H100
// catalogue entry's prior (unfitted) parameters: bf16 989.4 TFLOP/s, 132 SMs, largest tile 256x128,
// tile exponent 0.25, gemm_max_efficiency 0.80, gemm_k_half 64, GEMM memory streaming at 0.88 of
// 3350 GB/s, 4 us per GEMM and 2 us per memory-bound kernel, 50 MiB of L2 at 8237 GB/s. A GEMM's
// store of C (m n x 2 bytes) follows its main loop: t = 4 us + max(compute, A + B bytes / bw) + C / bw.
// These cases hold the boost clock (tensor_boost_W = 0: no power cap); the clock under the cap has
// its own tests (hardware_power_capped_clock_test.cpp).
#include <cmath>

#include <gtest/gtest.h>

#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/kernel_model.hpp"
#include "sim_test_support.hpp"

namespace clustersim {
namespace {

GpuSpec h100() {
  return testing::h100_at_sustained_clock();
}

// The H100 with only its largest tile, 256x128 (tile exponent 10), and k_half 0: the split-K and
// alignment cases' GPU.
GpuSpec h100_largest_tile_only() {
  GpuSpec g = h100();
  g.gemm_tile_exponent = 10.0;
  g.gemm_k_half = 0.0;
  return g;
}

// GEMM operand streaming: 3350 GB/s of HBM at gemm_memory_efficiency 0.88.
constexpr double kOperandStream_Bps = 3350e9 * 0.88;

using testing::gemm;

ComputeOp memory_op(KernelClass kernel, const char* name, double bytes, std::uint32_t rows = 0) {
  ComputeOp op;
  op.name = name;
  op.kernel = kernel;
  op.bytes = bytes;
  op.m = rows;
  return op;
}

// The H100's time of a kernel of class `kernel` that moves `bytes` and runs `flops` on the CUDA cores.
KernelTime vector_kernel_time(KernelClass kernel, const char* name, double bytes, double flops) {
  ComputeOp op = memory_op(kernel, name, bytes);
  op.flops = flops;
  return kernel_time(h100(), op);
}

TEST(KernelModel, CatalogueParametersTheseCasesAssume) {
  const GpuSpec g = h100();
  EXPECT_DOUBLE_EQ(g.peak_flops(Precision::bf16), 989.4e12);
  EXPECT_DOUBLE_EQ(g.peak_16bit_flops(), 989.4e12);
  EXPECT_EQ(g.sm_count, 132);
  EXPECT_EQ(g.gemm_tile_m, 256);
  EXPECT_EQ(g.gemm_tile_n, 128);
  EXPECT_DOUBLE_EQ(g.gemm_tile_exponent, 0.25);
  EXPECT_DOUBLE_EQ(g.gemm_max_efficiency, 0.80);
  EXPECT_DOUBLE_EQ(g.gemm_k_half, 64.0);
  EXPECT_DOUBLE_EQ(g.gemm_memory_efficiency, 0.88);
  EXPECT_DOUBLE_EQ(g.memory_efficiency, 0.88);
  EXPECT_DOUBLE_EQ(g.gemm_launch_s, 4e-6);
  EXPECT_DOUBLE_EQ(g.kernel_launch_s, 2e-6);
  EXPECT_DOUBLE_EQ(g.l2_bandwidth_Bps, 8237e9);
  EXPECT_DOUBLE_EQ(g.l2_reuse, 0.0);
  EXPECT_DOUBLE_EQ(g.row_bandwidth_Bps, 0.0);
}

TEST(KernelModel, LargeGemmIsComputeBound) {
  // 8192^3 bf16: 2 * 8192^3 = 1.0995e12 flops. Largest tile: 32 * 64 = 2048 tiles over 132 SMs are
  // 16 waves (15.5 full), so the SMs do 16 * 132 / 2048 = 1.03125x the flops; every smaller tile also
  // pays >= 1.03125 at a lower tile efficiency. eff = 0.80 * 8192 / 8256 = 0.79380.
  // compute 1.0995e12 * 1.03125 / (989.4e12 * 0.79380) = 1443.72 us; it hides the operands' 2 * 8192^2
  // * 2 bytes / (3350e9 * 0.88) = 91.06 us but not the store of C, 8192^2 * 2 bytes = 45.53 us:
  // t = 4 + 1443.72 + 45.53 = 1493.24 us.
  const KernelTime t = kernel_time(h100(), gemm(8192, 8192, 8192));
  EXPECT_NEAR(t.time_s, 1493.24e-6, 0.01e-6);
  EXPECT_TRUE(t.compute_bound);
}

TEST(KernelModel, ThinGemmIsMemoryBound) {
  // m = n = 8192, k = 16: operands 8192*16 * 2 * 2 = 524,288 bytes -> 0.178 us, C 8192^2 * 2 =
  // 134,217,728 bytes -> 45.528 us at 3350e9 * 0.88; compute 2 * 8192^2 * 16 * 1.03125 / (989.4e12 *
  // 0.80 * 16 / 80) = 13.989 us, below the 45.706 us of all the bytes: memory-bound.
  // t = 4 + max(13.989, 0.178) + 45.528 = 63.518 us.
  const KernelTime t = kernel_time(h100(), gemm(8192, 8192, 16));
  EXPECT_NEAR(t.time_s, 63.518e-6, 0.001e-6);
  EXPECT_FALSE(t.compute_bound);
}

// Fifth-generation tensor cores (Blackwell: a GPU with an nvfp4 path) accumulate in Tensor Memory and
// the library's persistent kernels overlap one tile's store of C with the next tile's main loop: C
// joins the overlapped stream, t = 4 us + max(compute, (A + B + C) / bw). The same H100 figures with an
// nvfp4 peak (the parameters above; nvfp4's own rate plays no part in a bf16 GEMM):
TEST(KernelModel, AGpuWithTensorMemoryOverlapsTheStoreOfC) {
  GpuSpec blackwell_like = h100();
  blackwell_like.tensor_nvfp4_flops = 4.0 * blackwell_like.tensor_bf16_flops;
  // 8192^3 (LargeGemmIsComputeBound): compute 1443.72 us hides the operands 91.06 us and C 45.53 us:
  // t = 4 + 1443.72 = 1447.72 us (1493.24 us with the store after the main loop).
  const KernelTime large = kernel_time(blackwell_like, gemm(8192, 8192, 8192));
  EXPECT_NEAR(large.time_s, 1447.72e-6, 0.01e-6);
  EXPECT_NEAR(kernel_time(h100(), gemm(8192, 8192, 8192)).time_s - large.time_s, 45.53e-6, 0.01e-6);
  EXPECT_TRUE(large.compute_bound);
  // 8192 x 8192 x 16 (ThinGemmIsMemoryBound): all the bytes, 0.178 + 45.528 = 45.706 us, stream under
  // the 13.989 us of compute: t = 4 + 45.706 = 49.706 us (63.518 us serial).
  const KernelTime thin = kernel_time(blackwell_like, gemm(8192, 8192, 16));
  EXPECT_NEAR(thin.time_s, 49.706e-6, 0.001e-6);
  EXPECT_FALSE(thin.compute_bound);
}

TEST(KernelModel, OneTileMoreThanTheSmsTakesTwoWaves) {
  // With smaller tiles made hopeless (tile exponent 10), only 256x128 tiles count. k = 16384:
  // eff = 0.80 * 16384 / 16448 = 0.79689. One full wave: 132 SMs x 256 x 128 x 16384 x 2 = 141.73e9
  // flops / (989.4e12 * 0.79689) = 179.765 us.
  // The store of C: 3072 * 1408 * 2 bytes -> 2.934 us, 1792 * 2432 * 2 -> 2.957 us.
  // 3072 x 1408: 12 x 11 = 132 tiles = one wave: 4 + 179.765 + 2.934 = 186.699 us.
  // 1792 x 2432: 7 x 19 = 133 tiles (0.8% more flops) = two waves: 4 + 359.530 + 2.957 = 366.487 us.
  GpuSpec g = h100();
  g.gemm_tile_exponent = 10.0;
  const KernelTime one = kernel_time(g, gemm(3072, 1408, 16384));
  const KernelTime two = kernel_time(g, gemm(1792, 2432, 16384));
  EXPECT_NEAR(one.time_s, 186.699e-6, 0.001e-6);
  EXPECT_NEAR(two.time_s, 366.487e-6, 0.001e-6);
  EXPECT_TRUE(one.compute_bound);
  EXPECT_TRUE(two.compute_bound);
}

TEST(KernelModel, TheLibraryFallsBackToSmallerTilesWhenAWaveIsNearlyEmpty) {
  // The same 133-tile shape at the catalogue's tile exponent 0.25: 64x64 tiles make 28 x 38 = 1064
  // tiles in 9 waves (8.06), 9 * 132 * 64^2 / (1792 * 2432) = 1.11654x the flops, at a tile efficiency
  // ((1/64 + 1/64) / (1/256 + 1/128))^-0.25 = 0.78254: 1.42681x the ideal time, the best of the eight
  // tiles (256x128 pays 1.98496x, 128x128 1.59974x, 64x128 1.47533x; 16- and 32-wide tiles more).
  // t = 4 + 142.808e9 * 1.42681 / (989.4e12 * 0.79689) + 2.957 = 4 + 258.434 + 2.957 us = 265.391 us.
  const KernelTime t = kernel_time(h100(), gemm(1792, 2432, 16384));
  EXPECT_NEAR(t.time_s, 265.391e-6, 0.001e-6);
  // and the one-wave shape keeps the largest tile: 186.699 us
  EXPECT_NEAR(kernel_time(h100(), gemm(3072, 1408, 16384)).time_s, 186.699e-6, 0.001e-6);
}

TEST(KernelModel, AGemmOfFewRowsUsesANarrowTileAndStreamsItsWeights) {
  // 16 x 4096 x 4096 (16 tokens through a 4096 x 4096 weight). 16 x 32 tiles: 128 tiles in one wave,
  // 132 * 16 * 32 / (16 * 4096) = 1.03125x the flops at ((1/16 + 1/32) / (3/256))^-0.25 = 0.59460:
  // 1.73435x the ideal time, the best candidate (16 x 16: 1.86368x, 32 x 32: 3.13432x; a 64-row tile
  // would waste 3/4 of its rows). Compute alone: 4 + 5.3687e8 * 1.73435 / (989.4e12 * 0.80 * 4096 /
  // 4160) = 4 + 1.19475 us.
  ComputeOp op = gemm(16, 4096, 4096);
  const double bytes = op.bytes;
  op.bytes = 0.0;
  EXPECT_NEAR(kernel_time(h100(), op).time_s, 5.19475e-6, 0.00001e-6);
  // With its bytes it is memory-bound: the operands (16 * 4096 + 4096^2) * 2 bytes / (3350e9 * 0.88) =
  // 11.42656 us, then the store of C, 16 * 4096 * 2 bytes = 0.04446 us: 4 + 11.42656 + 0.04446 us.
  op.bytes = bytes;
  const KernelTime t = kernel_time(h100(), op);
  EXPECT_NEAR(t.time_s, 15.47102e-6, 0.00001e-6);
  EXPECT_FALSE(t.compute_bound);
}

TEST(KernelModel, BatchedGemmQuantizesTilesTimesBatch) {
  // With the largest tile only (tile exponent 10): 96 single-tile GEMMs (256 x 128) fill one partial
  // wave, as long as 132 of them.
  GpuSpec g = h100();
  g.gemm_tile_exponent = 10.0;
  ComputeOp a = gemm(256, 128, 16384), b = gemm(256, 128, 16384);
  a.batch = 96;
  a.flops *= 96;
  b.batch = 132;
  b.flops *= 132;
  a.bytes = b.bytes = 0.0;  // compare the compute terms only
  EXPECT_NEAR(kernel_time(g, a).time_s, kernel_time(g, b).time_s, 1e-12);
  // At the catalogue's exponent the 96 GEMMs switch to 128x64 tiles: 384 tiles in 3 waves,
  // 3 * 132 / 384 = 1.03125x the flops at ((1/128 + 1/64) / (3/256))^-0.25 = 0.84090 efficiency:
  // 1.22636 / 1.375 = 0.89190 of the single-tile time.
  const double single = kernel_time(g, a).time_s - 4e-6;
  EXPECT_NEAR((kernel_time(h100(), a).time_s - 4e-6) / single, 1.03125 / 0.840896 / 1.375, 1e-5);
}

// The library's tile choice: the (tm, tn) of least waves * tile time, by the formula of
// kernel_model.cpp. Compute term only (no bytes, no fixed cost, k_half 0), tile exponent 0.5, so a
// tile's efficiency is ((1/tm + 1/tn) / (1/256 + 1/128))^-0.5: 1 for 256x128 or 128x256, 0.86603 for
// 128x128, 0.70711 for 128x64; t = flops * quant / (989.4e12 * 0.80 * tile).
GpuSpec tile_choice_gpu() {
  GpuSpec g = h100();
  g.gemm_k_half = 0.0;
  g.gemm_tile_exponent = 0.5;
  g.gemm_launch_s = 0.0;
  return g;
}

ComputeOp compute_only(std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  ComputeOp op = gemm(m, n, k);
  op.bytes = 0.0;
  return op;
}

TEST(KernelModel, TileChoiceTakesTheLargeTileWhenItNeedsFewerWaves) {
  // 2048 x 2048: 256x128 tiles are 8 * 16 = 128 tiles, one wave on 132 SMs, quant 132 / 128 = 1.03125;
  // 128x128 tiles are 256 tiles, two waves, the same quant 1.03125 at efficiency 0.86603; every smaller
  // tile has quant >= 1 at a lower efficiency, and split-K (128 tiles x 2 < 2 x 132) only adds its
  // reduction. So the 256x128 (or 128x256) tile: t = flops * 1.03125 / (989.4e12 * 0.80).
  const ComputeOp op = compute_only(2048, 2048, 4096);
  EXPECT_NEAR(kernel_time(tile_choice_gpu(), op).time_s, op.flops * 1.03125 / (989.4e12 * 0.80), 1e-12);
}

TEST(KernelModel, TileChoiceTakesTheSmallerTileWhenTheLargeOneWastesAWave) {
  // 2304 x 2048: 256x128 tiles are 9 * 16 = 144 tiles, two waves (264 tile slots for 144): quant
  // 2 * 132 / 144 = 1.83333. 128x128 tiles are 288, three waves: quant 3 * 132 / 288 = 1.375, time
  // 1.375 / 0.86603 = 1.58771 against 1.83333; 128x64 (576 tiles, 5 waves: quant 1.14583 / 0.70711 =
  // 1.62046) and 64x64 (1152 tiles, 9 waves: quant 1.03125 / 0.61237 = 1.68404) are slower.
  const ComputeOp op = compute_only(2304, 2048, 4096);
  EXPECT_NEAR(kernel_time(tile_choice_gpu(), op).time_s, op.flops * 1.375 / std::sqrt(0.75) / (989.4e12 * 0.80), 1e-12);
}

TEST(KernelModel, AKernelDurationLeavesOutTheLibrarysHostSideCost) {
  // A profiler's kernel duration pays kernel_launch_s (2 us) as its fixed time, not gemm_launch_s
  // (4 us): the same GEMM is 2 us shorter. A memory-bound kernel's fixed time is kernel_launch_s
  // either way; with gemm_launch_s below kernel_launch_s the GEMM keeps its own.
  GpuSpec g = h100();
  const ComputeOp op = gemm(64, 7168, 2048);
  const double per_call = kernel_time(g, op).time_s;
  EXPECT_NEAR(kernel_time(g, op, KernelTiming::kernel_duration).time_s, per_call - 2e-6, 1e-15);
  const ComputeOp copy = memory_op(KernelClass::elementwise, "copy", 1e9);
  EXPECT_DOUBLE_EQ(kernel_time(g, copy, KernelTiming::kernel_duration).time_s, kernel_time(g, copy).time_s);
  g.gemm_launch_s = 1e-6;
  EXPECT_DOUBLE_EQ(kernel_time(g, op, KernelTiming::kernel_duration).time_s, kernel_time(g, op).time_s);
}

TEST(KernelModel, ASkinnyGemmWithALongKSplitsKAcrossTheSms) {
  // Only 256x128 tiles (tile exponent 10), k_half 0. 256 x 512 x 65536: 4 output tiles on 132 SMs.
  // Split into s slices of k: 4 s tiles, one wave while 4 s <= 132, quant = 132 / (4 s); s <= 16
  // (and k / 16 = 4096 >= 256). The fp32 partials cost 2 s x 256 x 512 x 4 bytes / (3350e9 x 0.88).
  //   s = 16: compute 2 x 256 x 512 x 65536 x 132 / 64 / (989.4e12 x 0.80) = 44.766 us, reduction
  //           16.777 MB / 2948 GB/s = 5.691 us: 50.457 us, the least (s = 8: 89.533 + 2.846 us).
  // The operands (256 + 512) x 65536 x 2 bytes take 34.147 us, under the main loop; the store of C
  // 256 x 512 x 2 bytes 0.089 us: t = 4 + 44.766 + 5.691 + 0.089 = 54.546 us, where one slice per tile
  // would take 4 + 716.3 + 0.089 us.
  const GpuSpec g = h100_largest_tile_only();
  const ComputeOp op = gemm(256, 512, 65536);
  const double main_s = op.flops * 132.0 / 64.0 / (989.4e12 * 0.80);
  const double split_s = 2.0 * 16 * 256 * 512 * 4.0 / kOperandStream_Bps;
  const double store_s = 256.0 * 512 * 2.0 / kOperandStream_Bps;
  EXPECT_NEAR(main_s, 44.766e-6, 0.001e-6);
  EXPECT_NEAR(split_s, 5.691e-6, 0.001e-6);
  const KernelTime t = kernel_time(g, op);
  EXPECT_NEAR(t.time_s, 4e-6 + main_s + split_s + store_s, 1e-12);
  EXPECT_TRUE(t.compute_bound);
  // A shape that fills the SMs without splitting does not split: 132 tiles, as OneTileMoreThanTheSms.
  EXPECT_NEAR(kernel_time(g, gemm(3072, 1408, 16384)).time_s,
              4e-6 + 2.0 * 3072 * 1408 * 16384 / (989.4e12 * 0.80) + 3072.0 * 1408 * 2 / kOperandStream_Bps, 1e-12);
}

TEST(KernelModel, AGemmBoundByItsOperandStreamDoesNotSplitK) {
  // The library picks the plan of least max(main loop, operand stream) + split-K reduction: a split
  // that shortens the main loop below the time the operands take to stream only adds its reduction.
  // Only 256x128 tiles (tile exponent 10), k_half 0. 64 x 16384 x 4096 bf16: 64 tiles of 128 x 256
  // (the 64 rows fill half of one), one wave on 132 SMs.
  //   s = 1: main loop 2 x 64 x 16384 x 4096 x (132 x 128 x 256 / (64 x 16384)) / (989.4e12 x 0.80)
  //          = 8.590e9 x 4.125 / 791.52e12 = 44.766 us
  //   s = 2: 128 tiles, quant 2.0625: 22.383 us, reduction 2 x 2 x 64 x 16384 x 4 / (3350e9 x 0.88)
  //          = 5.691 us
  //   operands (64 + 16384) x 4096 x 2 bytes / 2948 GB/s = 45.706 us: above both main loops.
  // By arithmetic alone s = 2 wins (28.07 against 44.77 us) and the kernel takes 4 + 45.706 + 5.691 +
  // 0.711 (the store of C, 64 x 16384 x 2 bytes) = 56.109 us; by the kernel's time s = 1 (45.706
  // against 51.397): 4 + 45.706 + 0.711 = 50.418 us.
  const GpuSpec g = h100_largest_tile_only();
  const ComputeOp op = gemm(64, 16384, 4096);
  const double operands_s = (64.0 + 16384.0) * 4096 * 2 / kOperandStream_Bps;
  const double store_s = 64.0 * 16384 * 2 / kOperandStream_Bps;
  EXPECT_NEAR(operands_s, 45.706e-6, 0.001e-6);
  EXPECT_NEAR(op.flops * 4.125 / (989.4e12 * 0.80), 44.766e-6, 0.001e-6);
  const KernelTime t = kernel_time(g, op);
  EXPECT_NEAR(t.time_s, 4e-6 + operands_s + store_s, 1e-12);
  EXPECT_NEAR(t.time_s, 50.418e-6, 0.001e-6);
  EXPECT_FALSE(t.compute_bound);
}

TEST(KernelModel, OperandRowsNotAMultipleOf16BytesCostTheAlignmentPenalty) {
  // Only 256x128 tiles, k_half 0, 8192 x 8192 x k bf16: compute bound, 16 waves (quant 1.03125).
  // k = 4096: rows of 8192 bytes, 16-byte loads. k = 4100: 8200 bytes, 8-byte loads: efficiency x
  // (8/16)^0.5. k = 4098: 4-byte loads, x (4/16)^0.5 = 0.5. k = 4095: 8190 bytes, 2-byte loads,
  // x (2/16)^0.5.
  const GpuSpec g = h100_largest_tile_only();
  EXPECT_DOUBLE_EQ(g.gemm_alignment_exponent, 0.5);
  const double store_s = 8192.0 * 8192 * 2 / kOperandStream_Bps;
  auto main_s = [&](std::uint32_t k, double align) {
    return 2.0 * 8192 * 8192 * k * 1.03125 / (989.4e12 * 0.80 * align);
  };
  EXPECT_NEAR(kernel_time(g, gemm(8192, 8192, 4096)).time_s, 4e-6 + main_s(4096, 1.0) + store_s, 1e-12);
  EXPECT_NEAR(kernel_time(g, gemm(8192, 8192, 4100)).time_s, 4e-6 + main_s(4100, std::sqrt(0.5)) + store_s, 1e-12);
  EXPECT_NEAR(kernel_time(g, gemm(8192, 8192, 4098)).time_s, 4e-6 + main_s(4098, 0.5) + store_s, 1e-12);
  EXPECT_NEAR(kernel_time(g, gemm(8192, 8192, 4095)).time_s, 4e-6 + main_s(4095, std::sqrt(0.125)) + store_s, 1e-12);
  // fp8 operands are 1 byte: k = 4104 rows are 4104 bytes, 8-byte loads; k = 4112 is aligned.
  ComputeOp fp8 = gemm(8192, 8192, 4104), fp8_aligned = gemm(8192, 8192, 4112);
  fp8.precision = fp8_aligned.precision = Precision::fp8;
  const double t8 = kernel_time(g, fp8).time_s, t8_aligned = kernel_time(g, fp8_aligned).time_s;
  EXPECT_GT(t8 / t8_aligned, 1.3);  // ~1/0.707 on the main loop, less the store of C and 8 fewer k
  // An unpadded vocabulary: the data-gradient GEMM of a 50257-entry output layer reads rows of 50257
  // bf16 (2-byte loads); padded to 50304 (a multiple of 64) the rows are 16-byte aligned.
  EXPECT_GT(kernel_time(g, gemm(8192, 4096, 50257)).time_s / kernel_time(g, gemm(8192, 4096, 50304)).time_s, 2.5);
}

TEST(KernelModel, Fp8GemmUsesItsOwnEfficiencyAndAScaledKHalf) {
  // fp8 at 1978.9 TFLOP/s with gemm_fp8_efficiency 0.71; k_half scales with the rate: 64 * 1978.9 /
  // 989.4 = 128.01. 8192^3: 4 us + 1.0995e12 * 1.03125 / (1978.9e12 * 0.71 * 8192 / 8320.01) = 823.63 us.
  ComputeOp op = gemm(8192, 8192, 8192);
  op.precision = Precision::fp8;
  op.bytes = 0.0;
  const double k_half = 64.0 * 1978.9 / 989.4;
  const double expected = 4e-6 + op.flops * 1.03125 / (1978.9e12 * 0.71 * 8192.0 / (8192.0 + k_half));
  EXPECT_NEAR(kernel_time(h100(), op).time_s, expected, 1e-12);
  EXPECT_NEAR(expected, 823.63e-6, 0.01e-6);
}

TEST(KernelModel, AttentionUsesItsOwnEfficiencyAndQuantizesQueryBlocks) {
  // 4 b s^2 h with b 1, s 8192, 32 heads of 128 (dense): 1.0995e12 flops / (989.4e12 * 0.33) = 3367.6 us;
  // 32 heads x 64 blocks of 128 queries = 2048 blocks over 132 SMs: 16 waves, 1.03125x; each block
  // 128 key tiles plus its fixed cost of 91.9 keys (1.436 tiles of 64): x 129.436 / 128 = 3511.8 + 4 us
  // (the model's other cases: hardware_attention_model_test.cpp).
  ComputeOp op;
  op.kernel = KernelClass::attention;
  op.m = op.n = 8192;
  op.k = 128;
  op.batch = 32;
  op.flops = 4.0 * 8192.0 * 8192.0 * 4096.0;
  op.bytes = 8192.0 * 4096.0 * 2.0 * 4.0;  // Q, K, V, O
  const KernelTime t = kernel_time(h100(), op);
  EXPECT_NEAR(t.time_s, 4e-6 + op.flops * 1.03125 * (128.0 + 91.9 / 64.0) / 128.0 / (989.4e12 * 0.33), 1e-12);
  EXPECT_NEAR(t.time_s, 3515.8e-6, 0.1e-6);
  EXPECT_TRUE(t.compute_bound);
}

TEST(KernelModel, ElementwiseIsBoundByMemory) {
  // 1 GB moved (larger than L2): 1e9 / (3350e9 * 0.88) = 339.21 us + 2 us; 1e9 vector flops 15 us.
  const KernelTime t = vector_kernel_time(KernelClass::elementwise, "fwd.residual1", 1e9, 1e9);
  EXPECT_NEAR(t.time_s, 341.21e-6, 0.01e-6);
  EXPECT_FALSE(t.compute_bound);
}

TEST(KernelModel, VectorFlopsAreTheSecondRoofline) {
  // 1e12 flops over 1 MB on the CUDA cores: 1e12 / 66.9e12 = 14.948 ms.
  const KernelTime t = vector_kernel_time(KernelClass::normalization, "fwd.ln1", 1e6, 1e12);
  EXPECT_NEAR(t.time_s, 2e-6 + 1e12 / 66.9e12, 1e-12);
  EXPECT_TRUE(t.compute_bound);
}

TEST(KernelModel, MemoryBoundKernelsUseTheEfficiencyOfTheirRole) {
  GpuSpec g = h100();
  g.activation_efficiency = 0.5;
  g.normalization_efficiency = 0.25;
  g.rope_efficiency = 0.4;
  g.embedding_efficiency = 0.1;
  const double bytes = 3350e6;  // 1 ms at the full 3350 GB/s
  EXPECT_NEAR(kernel_time(g, memory_op(KernelClass::elementwise, "bwd.activation", bytes)).time_s, 2e-6 + 2e-3, 1e-12);
  EXPECT_NEAR(kernel_time(g, memory_op(KernelClass::normalization, "fwd.ln1", bytes)).time_s, 2e-6 + 4e-3, 1e-12);
  EXPECT_NEAR(kernel_time(g, memory_op(KernelClass::elementwise, "vidur.rope", bytes)).time_s, 2e-6 + 2.5e-3, 1e-12);
  EXPECT_NEAR(kernel_time(g, memory_op(KernelClass::embedding, "fwd.embedding", bytes)).time_s, 2e-6 + 10e-3, 1e-12);
  EXPECT_NEAR(kernel_time(g, memory_op(KernelClass::elementwise, "fwd.residual2", bytes)).time_s, 2e-6 + 1e-3 / 0.88,
              1e-12);
  EXPECT_EQ(kernel_role(memory_op(KernelClass::elementwise, "bwd.activation", bytes)), "activation");
  EXPECT_EQ(kernel_role(memory_op(KernelClass::elementwise, "fwd.residual2", bytes)), "elementwise");
  EXPECT_EQ(kernel_role(memory_op(KernelClass::optimizer, "optimizer.adam", bytes)), "optimizer");
  EXPECT_EQ(efficiency_parameter(memory_op(KernelClass::normalization, "fwd.ln1", bytes)), "normalization_efficiency");
}

TEST(KernelModel, FewRowsCannotFillTheGpu) {
  // A row-wise kernel (one thread block per row) over 4 rows at 10 GB/s per block: 40 GB/s in all.
  // 4 MB / 40e9 = 100 us + 2 us; with 4096 rows the HBM limit applies: 4e6 / 2948e9 = 1.357 us.
  // (4 MB fits in L2, but l2_reuse is 0 in the catalogue's prior.)
  GpuSpec g = h100();
  g.row_bandwidth_Bps = 10e9;
  EXPECT_NEAR(kernel_time(g, memory_op(KernelClass::normalization, "n", 4e6, 4)).time_s, 102e-6, 1e-12);
  EXPECT_NEAR(kernel_time(g, memory_op(KernelClass::normalization, "n", 4e6, 4096)).time_s,
              2e-6 + 4e6 / (3350e9 * 0.88), 1e-15);
}

TEST(KernelModel, WorkingSetsInL2AreServedPartlyFromIt) {
  // l2_reuse 0.5: a 10 MB kernel (fits in 50 MiB) reads half from L2: 5e6 / 2948e9 + 5e6 / 8237e9
  // = 1.6961 + 0.6070 = 2.3031 us. A 1 GB kernel: f = 0.5 * 52.4288e6 / 1e9 = 0.026214.
  GpuSpec g = h100();
  g.l2_reuse = 0.5;
  EXPECT_NEAR(kernel_time(g, memory_op(KernelClass::elementwise, "e", 10e6)).time_s, 2e-6 + 2.3031e-6, 1e-10);
  const double f = 0.5 * 50.0 * 1048576.0 / 1e9;
  EXPECT_NEAR(kernel_time(g, memory_op(KernelClass::elementwise, "e", 1e9)).time_s,
              2e-6 + 1e9 * (1.0 - f) / (3350e9 * 0.88) + 1e9 * f / 8237e9, 1e-15);
}

TEST(KernelModel, DtypesWithoutTensorCoresRunOnCudaCores) {
  const GpuSpec v100 = find_gpu("v100-sxm2-32gb", "test", "");
  EXPECT_FALSE(v100.has_tensor_path(Precision::bf16));
  EXPECT_TRUE(v100.has_tensor_path(Precision::fp16));
  EXPECT_DOUBLE_EQ(v100.peak_flops(Precision::bf16), 15.7e12);
  EXPECT_DOUBLE_EQ(v100.peak_flops(Precision::fp16), 125e12);
  const GpuSpec a100 = find_gpu("a100-sxm4-80gb", "test", "");
  EXPECT_FALSE(a100.has_tensor_path(Precision::fp8));
  EXPECT_DOUBLE_EQ(a100.peak_flops(Precision::fp32), 19.5e12);  // no TF32 unless asked for
  EXPECT_DOUBLE_EQ(a100.peak_flops(Precision::tf32), 156e12);
}

}  // namespace
}  // namespace clustersim
