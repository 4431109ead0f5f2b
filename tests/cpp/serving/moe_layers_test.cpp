// A served MoE model's shared experts and first dense layers (DeepSeek-V3: one shared expert of 2048,
// the first 3 of 61 layers dense with an MLP of 18432; sim/serving/replica_kernels.hpp): their kernels,
// their weights by closed form, and which pipeline stages hold the dense layers.
#include <array>
#include <string>

#include <gtest/gtest.h>

#include "serving_test_support.hpp"
#include "sim/serving/replica_kernels.hpp"
#include "sim/serving/replica_layout.hpp"

namespace clustersim {
namespace {

// DeepSeek-V3's MoE shape (config.json of deepseek-ai/DeepSeek-V3) with plain multi-head attention of
// 128 heads of 56 (hidden 7168) so that only the MLP differs between the layer kinds checked here.
ReplicaConfig deepseek_like(int tp, int pp, int layers, int dense_layers, int shared_experts) {
  ReplicaConfig r;
  r.model = testing::deepseek_v3_shape(layers);
  ModelSpec& m = r.model;
  m.moe.experts = 256;
  m.moe.top_k = 8;
  m.moe.expert_ffn_hidden = 2048;
  m.moe.shared_experts = shared_experts;
  m.moe.first_dense_layers = dense_layers;
  r.tp = tp;
  r.ep = tp;
  r.pp = pp;
  return r;
}

const ComputeOp* find(const std::array<ComputeOp, kMaxLayerKernels>& ops, std::size_t n, const std::string& name) {
  for (std::size_t i = 0; i < n; ++i)
    if (ops[i].name == name) return &ops[i];
  return nullptr;
}

// tp 8: the shared expert's up projection (gate and up) is 2 x 2048 / 8 = 512 wide over k 7168, its down
// projection 7168 wide over k 256, for every token of the batch; a dense layer's MLP 2 x 18432 / 8 = 4608
// and k 2304, with no router and no expert.
TEST(ServingMoeLayers, SharedExpertAndDenseLayerKernels) {
  const GpuSpec gpu = testing::calibrated_gpu("h100-sxm5-80gb");
  const ReplicaConfig r = deepseek_like(8, 1, 61, 3, 1);
  const ReplicaKernels k(r, replica_layout(r), gpu);
  std::array<ComputeOp, kMaxLayerKernels> ops{};
  const std::size_t moe = k.mlp_block_kernels(100.0, ops.data());
  ASSERT_NE(find(ops, moe, "serve.router"), nullptr);
  const ComputeOp* up = find(ops, moe, "serve.shared_expert_up");
  const ComputeOp* down = find(ops, moe, "serve.shared_expert_down");
  ASSERT_NE(up, nullptr);
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(up->m, 100u);
  EXPECT_EQ(up->n, 512u);
  EXPECT_EQ(up->k, 7168u);
  EXPECT_DOUBLE_EQ(up->flops, 2.0 * 100 * 512 * 7168);
  EXPECT_EQ(down->n, 7168u);
  EXPECT_EQ(down->k, 256u);
  const std::size_t dense = k.mlp_block_kernels(100.0, ops.data(), true);
  EXPECT_EQ(find(ops, dense, "serve.router"), nullptr);
  EXPECT_EQ(find(ops, dense, "serve.shared_expert_up"), nullptr);
  const ComputeOp* mlp_up = find(ops, dense, "serve.mlp_up");
  ASSERT_NE(mlp_up, nullptr);
  EXPECT_EQ(mlp_up->n, 4608u);
  EXPECT_EQ(mlp_up->k, 7168u);
  EXPECT_EQ(find(ops, dense, "serve.mlp_down")->k, 2304u);
  // without a shared expert the MoE block has three kernels fewer
  const ReplicaConfig plain = deepseek_like(8, 1, 61, 3, 0);
  EXPECT_EQ(ReplicaKernels(plain, replica_layout(plain), gpu).mlp_block_kernels(100.0, ops.data()) + 3, moe);
}

// Linear weights per GPU, tp = ep = 8, bf16 (2 bytes): attention q, k, v and o of 7168 x 7168 each split
// 8 ways = 4 x 7168^2 / 8 = 25,690,112 elements. A MoE layer: 32 experts x 3 x 7168 x 2048 = 1,409,286,144
// and the shared expert 3 x 7168 x 256 = 5,505,024; a dense layer 3 x 7168 x 2304 = 49,545,216.
TEST(ServingMoeLayers, WeightsOfEachLayerKind) {
  const GpuSpec gpu = testing::calibrated_gpu("h100-sxm5-80gb");
  const ReplicaConfig r = deepseek_like(8, 1, 61, 3, 1);
  const ReplicaKernels k(r, replica_layout(r), gpu);
  const double attention = 25690112.0;
  EXPECT_DOUBLE_EQ(k.layer_linear_weight_bytes(), 2.0 * (attention + 1409286144.0 + 5505024.0));
  EXPECT_DOUBLE_EQ(k.layer_linear_weight_bytes(true), 2.0 * (attention + 49545216.0));
  // the router (7168 x 256 in 16-bit) only in the MoE layers; the two RMSNorms' scales in both
  EXPECT_DOUBLE_EQ(k.layer_16bit_weight_bytes() - k.layer_16bit_weight_bytes(true), 2.0 * 7168 * 256);
}

// 61 layers over 4 stages: 15, 15, 16 and 15 (the remainder to the stages before the last), the first 3
// dense, all on stage 0; 5 dense layers over 2-layer stages: 2, 2, 1.
TEST(ServingMoeLayers, DenseLayersAreTheFirstStagesLayers) {
  const ReplicaLayout l = replica_layout(deepseek_like(8, 4, 61, 3, 1));
  EXPECT_EQ(l.stage_dense_layers(0), 3);
  for (int s = 1; s < 4; ++s)
    EXPECT_EQ(l.stage_dense_layers(s), 0);
  const ReplicaLayout m = replica_layout(deepseek_like(8, 4, 8, 5, 1));
  EXPECT_EQ(m.stage_dense_layers(0), 2);
  EXPECT_EQ(m.stage_dense_layers(1), 2);
  EXPECT_EQ(m.stage_dense_layers(2), 1);
  EXPECT_EQ(m.stage_dense_layers(3), 0);
}

}  // namespace
}  // namespace clustersim
