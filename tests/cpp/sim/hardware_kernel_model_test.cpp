// Kernel time: the roofline with tile and wave quantization, against hand-worked cases on the H100
// catalogue entry (bf16 989.4 TFLOP/s, 132 SMs, 256x128 tiles, gemm_max_efficiency 0.80,
// gemm_k_half 64, 3350 GB/s at memory_efficiency 0.88, launch 4 us).
#include <gtest/gtest.h>

#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/kernel_model.hpp"

namespace clustersim {
namespace {

GpuSpec h100() {
  return find_gpu("h100-sxm5-80gb", "test", "");
}

ComputeOp gemm(std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  ComputeOp op;
  op.kernel = KernelClass::gemm;
  op.precision = Precision::bf16;
  op.m = m;
  op.n = n;
  op.k = k;
  op.flops = 2.0 * m * n * k;
  op.bytes = (double(m) * k + double(k) * n + double(m) * n) * 2.0;
  return op;
}

TEST(KernelModel, CatalogueParametersTheseCasesAssume) {
  const GpuSpec g = h100();
  EXPECT_DOUBLE_EQ(g.peak_flops(Precision::bf16), 989.4e12);
  EXPECT_EQ(g.sm_count, 132);
  EXPECT_EQ(g.gemm_tile_m, 256);
  EXPECT_EQ(g.gemm_tile_n, 128);
  EXPECT_DOUBLE_EQ(g.gemm_max_efficiency, 0.80);
  EXPECT_DOUBLE_EQ(g.gemm_k_half, 64.0);
  EXPECT_DOUBLE_EQ(g.memory_efficiency, 0.88);
  EXPECT_DOUBLE_EQ(g.kernel_launch_s, 4e-6);
}

TEST(KernelModel, LargeGemmIsComputeBound) {
  // 8192^3 bf16: 2 * 8192^3 = 1.0995e12 flops. Tiles 32 * 64 = 2048 over 132 SMs: 16 waves
  // (15.5 full), so the SMs do 16 * 132 / 2048 = 1.03125x the flops. eff = 0.80 * 8192 / 8256
  // = 0.79380. t = 4 us + 1.0995e12 * 1.03125 / (989.4e12 * 0.79380) = 4 us + 1443.7 us = 1447.7 us,
  // close to the naive 2 * 8192^3 / (989.4e12 * 0.80) = 1389.1 us.
  const KernelTime t = kernel_time(h100(), gemm(8192, 8192, 8192));
  EXPECT_NEAR(t.time_s, 1447.7e-6, 0.1e-6);
  EXPECT_TRUE(t.compute_bound);
}

TEST(KernelModel, ThinGemmIsMemoryBound) {
  // m = n = 8192, k = 16: bytes (8192*16 * 2 + 8192^2) * 2 = 134,742,016 -> 134.742e6 / (3350e9 *
  // 0.88) = 45.706 us; compute 2 * 8192^2 * 16 * 1.03125 / (989.4e12 * 0.80 * 16 / 80) = 13.99 us.
  // t = 4 + 45.706 = 49.706 us.
  const KernelTime t = kernel_time(h100(), gemm(8192, 8192, 16));
  EXPECT_NEAR(t.time_s, 49.706e-6, 0.001e-6);
  EXPECT_FALSE(t.compute_bound);
}

TEST(KernelModel, OneTileMoreThanTheSmsTakesTwoWaves) {
  // k = 16384, eff = 0.80 * 16384 / 16448 = 0.79689. One full wave: 132 SMs x 256 x 128 x 16384 x 2
  // = 141.73e9 flops / (989.4e12 * 0.79689) = 179.76 us.
  // 3072 x 1408: 12 x 11 = 132 tiles = one wave: 4 + 179.76 = 183.76 us.
  // 1792 x 2432: 7 x 19 = 133 tiles (0.8% more flops) = two waves: 4 + 359.53 = 363.53 us.
  const KernelTime one = kernel_time(h100(), gemm(3072, 1408, 16384));
  const KernelTime two = kernel_time(h100(), gemm(1792, 2432, 16384));
  EXPECT_NEAR(one.time_s, 183.76e-6, 0.01e-6);
  EXPECT_NEAR(two.time_s, 363.53e-6, 0.01e-6);
  EXPECT_NEAR(two.time_s / one.time_s, 1.978, 0.001);
  EXPECT_TRUE(one.compute_bound);
  EXPECT_TRUE(two.compute_bound);
}

TEST(KernelModel, BatchedGemmQuantizesTilesTimesBatch) {
  // 96 heads' worth of 256 x 128 GEMMs = 96 tiles: one (partial) wave, as long as 132 tiles.
  ComputeOp a = gemm(256, 128, 16384), b = gemm(256, 128, 16384);
  a.batch = 96;
  a.flops *= 96;
  b.batch = 132;
  b.flops *= 132;
  a.bytes = b.bytes = 0.0;  // compare the compute terms only
  EXPECT_NEAR(kernel_time(h100(), a).time_s, kernel_time(h100(), b).time_s, 1e-12);
}

TEST(KernelModel, AttentionUsesItsOwnEfficiency) {
  // 4 b s^2 h with b 1, s 8192, h 4096: 1.0995e12 flops / (989.4e12 * 0.33) = 3367.6 us, + 4 us.
  ComputeOp op;
  op.kernel = KernelClass::attention;
  op.flops = 4.0 * 8192.0 * 8192.0 * 4096.0;
  op.bytes = 8192.0 * 4096.0 * 2.0 * 4.0;  // Q, K, V, O
  const KernelTime t = kernel_time(h100(), op);
  EXPECT_NEAR(t.time_s, 4e-6 + op.flops / (989.4e12 * 0.33), 1e-12);
  EXPECT_NEAR(t.time_s, 3371.6e-6, 0.1e-6);
  EXPECT_TRUE(t.compute_bound);
}

TEST(KernelModel, ElementwiseIsBoundByMemory) {
  // 1 GB moved: 1e9 / (3350e9 * 0.88) = 339.21 us + 4 us; 1e9 vector flops take only 15 us.
  ComputeOp op;
  op.kernel = KernelClass::elementwise;
  op.flops = 1e9;
  op.bytes = 1e9;
  const KernelTime t = kernel_time(h100(), op);
  EXPECT_NEAR(t.time_s, 343.21e-6, 0.01e-6);
  EXPECT_FALSE(t.compute_bound);
}

TEST(KernelModel, VectorFlopsAreTheSecondRoofline) {
  // 1e12 flops over 1 MB on the CUDA cores: 1e12 / 66.9e12 = 14.948 ms.
  ComputeOp op;
  op.kernel = KernelClass::normalization;
  op.flops = 1e12;
  op.bytes = 1e6;
  const KernelTime t = kernel_time(h100(), op);
  EXPECT_NEAR(t.time_s, 4e-6 + 1e12 / 66.9e12, 1e-12);
  EXPECT_TRUE(t.compute_bound);
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
