// Data-parallel attention for MoE replicas (ReplicaConfig::dp_attention; sim/serving/replica_layout.cpp,
// replica_memory.cpp, iteration_model.cpp): the layout, the KV capacity per rank by its closed form,
// the iteration's ranks meeting at the experts, the all-to-alls, and the engine refusing a request no
// rank can hold.
#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "../spec_error_of.hpp"
#include "serving_test_support.hpp"
#include "sim/core/error.hpp"
#include "sim/hardware/calibration_profile.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/kernel_model.hpp"
#include "sim/serving/iteration_model.hpp"
#include "sim/serving/replica_kernels.hpp"
#include "sim/serving/replica_layout.hpp"
#include "sim/serving/replica_links.hpp"
#include "sim/serving/serving_engine.hpp"
#include "topologies/cluster_spec.hpp"

namespace clustersim {
namespace {

ReplicaConfig replica(int tp, int ep, int dp) {
  ReplicaConfig r;
  r.model = testing::mixtral_8x7b();
  r.tp = tp;
  r.ep = ep;
  r.dp_attention = dp;
  return r;
}

GpuSpec h100() {
  return testing::calibrated_gpu("h100-sxm5-80gb");
}

const ClusterSpec& dgx_h100() {
  static const ClusterSpec one = load_cluster_spec("dgx-h100");
  return one;
}

// tp 8, ep 8, dp_attention 8: eight ranks of one GPU each. A GPU holds the whole attention (32 heads,
// 8 KV heads: 2 x 32 x 8 x 128 x 2 = 131,072 B of KV per token, as at tp 1) and one expert.
// Weights per GPU, bf16: a layer's linear weights 4096 x (4096 + 2 x 1024) + 4096 x 4096 + 3 x 4096 x
// 14336 = 218,103,808 x 2 B = 436,207,616 B, norms and router (2 x 4096 + 4096 x 8) x 2 B = 81,920 B;
// 32 layers = 13,961,265,152 B; embedding and LM head 32000 x 4096 x 2 B each = 524,288,000 B; the
// final norm 8,192 B: 14,485,561,344 B.
// Activations of 8192 tokens: residual 2 x 8192 x 4096 x 2 = 134,217,728 B plus the larger of the
// attention block 8192 x (6144 + 4096) x 2 = 167,772,160 B and the experts' rows R = 8192 x 2 / 8 =
// 2048: 2048 x 3 x 14336 x 2 + 2048 x 2 x 4096 x 2 = 209,715,200 B: 343,932,928 B. Workspace: cuBLAS
// 33,554,432 B (no tensor-parallel communicator inside a rank of one GPU).
// KV cache 76,968,728,985.6 (80 GiB HBM x 0.9) - 14,485,561,344 - 343,932,928 - 33,554,432 =
// 62,105,680,281.6 B: 473,828 tokens per rank, 8 x 473,828 = 3,790,624 for the replica.
TEST(DataParallelAttention, KvCapacityPerRankClosedForm) {
  const GpuSpec gpu = h100();
  const ReplicaLayout l = replica_layout(replica(8, 8, 8));
  EXPECT_EQ(l.attention_tp, 1);
  EXPECT_DOUBLE_EQ(l.q_heads_per_gpu, 32.0);
  EXPECT_DOUBLE_EQ(l.kv_heads_per_gpu, 8.0);
  EXPECT_DOUBLE_EQ(l.experts_per_gpu, 1.0);
  EXPECT_DOUBLE_EQ(l.vocab_per_gpu, 32000.0);
  const auto model = make_iteration_model(replica(8, 8, 8), gpu, dgx_h100());
  const ReplicaMemory& m = model->memory();
  testing::expect_memory_breakdown(m, 14485561344.0, 343932928.0, 33554432.0, 62105680281.6, 131072.0);
  EXPECT_EQ(m.attention_dp_ranks, 8);
  EXPECT_EQ(m.kv_capacity_tokens_per_rank, 473828);
  EXPECT_EQ(m.kv_capacity_tokens, 8 * 473828);
  // Without data-parallel attention the same 8 GPUs split the 8 KV heads (16,384 B per token per GPU):
  // one cache of about as many tokens, held by every GPU; a request may then fill all of it.
  const auto tp8 = make_iteration_model(replica(8, 8, 1), gpu, dgx_h100());
  EXPECT_DOUBLE_EQ(tp8->memory().kv_bytes_per_token, 16384.0);
  EXPECT_EQ(tp8->memory().attention_dp_ranks, 1);
  EXPECT_EQ(tp8->memory().kv_capacity_tokens_per_rank, tp8->memory().kv_capacity_tokens);
}

// A model with few KV heads (2): at tp 8 each GPU keeps a copy of one (replicated 4 times, 2 x 32 x 1 x
// 128 x 2 = 16,384 B per token); with 8 ranks of one GPU a GPU stores both heads (32,768 B per token)
// of its own requests only, so the replica holds 8 x KV / 32,768 = 4 x KV / 16,384 tokens: four times
// as many, less what the replicated attention weights take. (MLA's one latent "head" is this case at
// its extreme: the hook is kv_bytes_per_token_layer in replica_kernels.cpp.)
TEST(DataParallelAttention, FewKvHeadsStopBeingReplicated) {
  const GpuSpec gpu = h100();
  ReplicaConfig r = replica(8, 8, 1);
  r.model.kv_heads = 2;
  const auto tp8 = make_iteration_model(r, gpu, dgx_h100());
  r.dp_attention = 8;
  const auto dp8 = make_iteration_model(r, gpu, dgx_h100());
  EXPECT_DOUBLE_EQ(tp8->memory().kv_bytes_per_token, 16384.0);
  EXPECT_DOUBLE_EQ(dp8->memory().kv_bytes_per_token, 32768.0);
  const double expected =
      8.0 * std::floor(dp8->memory().kv_cache_bytes / 32768.0);  // the closed form on dp8's own KV budget
  EXPECT_EQ(dp8->memory().kv_capacity_tokens, static_cast<std::int64_t>(expected));
  const double ratio = double(dp8->memory().kv_capacity_tokens) / double(tp8->memory().kv_capacity_tokens);
  // 4 x (dp8's KV budget / tp8's): the attention weights replicated on every GPU cost dp8 some of it
  EXPECT_NEAR(ratio, 4.0 * dp8->memory().kv_cache_bytes / tp8->memory().kv_cache_bytes, 1e-4);
  EXPECT_GT(ratio, 3.5);
  EXPECT_LT(ratio, 4.0);
}

double mlp_block_s(const ReplicaConfig& r, const GpuSpec& gpu, double tokens) {
  return testing::block_kernels_s(r, gpu, tokens, &ReplicaKernels::mlp_block_kernels, graph_timing(tokens));
}

// Eight decoding requests on eight ranks take one each: the busiest rank's attention, embedding and
// head are those of one request, so the iteration is the one-request iteration plus the experts'
// extra work, 32 x (mlp_block(8) - mlp_block(1)); the all-to-alls carry the busiest rank's one token
// either way. A ninth request joins rank 0 (the fewest tokens, lowest index), which then has two.
TEST(DataParallelAttention, RanksRunSideBySideAndMeetAtTheExperts) {
  const GpuSpec gpu = h100();
  const ReplicaConfig r = replica(8, 8, 8);
  const auto model = make_iteration_model(r, gpu, dgx_h100());
  const std::vector<IterationEntry> one(1, IterationEntry{1, 1000}), eight(8, IterationEntry{1, 1000}),
      nine(9, IterationEntry{1, 1000});
  const IterationTime a = model->iteration_time(one), b = model->iteration_time(eight), c = model->iteration_time(nine);
  EXPECT_NEAR(b.compute_s - a.compute_s, 32.0 * (mlp_block_s(r, gpu, 8) - mlp_block_s(r, gpu, 1)), 1e-12);
  EXPECT_DOUBLE_EQ(b.communication_s, a.communication_s);
  EXPECT_GT(c.compute_s - b.compute_s, 32.0 * (mlp_block_s(r, gpu, 9) - mlp_block_s(r, gpu, 8)));
  EXPECT_GT(c.communication_s, b.communication_s);
  // the same eight requests on one attention rank of 8 GPUs (tp 8): one attention over all of them
  const auto tp8 = make_iteration_model(replica(8, 8, 1), gpu, dgx_h100());
  EXPECT_GT(tp8->iteration_time(eight).time_s, 0.0);
}

// tp 8, dp_attention 8 (a rank is one GPU): no all-reduce; per layer the dispatch and the combine, an
// all-to-all over the 8 GPUs of each GPU's tokens x top 2 x 4096 x 2 B: for one token per rank
// 16,384 B, 32 layers x 2 of them. dp_attention 2 (ranks of 4 GPUs): (32 + 1) all-reduces over 4 GPUs
// of the busiest rank's T x 4096 x 2 B, 64 all-to-alls of T / 4 x 2 x 4096 x 2 B, and the logits'
// all-gather over 4 GPUs, r x 32000 / 4 x 2 B.
TEST(DataParallelAttention, AllToAllsBetweenAttentionAndExperts) {
  const GpuSpec gpu = h100();
  const std::vector<IterationEntry> eight(8, IterationEntry{1, 1000});
  const auto dp8 = make_iteration_model(replica(8, 8, 8), gpu, dgx_h100());
  const ReplicaLinks one_gpu_ranks(dgx_h100(), 8, 1, 1);
  EXPECT_DOUBLE_EQ(one_gpu_ranks.all_reduce_s(4096.0 * 2), 0.0);
  EXPECT_GT(one_gpu_ranks.all_to_all_s(16384.0), 0.0);
  EXPECT_NEAR(dp8->iteration_time(eight).communication_s, 64.0 * one_gpu_ranks.all_to_all_s(16384.0), 1e-15);
  const auto dp2 = make_iteration_model(replica(8, 8, 2), gpu, dgx_h100());
  const ReplicaLinks four_gpu_ranks(dgx_h100(), 8, 1, 4);
  // 8 decodes over 2 ranks: 4 tokens and 4 rows on the busiest
  const double expected = 33.0 * four_gpu_ranks.all_reduce_s(4.0 * 4096 * 2) +
                          64.0 * four_gpu_ranks.all_to_all_s(4.0 / 4.0 * 2 * 4096 * 2) +
                          four_gpu_ranks.all_gather_s(4.0 * 8000 * 2);
  EXPECT_NEAR(dp2->iteration_time(eight).communication_s, expected, 1e-15);
  EXPECT_GT(four_gpu_ranks.all_reduce_s(4.0 * 4096 * 2), 0.0);
}

TEST(DataParallelAttention, RefusedWhereItDoesNotApply) {
  ReplicaConfig dense = replica(8, 1, 8);
  dense.model.moe = MoeSpec{};
  EXPECT_EQ(testing::spec_error_of([&] { replica_layout(dense); }).json_path(), "/dp_attention");
  EXPECT_EQ(testing::spec_error_of([&] { replica_layout(replica(8, 8, 3)); }).json_path(), "/dp_attention");
  ReplicaConfig staged = replica(4, 4, 2);
  staged.pp = 2;
  EXPECT_EQ(testing::spec_error_of([&] { replica_layout(staged); }).json_path(), "/dp_attention");
  EXPECT_EQ(testing::spec_error_of([&] { replica_layout(replica(8, 8, 0)); }).json_path(), "/dp_attention");
  // 32 heads over ranks of 8 GPUs divide; 8 KV heads over a rank of 16 GPUs would replicate: fine too
  EXPECT_NO_THROW(replica_layout(replica(8, 8, 1)));
}

// 16 KV tokens in blocks of 4 over 2 ranks: the replica pools 4 blocks, a rank has 2. A request holding
// 6 + 3 - 1 = 8 tokens (2 blocks) fits a rank; one of 6 + 8 - 1 = 13 (4 blocks) would fit the pool
// but no rank, and is rejected for want of KV cache; without ranks it is served.
TEST(DataParallelAttention, ARequestMustFitOneRank) {
  const ServingSpec spec = testing::test_serving_spec("continuous", 64, 8, 4);
  testing::LinearIterationModel model(0.010, 0.001, 16);
  const std::vector<RequestArrival> arrivals = {{0.0, 6, 3}, {0.1, 6, 8}};
  const ServingResult whole = run_serving(spec, model, arrivals);
  EXPECT_EQ(whole.summary.rejected_kv_cache, 0);
  EXPECT_EQ(whole.summary.finished, 2);
  model.set_attention_ranks(2);
  const ServingResult ranks = run_serving(spec, model, arrivals);
  EXPECT_EQ(ranks.summary.rejected_kv_cache, 1);
  EXPECT_EQ(ranks.requests[1].status, RequestStatus::rejected_kv_cache);
  EXPECT_EQ(ranks.summary.finished, 1);
  EXPECT_EQ(ranks.summary.kv_blocks_per_replica, 4);
}

}  // namespace
}  // namespace clustersim
