// The data-parallel training step: the ops of each micro-batch, their flops against the closed forms,
// the gradient buckets and their all-reduces, and the dependency structure.
#include "workloads/transformer_generator.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "../op_counts.hpp"
#include "../transformer_fixture.hpp"
#include "workloads/training_state.hpp"
#include "workloads/transformer_math.hpp"

namespace clustersim {
namespace {

// A small GPT: 2 layers, h 256, 4 heads, ffn 1024, seq 128, vocab 1000, tied embeddings.
// Parameters (hand-computed): per layer 12h^2 + 13h = 786,432 + 3,328 = 789,760; word embedding
// 256,000, positions 32,768, final norm 512: 289,280. Total 1,868,800.
WorkloadSpec small_gpt(int dp, std::int64_t global_batch = 8) {
  WorkloadSpec s = testing::transformer_workload(
      "small", {.layers = 2, .hidden = 256, .heads = 4, .ffn_hidden = 1024, .seq_len = 128, .vocab = 1000},
      global_batch, 2);
  s.model.tied_embeddings = true;
  s.parallelism.dp = dp;
  return s;
}

// The GEMM flops of the forward ops ("fwd.*") and of the others (backward), summed over the table.
std::pair<double, double> gemm_flops(const OpTable& ops) {
  double forward = 0.0, backward = 0.0;
  for (OpId i = 0; i < ops.size(); ++i) {
    if (ops.kind(i) != OpKind::compute || ops.kernel(i) != KernelClass::gemm) continue;
    (ops.name(i).starts_with("fwd.") ? forward : backward) += ops.flops(i);
  }
  return {forward, backward};
}

const OpTable& ops_of(const ExecutionGraph& g) {
  return g.classes().at(0).ops;
}

using testing::count;
using testing::expect_counts;

std::vector<OpId> all_reduces(const OpTable& ops) {
  std::vector<OpId> ids;
  for (OpId i = 0; i < ops.size(); ++i)
    if (ops.kind(i) == OpKind::collective) ids.push_back(i);
  return ids;
}

OpId last_named(const OpTable& ops, std::string_view name) {
  OpId last = 0;
  for (OpId i = 0; i < ops.size(); ++i)
    if (ops.name(i) == name) last = i;
  return last;
}

TEST(TransformerGenerator, OneClassOneDpCommunicatorOverAllRanks) {
  const ExecutionGraph g = generate_transformer_training(small_gpt(4, 16), 4);
  g.validate();
  ASSERT_EQ(g.classes().size(), 1u);
  EXPECT_EQ(g.classes()[0].ranks, (std::vector<int>{0, 1, 2, 3}));
  ASSERT_EQ(g.communicators().size(), 1u);
  EXPECT_EQ(g.communicators()[0].name, "dp");
  EXPECT_EQ(g.communicators()[0].groups, (std::vector<std::vector<int>>{{0, 1, 2, 3}}));
}

TEST(TransformerGenerator, OpCountsPerLayerAndMicroBatch) {
  // 8 sequences / (2 per micro-batch * dp 2) = 2 micro-batches of 2 layers each.
  // Per micro-batch: 1 embedding + 10 forward ops per layer + final norm, logits, loss; loss and
  // logits backward (3), final norm backward, 14 backward ops per layer, embedding backward:
  // 24 * 2 + 9 = 57; two micro-batches 114, plus the optimizer and the all-reduces.
  const ExecutionGraph g = generate_transformer_training(small_gpt(2), 2);
  const OpTable& ops = ops_of(g);
  // 2 layers x 2 micro-batches of each layer op, an embedding per micro-batch, one optimizer step.
  expect_counts(ops, {{"fwd.qkv", 4},
                      {"fwd.attention", 4},
                      {"bwd.qkv.dgrad", 4},
                      {"bwd.qkv.wgrad", 4},
                      {"bwd.attention", 4},
                      {"fwd.embedding", 2},
                      {"optimizer.adam", 1}});
  std::size_t compute = 0;
  for (OpId i = 0; i < ops.size(); ++i)
    compute += ops.kind(i) == OpKind::compute ? 1 : 0;
  EXPECT_EQ(compute, 2u * 57u + 1u);
}

TEST(TransformerGenerator, RecomputationReRunsTheForward) {
  WorkloadSpec full = small_gpt(2);
  full.training.recompute = "full";
  const ExecutionGraph graph_f = generate_transformer_training(full, 2);
  const OpTable& f = ops_of(graph_f);
  EXPECT_EQ(count(f, "recompute.qkv"), 4u);  // the whole layer forward again, per layer and micro-batch
  EXPECT_EQ(count(f, "recompute.mlp_down"), 4u);
  EXPECT_EQ(count(f, "recompute.attention"), 4u);

  WorkloadSpec selective = small_gpt(2);
  selective.training.recompute = "selective";
  const ExecutionGraph gs = generate_transformer_training(selective, 2);
  const OpTable& s = ops_of(gs);
  EXPECT_EQ(count(s, "recompute.attention"), 4u);  // the attention core only
  EXPECT_EQ(count(s, "recompute.qkv"), 0u);
  // ... right before the attention backward
  for (OpId i = 0; i + 1 < s.size(); ++i) {
    if (s.name(i) == "recompute.attention") {
      EXPECT_EQ(s.name(i + 1), "bwd.attention");
    }
  }
}

TEST(TransformerGenerator, TorchtitanOpLevelSelectiveRecomputesTheUnsavedMatmuls) {
  // training.selective_recompute matmul_outputs keeps the 1st, 3rd, 5th, 7th matmul's output and
  // attention's: before each layer's backward it recomputes the norms, K, the attention output
  // projection, the residual add whose output the second norm reads (h = x + attention(...): an add is
  // not saved), the SwiGLU up projection and the activation, and not the attention core.
  WorkloadSpec spec = small_gpt(2);
  spec.model.activation = "swiglu";
  spec.model.ffn_hidden = 768;
  spec.training.recompute = "selective";
  spec.training.selective_recompute = "matmul_outputs";
  const ExecutionGraph graph = generate_transformer_training(spec, 2);
  const OpTable& ops = ops_of(graph);
  EXPECT_EQ(count(ops, "recompute.attention"), 0u);
  for (const char* name : {"recompute.ln1", "recompute.k", "recompute.attn_out", "recompute.residual1", "recompute.ln2",
                           "recompute.mlp_up", "recompute.activation"})
    EXPECT_EQ(count(ops, name), 4u) << name;         // 2 layers x 2 micro-batches
  EXPECT_EQ(count(ops, "recompute.residual2"), 0u);  // the block's output add feeds nothing saved
  // in call order: the add between the attention output projection and the second norm, reading x and
  // the projection's output and writing h: 3 x 256 tokens x 256 x 2 bytes
  for (OpId i = 0; i + 1 < ops.size(); ++i)
    if (ops.name(i) == "recompute.residual1") {
      EXPECT_EQ(ops.name(i + 1), "recompute.ln2");
      EXPECT_DOUBLE_EQ(ops.bytes(i), 3.0 * 256 * 256 * 2.0);
    }
  // Recomputed GEMM flops per layer and micro-batch, 256 tokens, h 256, K 256 wide (4 heads, MHA),
  // f 768: 2 x 256 x (256 x 256 + 256 x 256 + 256 x 768) = 2 x 256 x 327,680 = 167,772,160.
  double recomputed = 0.0;
  for (OpId i = 0; i < ops.size(); ++i)
    if (ops.kind(i) == OpKind::compute && ops.kernel(i) == KernelClass::gemm && ops.name(i).starts_with("recompute."))
      recomputed += ops.flops(i);
  EXPECT_DOUBLE_EQ(recomputed, 4.0 * 167'772'160.0);
}

TEST(TransformerGenerator, GemmFlopsEqualTwiceTheMatmulParametersPerToken) {
  // Forward GEMMs of one micro-batch: 2 * tokens * (L * P_mm + V h) with P_mm = 12 h^2:
  // tokens 256, P_mm = 786,432, V h = 256,000: 2 * 256 * (1,572,864 + 256,000) = 936,378,368.
  // dgrad + wgrad = 2 x forward, so with backward 3 x.
  const WorkloadSpec spec = small_gpt(2);
  const ExecutionGraph graph = generate_transformer_training(spec, 2);
  const OpTable& ops = ops_of(graph);
  const auto [forward, backward] = gemm_flops(ops);
  const double micro_batches = 2.0;
  EXPECT_DOUBLE_EQ(forward / micro_batches, 936'378'368.0);
  EXPECT_DOUBLE_EQ(forward / micro_batches,
                   2.0 * 256 * (spec.model.layers * layer_matmul_parameters(spec.model) + 1000.0 * 256));
  EXPECT_DOUBLE_EQ((forward + backward) / micro_batches, 3.0 * 936'378'368.0);
}

TEST(TransformerGenerator, AttentionFlopsAndShapes) {
  // Causal: the fused kernel computes half of the dense 4 b s^2 h = 4 * 2 * 128^2 * 256 = 33,554,432;
  // backward 2.5x (FlashAttention-2).
  const ExecutionGraph graph = generate_transformer_training(small_gpt(2), 2);
  const OpTable& ops = ops_of(graph);
  const OpId fwd = last_named(ops, "fwd.attention");
  EXPECT_EQ(ops.kernel(fwd), KernelClass::attention);
  EXPECT_DOUBLE_EQ(ops.flops(fwd), 33'554'432.0 / 2.0);
  EXPECT_EQ(ops.m(fwd), 128u);
  EXPECT_EQ(ops.n(fwd), 128u);
  EXPECT_EQ(ops.k(fwd), 64u);     // head dim
  EXPECT_EQ(ops.batch(fwd), 8u);  // 2 sequences x 4 heads
  EXPECT_TRUE(ops.causal(fwd));
  EXPECT_FALSE(ops.backward(fwd));
  const OpId bwd = last_named(ops, "bwd.attention");
  EXPECT_DOUBLE_EQ(ops.flops(bwd), 2.5 * 33'554'432.0 / 2.0);
  EXPECT_TRUE(ops.causal(bwd));
  EXPECT_TRUE(ops.backward(bwd));
}

TEST(TransformerGenerator, GemmBytesAreOperandsPlusResult) {
  // QKV GEMM: [256 x 256] x [256 x 768] -> [256 x 768], bf16:
  // (256*256 + 256*768 + 256*768) * 2 = (65,536 + 196,608 + 196,608) * 2 = 917,504 bytes.
  const ExecutionGraph graph = generate_transformer_training(small_gpt(2), 2);
  const OpTable& ops = ops_of(graph);
  const OpId qkv = last_named(ops, "fwd.qkv");
  EXPECT_EQ(ops.m(qkv), 256u);
  EXPECT_EQ(ops.n(qkv), 768u);
  EXPECT_EQ(ops.k(qkv), 256u);
  EXPECT_DOUBLE_EQ(ops.bytes(qkv), 917'504.0);
  const OpId wgrad = last_named(ops, "bwd.qkv.wgrad");  // dW [256 x 768] = X^T [256 x 256] dY [256 x 768]
  EXPECT_EQ(ops.m(wgrad), 256u);
  EXPECT_EQ(ops.n(wgrad), 768u);
  EXPECT_EQ(ops.k(wgrad), 256u);
}

TEST(TransformerGenerator, BucketsFillInBackwardOrder) {
  // Bucket size 500,000 parameters. Gradients in backward order: final norm 512; layer 1: MLP down
  // 262,400, MLP up 263,168, ln2 512, attention out 65,792, QKV 197,376, ln1 512; layer 0 the same;
  // embeddings 288,768.
  //   bucket 1: 512 + 262,400 + 263,168                               = 526,080 (layer 1 MLP up wgrad)
  //   bucket 2: 512 + 65,792 + 197,376 + 512 + 262,400                = 526,592 (layer 0 MLP down wgrad)
  //   bucket 3: 263,168 + 512 + 65,792 + 197,376                      = 526,848 (layer 0 QKV wgrad)
  //   bucket 4: 512 + 288,768                                         = 289,280 (embedding backward)
  // Sum 1,868,800 = every parameter once, all-reduced as fp32 (4 bytes each).
  WorkloadSpec spec = small_gpt(2);
  spec.parallelism.bucket_size_params = 500'000;
  const ExecutionGraph graph = generate_transformer_training(spec, 2);
  const OpTable& ops = ops_of(graph);
  const std::vector<OpId> ar = all_reduces(ops);
  ASSERT_EQ(ar.size(), 4u);
  const double expected[] = {526'080.0, 526'592.0, 526'848.0, 289'280.0};
  const char* completed_by[] = {"bwd.mlp_up.wgrad", "bwd.mlp_down.wgrad", "bwd.qkv.wgrad", "bwd.embedding"};
  double total = 0.0;
  for (std::size_t i = 0; i < ar.size(); ++i) {
    EXPECT_EQ(ops.collective(ar[i]), CollectiveKind::all_reduce);
    EXPECT_EQ(ops.communicator(ar[i]), 0);
    EXPECT_EQ(ops.stream(ar[i]), 1);
    EXPECT_DOUBLE_EQ(ops.bytes(ar[i]), 4.0 * expected[i]);
    ASSERT_EQ(ops.deps(ar[i]).size(), 1u);
    EXPECT_EQ(ops.name(ops.deps(ar[i])[0]), completed_by[i]);
    total += ops.bytes(ar[i]);
  }
  EXPECT_DOUBLE_EQ(total, 4.0 * 1'868'800.0);
  EXPECT_DOUBLE_EQ(total_parameters(spec.model), 1'868'800.0);
}

TEST(TransformerGenerator, DefaultBucketsCoverEveryGradientOnce) {
  // Llama-style model with GQA and swiglu, default Megatron buckets (40e6 params).
  WorkloadSpec spec = small_gpt(4, 16);
  spec.model.layers = 4;
  spec.model.activation = "swiglu";
  spec.model.kv_heads = 2;
  spec.model.tied_embeddings = false;
  const ExecutionGraph graph = generate_transformer_training(spec, 4);
  const OpTable& ops = ops_of(graph);
  double total = 0.0;
  for (OpId id : all_reduces(ops))
    total += ops.bytes(id);
  EXPECT_DOUBLE_EQ(total, 4.0 * total_parameters(spec.model));
  EXPECT_EQ(all_reduces(ops).size(), 1u);  // the model is smaller than one bucket
}

TEST(TransformerGenerator, AllReducesOnlyDuringTheLastMicroBatch) {
  WorkloadSpec spec = small_gpt(2, 16);  // 4 micro-batches
  spec.parallelism.bucket_size_params = 100'000;
  const ExecutionGraph graph = generate_transformer_training(spec, 2);
  const OpTable& ops = ops_of(graph);
  const OpId last_micro_batch_start = last_named(ops, "fwd.embedding");
  const std::vector<OpId> ar = all_reduces(ops);
  ASSERT_GT(ar.size(), 4u);
  for (OpId id : ar) {
    EXPECT_GT(id, last_micro_batch_start);
    for (OpId d : ops.deps(id))
      EXPECT_GT(d, last_micro_batch_start);
  }
}

TEST(TransformerGenerator, WithoutOverlapAllReducesWaitForTheWholeBackward) {
  WorkloadSpec spec = small_gpt(2);
  spec.parallelism.bucket_size_params = 500'000;
  spec.parallelism.overlap_grad_reduce = false;
  const ExecutionGraph graph = generate_transformer_training(spec, 2);
  const OpTable& ops = ops_of(graph);
  const OpId last_backward = last_named(ops, "bwd.embedding");
  const std::vector<OpId> ar = all_reduces(ops);
  ASSERT_EQ(ar.size(), 4u);  // the same buckets
  for (OpId id : ar) {
    EXPECT_EQ(std::vector<OpId>(ops.deps(id).begin(), ops.deps(id).end()), std::vector<OpId>{last_backward});
  }
}

TEST(TransformerGenerator, OptimizerFollowsEveryAllReduce) {
  // Adam, bf16: 30 bytes per parameter (training_state.hpp): 1,868,800 * 30 = 56,064,000.
  WorkloadSpec spec = small_gpt(2);
  spec.parallelism.bucket_size_params = 500'000;
  const ExecutionGraph graph = generate_transformer_training(spec, 2);
  const OpTable& ops = ops_of(graph);
  const OpId opt = static_cast<OpId>(ops.size() - 1);
  EXPECT_EQ(ops.name(opt), "optimizer.adam");
  EXPECT_EQ(ops.kernel(opt), KernelClass::optimizer);
  EXPECT_EQ(ops.precision(opt), Precision::fp32);
  EXPECT_DOUBLE_EQ(ops.bytes(opt), 56'064'000.0);
  const auto deps = ops.deps(opt);
  for (OpId ar : all_reduces(ops))
    EXPECT_NE(std::find(deps.begin(), deps.end(), ar), deps.end());
}

TEST(TransformerGenerator, NoAllReduceWithoutDataParallelism) {
  const ExecutionGraph graph = generate_transformer_training(small_gpt(1, 4), 1);
  const OpTable& ops = ops_of(graph);
  EXPECT_TRUE(all_reduces(ops).empty());
  EXPECT_EQ(count(ops, "optimizer.adam"), 1u);
}

TEST(TransformerGenerator, DependenciesPointBackwardAndStreamsAreSet) {
  WorkloadSpec spec = small_gpt(2, 16);
  spec.training.recompute = "full";
  spec.model.moe.experts = 4;
  spec.model.moe.top_k = 2;
  const ExecutionGraph g = generate_transformer_training(spec, 2);
  g.validate();
  const OpTable& ops = ops_of(g);
  for (OpId i = 0; i < ops.size(); ++i) {
    for (OpId d : ops.deps(i))
      EXPECT_LT(d, i);
    EXPECT_EQ(ops.stream(i), ops.kind(i) == OpKind::collective ? 1 : kComputeStream);
    if (i > 0 && ops.kind(i) == OpKind::compute) {
      EXPECT_FALSE(ops.deps(i).empty()) << ops.name(i);
    }
  }
}

TEST(TransformerGenerator, MoeGemmsCountTopKExperts) {
  // Per token and layer: attention 4h^2, router h E, top_k = 2 experts of 2 h f: forward GEMM flops
  // per micro-batch = 2 * 256 * (2 * (262,144 + 1,024 + 2 * 524,288) + 256,000) = 1,474,297,856.
  WorkloadSpec spec = small_gpt(2);
  spec.model.moe.experts = 4;
  spec.model.moe.top_k = 2;
  const ExecutionGraph graph = generate_transformer_training(spec, 2);
  const OpTable& ops = ops_of(graph);
  const auto [forward, backward] = gemm_flops(ops);
  EXPECT_DOUBLE_EQ(forward / 2.0, 1'474'297'856.0);
  EXPECT_DOUBLE_EQ(backward, 2.0 * forward);
  double total = 0.0;
  for (OpId id : all_reduces(ops))
    total += ops.bytes(id);
  EXPECT_DOUBLE_EQ(total, 4.0 * total_parameters(spec.model));
}

TEST(TransformerGenerator, MoePermutationMovesEveryRoutedTokenTwice) {
  // Per MoE layer and direction, the permutation and the un-permutation each read and write the
  // rank's T x top_k routed copies: tokens 2 x 128 = 256, top_k 2, h 256, bf16:
  // 256 * 2 * 256 * 2 bytes * 2 = 524,288 bytes per kernel.
  WorkloadSpec spec = small_gpt(2);
  spec.model.moe.experts = 4;
  spec.model.moe.top_k = 2;
  spec.parallelism.ep = 2;
  const ExecutionGraph graph = generate_transformer_training(spec, 2);
  const OpTable& ops = ops_of(graph);
  const double micro_batches = 2.0, layers = 2.0;
  for (const char* name : {"fwd.moe.permute", "fwd.moe.unpermute", "bwd.moe.permute", "bwd.moe.unpermute"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(count(ops, name), std::size_t(micro_batches * layers));
    EXPECT_DOUBLE_EQ(ops.bytes(last_named(ops, name)), 524'288.0);
    EXPECT_EQ(ops.kernel(last_named(ops, name)), KernelClass::elementwise);
  }
  // dispatch comes after the permutation, the un-permutation after the combine
  EXPECT_LT(last_named(ops, "fwd.moe.permute"), last_named(ops, "fwd.ep.dispatch"));
  EXPECT_GT(last_named(ops, "fwd.moe.unpermute"), last_named(ops, "fwd.ep.combine"));
}

TEST(TransformerGenerator, TheBusiestRanksRoutedTokensSizeTheExpertGemmsAndAllToAlls) {
  // tokens 2 x 128 = 256, top_k 2: 512 routed copies on average; load_imbalance 1.5: 768 rows on the
  // busiest rank; with token dropping at capacity 1.25: 640 rows. The all-to-alls move as many rows of
  // h 256 in bf16 (768 * 256 * 2 = 393,216 bytes; 327,680 dropped).
  WorkloadSpec spec = small_gpt(2);
  spec.model.moe.experts = 4;
  spec.model.moe.top_k = 2;
  spec.model.moe.load_imbalance = 1.5;
  spec.model.moe.capacity_factor = 1.25;
  spec.parallelism.ep = 2;
  for (const bool dropping : {false, true}) {
    SCOPED_TRACE(dropping);
    spec.model.moe.token_dropping = dropping;
    const ExecutionGraph graph = generate_transformer_training(spec, 2);
    const OpTable& ops = ops_of(graph);
    const double rows = dropping ? 640.0 : 768.0;
    EXPECT_EQ(ops.m(last_named(ops, "fwd.mlp_up")), std::uint32_t(rows));
    EXPECT_DOUBLE_EQ(ops.bytes(last_named(ops, "fwd.ep.dispatch")), rows * 256 * 2);
    EXPECT_DOUBLE_EQ(ops.bytes(last_named(ops, "fwd.ep.combine")), rows * 256 * 2);
    // the permutation happens before the capacity is applied: all 512 copies
    EXPECT_DOUBLE_EQ(ops.bytes(last_named(ops, "fwd.moe.permute")), 512.0 * 256 * 2 * 2);
  }
}

// A small DeepSeek-style model: MLA, a dense first layer, a shared expert.
WorkloadSpec small_deepseek() {
  WorkloadSpec spec = small_gpt(2);
  spec.model.activation = "swiglu";
  spec.model.tied_embeddings = false;
  spec.model.layers = 3;
  spec.model.attention_type = "mla";
  spec.model.mla = {
      .q_lora_rank = 64, .kv_lora_rank = 32, .qk_nope_head_dim = 32, .qk_rope_head_dim = 16, .v_head_dim = 32};
  spec.model.moe.experts = 4;
  spec.model.moe.top_k = 2;
  spec.model.moe.expert_ffn_hidden = 128;
  spec.model.moe.shared_experts = 1;
  spec.model.moe.first_dense_layers = 1;
  return spec;
}

TEST(TransformerGenerator, LatentAttentionDenseFirstLayersAndSharedExpertsConserveGemmFlops) {
  // Forward GEMM flops of a micro-batch = 2 x tokens x (the layers' matmul weights + the logits): the
  // dense first layer with its MLP of ffn_hidden, the two MoE layers with top_k + 1 shared experts.
  const WorkloadSpec spec = small_deepseek();
  const ExecutionGraph graph = generate_transformer_training(spec, 2);
  const OpTable& ops = ops_of(graph);
  const auto [forward, backward] = gemm_flops(ops);
  const ModelSpec& m = spec.model;
  const double tokens = 256, micro_batches = 2;
  const double weights =
      layer_matmul_parameters(dense_layer_model(m)) + 2.0 * layer_matmul_parameters(m) + 1000.0 * 256;
  EXPECT_DOUBLE_EQ(forward / micro_batches, 2.0 * tokens * weights);
  EXPECT_DOUBLE_EQ(backward, 2.0 * forward);
  // MoE ops only in the two MoE layers; the MLA projections in all three
  EXPECT_EQ(count(ops, "fwd.router"), std::size_t(2 * micro_batches));
  EXPECT_EQ(count(ops, "fwd.shared_up"), std::size_t(2 * micro_batches));
  EXPECT_EQ(count(ops, "fwd.q_down"), std::size_t(3 * micro_batches));
  EXPECT_EQ(count(ops, "fwd.kv_up"), std::size_t(3 * micro_batches));
  EXPECT_EQ(count(ops, "fwd.qkv"), 0u);
  // The kv_down projection makes the latent and the rotary key: 32 + 16 columns from h 256.
  const OpId kv_down = last_named(ops, "fwd.kv_down");
  EXPECT_EQ(ops.n(kv_down), 48u);
  EXPECT_EQ(ops.k(kv_down), 256u);
  // Attention: scores over n + r = 48 dimensions, values of 32, 4 heads, causal half:
  // 2 * 2 seq * 128 * 128 * 4 * (48 + 32) / 2 = 10,485,760.
  const OpId attention = last_named(ops, "fwd.attention");
  EXPECT_DOUBLE_EQ(ops.flops(attention), 10'485'760.0);
  EXPECT_EQ(ops.k(attention), 48u);
  // Every parameter's gradient is reduced once (fp32, no ZeRO): 4 bytes per parameter.
  double total = 0.0;
  for (OpId id : all_reduces(ops))
    total += ops.bytes(id);
  EXPECT_DOUBLE_EQ(total, 4.0 * total_parameters(m));
}

// Multi-token prediction (model.mtp_depth): each module adds, per token, its 2h -> h projection, one
// layer like the model's last (here a MoE layer: router + top_k + shared experts) and the shared
// output head: forward GEMM flops per micro-batch = 2 x tokens x (the model's weights as above + D x
// (2 h^2 + the MoE layer's matmul weights + h V)); every parameter's gradient is still reduced once,
// the modules' included (total_parameters counts them: 4 bytes each).
TEST(TransformerGenerator, MultiTokenPredictionModulesAddTheirLayerProjectionAndHead) {
  WorkloadSpec spec = small_deepseek();
  const ModelSpec base = spec.model;
  spec.model.mtp_depth = 2;
  const ExecutionGraph graph = generate_transformer_training(spec, 2);
  const OpTable& ops = ops_of(graph);
  const auto [forward, backward] = gemm_flops(ops);
  const ModelSpec& m = spec.model;
  const double tokens = 256, micro_batches = 2, h = 256;
  const double main = layer_matmul_parameters(dense_layer_model(m)) + 2.0 * layer_matmul_parameters(m) + 1000.0 * 256;
  const double module = 2.0 * h * h + layer_matmul_parameters(m) + h * 1000.0;
  EXPECT_DOUBLE_EQ(forward / micro_batches, 2.0 * tokens * (main + 2.0 * module));
  EXPECT_DOUBLE_EQ(backward, 2.0 * forward);
  EXPECT_EQ(count(ops, "fwd.mtp.eh_proj"), std::size_t(2 * micro_batches));
  EXPECT_EQ(count(ops, "fwd.mtp.loss"), std::size_t(2 * micro_batches));
  EXPECT_EQ(count(ops, "fwd.mtp.ep.dispatch"), 0u);  // ep 1: no all-to-all
  EXPECT_EQ(count(ops, "fwd.mtp.router"), std::size_t(2 * micro_batches));
  // the module's projection reads 2h: [T x 2h] x [2h x h]
  const OpId proj = last_named(ops, "fwd.mtp.eh_proj");
  EXPECT_EQ(ops.k(proj), 512u);
  EXPECT_EQ(ops.n(proj), 256u);
  double total = 0.0;
  for (OpId id : all_reduces(ops))
    total += ops.bytes(id);
  EXPECT_DOUBLE_EQ(total, 4.0 * total_parameters(m));
  EXPECT_DOUBLE_EQ(total_parameters(m) - total_parameters(base), mtp_parameters(m));
}

}  // namespace
}  // namespace clustersim
