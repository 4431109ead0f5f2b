// The fused-attention kernel model (sim/hardware/kernel_model.cpp, `attention`): FlashAttention-2's
// thread blocks and tiles, the causal mask, head dimension, backward, against hand-worked cases, and
// its residual on FlashAttention-2's published H100 figures (calibration/attention/), fitted and held
// out. Hand-worked cases use the H100 catalogue entry at the boost clock (tensor_boost_W = 0):
// bf16 989.4 TFLOP/s, 132 SMs, attention_efficiency 0.33, and the model's shape parameters as
// documented: h_fwd 91.9 keys, h_bwd 273.7 queries, d_half 20.1, b_bwd 0.879, c_diag 1.457,
// alpha 0.788; head dimension 128 runs 128 x 64 forward blocks (64 x 128 backward), 64 runs 128 x 128.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/kernel_measurement.hpp"
#include "sim/hardware/kernel_model.hpp"
#include "sim_test_support.hpp"

namespace clustersim {
namespace {

GpuSpec h100() { return testing::h100_at_sustained_clock(); }

// b sequences x `heads` heads of s queries over s keys, head dimension d (Q, K, V, O bytes).
ComputeOp attention(double s, double d, std::uint32_t heads, bool causal = false, bool backward = false) {
  ComputeOp op;
  op.kernel = KernelClass::attention;
  op.m = op.n = static_cast<std::uint32_t>(s);
  op.k = static_cast<std::uint32_t>(d);
  op.batch = heads;
  op.causal = causal;
  op.backward = backward;
  op.flops = 4.0 * s * s * d * heads * (causal ? 0.5 : 1.0) * (backward ? kAttentionBackwardFlopsFactor : 1.0);
  op.bytes = 4.0 * s * d * heads * 2.0;
  return op;
}

double compute_s(const GpuSpec& g, const ComputeOp& op) {
  return kernel_time(g, op).time_s - g.gemm_launch_s;
}

// One 128 x 64 tile of head dimension 128 on one SM: 4 x 128 x 64 x 128 flops at 989.4e12 x 0.33 / 132.
double tile_d128_s() {
  return 4.0 * 128.0 * 64.0 * 128.0 * 132.0 / (989.4e12 * 0.33);
}

TEST(AttentionModel, DenseForwardRunsWholeBlocksInWaves) {
  // s 8192, 32 heads: 64 blocks of 128 queries per head, 2048 blocks over 132 SMs = 16 waves; each
  // block 8192 / 64 = 128 key tiles + 91.9 / 64 = 1.436 of fixed cost: 16 x 129.436 tiles.
  const double expected = 16.0 * (128.0 + 91.9 / 64.0) * tile_d128_s();
  EXPECT_NEAR(compute_s(h100(), attention(8192, 128, 32)), expected, 1e-9);
  EXPECT_NEAR(expected, 3511.8e-6, 0.1e-6);
}

TEST(AttentionModel, ShortSequenceUnderfillsTheGpuByWaveQuantization) {
  // s 1024: 8 blocks of 128 queries per head. 8 heads = 64 blocks and 16 heads = 128 blocks both fit in
  // one wave of 132 SMs and take the same time (16 + 1.436 tiles); 17 heads = 136 blocks take two.
  const GpuSpec g = h100();
  const double one_wave = (16.0 + 91.9 / 64.0) * tile_d128_s();
  EXPECT_NEAR(compute_s(g, attention(1024, 128, 8)), one_wave, 1e-12);
  EXPECT_NEAR(compute_s(g, attention(1024, 128, 16)), one_wave, 1e-12);
  EXPECT_NEAR(compute_s(g, attention(1024, 128, 17)), 2.0 * one_wave, 1e-12);
  // the 8-head kernel reaches 8 / 16 of the 16-head one's flop rate
  const double rate8 = attention(1024, 128, 8).flops / compute_s(g, attention(1024, 128, 8));
  const double rate16 = attention(1024, 128, 16).flops / compute_s(g, attention(1024, 128, 16));
  EXPECT_NEAR(rate8 / rate16, 0.5, 1e-12);
}

TEST(AttentionModel, CausalAtLongSequenceCostsAboutHalfOfDense) {
  // s 65536, 32 heads, forward. Dense: 512 blocks per head, 16384 blocks = 125 waves (124.1) of
  // 1024 + 1.436 tiles = 128179.5 tiles. Causal: block i runs 2 (i + 1) tiles (128 queries over
  // 64-key tiles), of which 2 on the diagonal cost 1.457 each, plus 1.436: sum over 512 blocks
  // 262656 + 512 x (1.436 + 0.914) = 263859.1 per head; x 32 / 132 SMs = 63965.9, plus the tail
  // 0.788 x the longest block (1024 + 2.35 = 1026.35) = 808.8: 64774.7 tiles, 0.5053 of dense.
  const GpuSpec g = h100();
  const double fixed = 91.9 / 64.0, diagonal = 2.0 * (1.457 - 1.0);
  const double dense_tiles = 125.0 * (1024.0 + fixed);
  const double per_head = 512.0 * 513.0 + 512.0 * (fixed + diagonal);
  const double causal_tiles = per_head * 32.0 / 132.0 + 0.788 * (1024.0 + fixed + diagonal);
  EXPECT_NEAR(compute_s(g, attention(65536, 128, 32)), dense_tiles * tile_d128_s(), 1e-9);
  EXPECT_NEAR(compute_s(g, attention(65536, 128, 32, true)), causal_tiles * tile_d128_s(), 1e-9);
  const double ratio = compute_s(g, attention(65536, 128, 32, true)) / compute_s(g, attention(65536, 128, 32));
  EXPECT_NEAR(ratio, causal_tiles / dense_tiles, 1e-9);
  EXPECT_NEAR(ratio, 0.5053, 0.0005);
  // at a short sequence the diagonal and the tail weigh more: s 1024 causal costs more than half
  const double short_ratio = compute_s(g, attention(1024, 128, 512, true)) / compute_s(g, attention(1024, 128, 512));
  EXPECT_GT(short_ratio, 0.6);
}

TEST(AttentionModel, HeadDim64IsLessEfficientThan128ByTheSoftmaxFactor) {
  // hd(64) = (64 / 84.1) / (128 / 148.1) = 0.88050. s 16384, 16 heads: d 64 runs 128 blocks of 128 x 128
  // tiles per head, 128 + 91.9 / 128 tiles each; d 128 runs 128 blocks of 128 x 64 tiles, 256 + 91.9 / 64:
  // the same waves and the same fixed cost per key, so the flop rates differ by hd(64) alone.
  const GpuSpec g = h100();
  const double hd64 = (64.0 / (64.0 + 20.1)) / (128.0 / (128.0 + 20.1));
  EXPECT_NEAR(hd64, 0.88050, 1e-5);
  const ComputeOp d64 = attention(16384, 64, 16), d128 = attention(16384, 128, 16);
  const double rate64 = d64.flops / compute_s(g, d64), rate128 = d128.flops / compute_s(g, d128);
  EXPECT_NEAR(rate64 / rate128, hd64, 1e-9);
}

TEST(AttentionModel, BackwardIsTwoAndAHalfTimesTheFlopsAtALowerRate) {
  // s 16384, 16 heads. Backward: 128 blocks of 128 keys per head over 64-query tiles: 256 + 273.7 / 64
  // tiles, each 2.5 / 0.879 forward tiles; forward: 128 blocks of 256 + 91.9 / 64. Same waves (16).
  const GpuSpec g = h100();
  const double expected = 2.5 / 0.879 * (256.0 + 273.7 / 64.0) / (256.0 + 91.9 / 64.0);
  const double ratio = compute_s(g, attention(16384, 128, 16, false, true)) / compute_s(g, attention(16384, 128, 16));
  EXPECT_NEAR(ratio, expected, 1e-9);
  EXPECT_NEAR(ratio, 2.8755, 0.0005);
}

TEST(AttentionModel, CausalQueriesAlignToTheLastKeys) {
  // 1024 queries over 2048 keys with the mask aligned to the end (each query sees the 1024 earlier
  // keys too): block i runs (1024 + 128 (i + 1)) / 64 tiles, more than the square causal case and
  // less than the dense one.
  const GpuSpec g = h100();
  ComputeOp op = attention(1024, 128, 132, true);
  op.n = 2048;
  ComputeOp dense = op;
  dense.causal = false;
  ComputeOp square = attention(1024, 128, 132, true);
  EXPECT_LT(compute_s(g, square), compute_s(g, op));
  EXPECT_LT(compute_s(g, op), compute_s(g, dense));
  double tiles = 0.0, longest = 0.0;
  for (int i = 0; i < 8; ++i) {
    const double block = (1024.0 + 128.0 * (i + 1)) / 64.0 + 91.9 / 64.0 + 2.0 * 0.457;
    tiles += block;
    longest = std::max(longest, block);
  }
  EXPECT_NEAR(compute_s(g, op), (tiles * 132.0 / 132.0 + 0.788 * longest) * tile_d128_s(), 1e-12);
}

// FlashAttention-2 on H100 (bf16, the FlashAttention-3 paper's figures): the model with the fitted
// efficiency of those figures (0.3902, no launch cost: the figures time the kernel alone) within the
// residual of the fit (bench/fit_attention_shape.py) on the fitted and the held-out figures.
TEST(AttentionModel, FlashAttentionFiguresWithinTheirResiduals) {
  const MeasurementSet set =
      read_measurements(std::string(CLUSTERSIM_SOURCE_DIR) + "/calibration/attention/flash-attention-2-h100.json");
  ASSERT_EQ(set.kernels.size(), 39u);
  GpuSpec g = h100();
  g.attention_efficiency = 0.3902;
  g.gemm_launch_s = 0.0;
  std::vector<double> fit, held_out;
  for (const auto& k : set.kernels) {
    const double error = std::abs(kernel_time(g, k.op()).time_s / k.time_s - 1.0);
    const bool held = (k.k == 256 && k.causal) || (k.k == 64 && k.backward);
    (held ? held_out : fit).push_back(error);
  }
  ASSERT_EQ(fit.size(), 30u);
  ASSERT_EQ(held_out.size(), 9u);
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  EXPECT_LT(median(fit), 0.015);
  EXPECT_LT(*std::max_element(fit.begin(), fit.end()), 0.04);
  EXPECT_LT(median(held_out), 0.04);
  EXPECT_LT(*std::max_element(held_out.begin(), held_out.end()), 0.06);
}

}  // namespace
}  // namespace clustersim
