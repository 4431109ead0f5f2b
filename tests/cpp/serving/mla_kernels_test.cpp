// Multi-head latent attention's serving kernels (sim/serving/replica_kernels.hpp): the absorbed decode
// (FlashMLA over the latent), its absorbed projections, the prefill's up-projection and MHA over the
// per-head keys, the weights, by closed form; FlashMLA's published efficiencies.
#include <array>

#include <gtest/gtest.h>

#include "serving_test_support.hpp"
#include "sim/hardware/kernel_model.hpp"
#include "sim/serving/replica_kernels.hpp"
#include "sim/serving/replica_layout.hpp"

namespace clustersim {
namespace {

// DeepSeek-V3's attention (config.json of deepseek-ai/DeepSeek-V3: hidden 7168, 128 heads, q_lora_rank
// 1536, kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128) over a dense MLP of
// its first layers' width (18432), 4 layers: the attention is what is checked.
ReplicaConfig deepseek_v3_attention(int tp, ServingDtype kv = ServingDtype::bf16) {
  ReplicaConfig r;
  r.model = testing::deepseek_v3_shape(4);
  ModelSpec& m = r.model;
  m.attention_type = "mla";
  m.mla.q_lora_rank = 1536;
  m.mla.kv_lora_rank = 512;
  m.mla.qk_nope_head_dim = 128;
  m.mla.qk_rope_head_dim = 64;
  m.mla.v_head_dim = 128;
  r.tp = tp;
  r.kv_dtype = kv;
  return r;
}

using testing::kernels_of;

// The absorbed decode reads each cached token's latent and rotary key once for all heads: 512 + 64 =
// 576 elements, 1,152 bytes in bf16 (576 in fp8), at tp 1 as at tp 8. One request of 1,000 cached
// tokens at tp 8 (16 heads per GPU): bytes 1,000 x 1,152 + 16 x (576 + 512) x 2 (its query, 576 wide,
// and its latent output, 512) = 1,152,000 + 34,816 = 1,186,816; flops 2 x 16 x (576 + 512) x 1,000 =
// 34,816,000 (scores over 576, the latent as the values over 512).
TEST(MlaKernels, DecodeReadsTheLatentOnceForAllHeads) {
  const GpuSpec gpu = testing::calibrated_gpu("h100-sxm5-80gb");
  const ReplicaKernels tp8 = kernels_of(deepseek_v3_attention(8), gpu);
  const ComputeOp op = tp8.decode_attention(1, 1000);
  EXPECT_DOUBLE_EQ(op.bytes, 1186816.0);
  EXPECT_DOUBLE_EQ(op.flops, 34816000.0);
  for (const int tp : {1, 8}) {
    const ReplicaKernels k = kernels_of(deepseek_v3_attention(tp), gpu);
    EXPECT_DOUBLE_EQ(k.kv_bytes_per_token_layer(), 1152.0);
    EXPECT_DOUBLE_EQ(k.decode_attention(64, 2001).bytes - k.decode_attention(64, 2000).bytes, 1152.0);
  }
  EXPECT_DOUBLE_EQ(kernels_of(deepseek_v3_attention(1, ServingDtype::fp8), gpu).kv_bytes_per_token_layer(), 576.0);
  // multi-head attention of the same 128 heads would read their keys (192) and values (128): 81,920 B
  // a token in bf16, 71 times the latent
}

// The absorbed projections of 64 decoding requests at tp 8 (16 heads): the query's no-rope part through
// W_UK (m 64, n 512, k 128, 16 heads) and the latent output through W_UV (m 64, n 128, k 512): 2 x 64 x
// 128 x 512 x 16 = 134,217,728 flops each, 16-bit; W_UK's bytes (64 x 128 + 128 x 512 + 64 x 512) x 2
// x 16 = 3,407,872.
TEST(MlaKernels, AbsorbedProjectionsOfTheDecodingRequests) {
  const GpuSpec gpu = testing::calibrated_gpu("h100-sxm5-80gb");
  const ReplicaKernels k = kernels_of(deepseek_v3_attention(8), gpu);
  std::array<ComputeOp, 2> ops{};
  ASSERT_EQ(k.decode_absorption(64, ops.data()), 2u);
  for (const ComputeOp& op : ops) {
    EXPECT_DOUBLE_EQ(op.flops, 134217728.0) << op.name;
    EXPECT_EQ(op.batch, 16u);
    EXPECT_EQ(op.precision, Precision::bf16);
  }
  EXPECT_DOUBLE_EQ(ops[0].bytes, 3407872.0);
  EXPECT_EQ(ops[0].n, 512u);
  EXPECT_EQ(ops[1].n, 128u);
}

// Prefill is not absorbed: 100 new tokens after none at tp 8 up-project their 100 latents to 16 heads'
// keys (128) and values (128): 2 x 100 x 4,096 x 512 = 419,430,400 flops; then attention over query/key
// width 192 and value width 128: 2 x (192 + 128) x 16 x 100^2 / 2 = 51,200,000 flops, the kernel's
// shape k 192.
TEST(MlaKernels, PrefillUpProjectsTheKeysAndRunsMultiHeadAttention) {
  const GpuSpec gpu = testing::calibrated_gpu("h100-sxm5-80gb");
  const ReplicaKernels k = kernels_of(deepseek_v3_attention(8), gpu);
  std::array<ComputeOp, 1> up{};
  ASSERT_EQ(k.prefill_up_projection(100, up.data()), 1u);
  EXPECT_DOUBLE_EQ(up[0].flops, 419430400.0);
  const ComputeOp attention = k.prefill_attention(100, 0);
  EXPECT_DOUBLE_EQ(attention.flops, 51200000.0);
  EXPECT_EQ(attention.k, 192u);
  EXPECT_EQ(attention.batch, 16u);
}

// The attention's linear weights at tp 1 (transformer_math.cpp's DeepSeek-V3 count less the latent
// norms, 187,107,328 - 2,048): 7168 x (1536 + 512 + 64) + 1536 x 128 x 192 + 512 x 128 x 256 + 128 x
// 128 x 7168 = 187,105,280; with the SwiGLU MLP's 3 x 7168 x 18432 = 396,361,728, in bf16
// 1,166,934,016 bytes. The 16-bit tensors: the two RMSNorms (2 x 7168), the latent norms (2048) and
// W_UK / W_UV kept for the absorbed decode (128 x 512 x 256 = 16,777,216): 2 x 16,793,600 bytes.
TEST(MlaKernels, LayerWeights) {
  const GpuSpec gpu = testing::calibrated_gpu("h100-sxm5-80gb");
  const ReplicaKernels k = kernels_of(deepseek_v3_attention(1), gpu);
  EXPECT_DOUBLE_EQ(k.layer_linear_weight_bytes(), 1166934016.0);
  EXPECT_DOUBLE_EQ(k.layer_16bit_weight_bytes(), 2.0 * (2.0 * 7168 + 2048 + 16777216));
}

// FlashMLA's published H800 figures (3,000 GB/s memory-bound, 580 TFLOP/s compute-bound, bf16) as
// fractions of the H800's 3.35 TB/s and 989.5 TFLOP/s: the decode kernel runs at them. At tp 1 with a
// bf16 cache it does 2 x 128 x 1,088 = 278,528 flops per 1,152 bytes read (242 flops a byte, above
// FlashMLA's 580 / 3 = 193): compute-bound; the same at tp 8 (30 flops a byte) memory-bound.
TEST(MlaKernels, DecodeAtFlashMlasPublishedFigures) {
  const GpuSpec gpu = testing::calibrated_gpu("h100-sxm5-80gb");
  const ReplicaKernels tp1 = kernels_of(deepseek_v3_attention(1), gpu);
  const GpuSpec flash = tp1.decode_attention_gpu(gpu);
  EXPECT_DOUBLE_EQ(flash.attention_efficiency, 580.0 / 989.5);
  EXPECT_DOUBLE_EQ(flash.memory_efficiency, 3000.0 / 3350.0);
  const ComputeOp big = tp1.decode_attention(128, 128 * 4096);
  EXPECT_TRUE(kernel_time(flash, big).compute_bound);
  const ReplicaKernels tp8 = kernels_of(deepseek_v3_attention(8), gpu);
  EXPECT_FALSE(kernel_time(flash, tp8.decode_attention(128, 128 * 4096)).compute_bound);
  // multi-head attention keeps the GPU's own efficiencies and has no absorption or up-projection
  ReplicaConfig mha = deepseek_v3_attention(8);
  mha.model.attention_type = "mha";
  const ReplicaKernels k = kernels_of(mha, gpu);
  EXPECT_DOUBLE_EQ(k.decode_attention_gpu(gpu).attention_efficiency, gpu.attention_efficiency);
  std::array<ComputeOp, 2> ops{};
  EXPECT_EQ(k.decode_absorption(64, ops.data()), 0u);
  EXPECT_EQ(k.prefill_up_projection(64, ops.data()), 0u);
}

}  // namespace
}  // namespace clustersim
