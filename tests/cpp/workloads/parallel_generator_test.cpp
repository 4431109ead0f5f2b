// Tensor, sequence, pipeline, context and expert parallelism and ZeRO in the generated graph: rank
// placement, communicators, the collectives each layer adds and the bytes they move, checked against
// Megatron-LM's definitions by hand.
#include <map>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "../transformer_fixture.hpp"
#include "workloads/parameter_sharding.hpp"
#include "workloads/pipeline_schedule.hpp"
#include "workloads/rank_layout.hpp"
#include "workloads/software_stack.hpp"
#include "workloads/training_state.hpp"
#include "workloads/transformer_generator.hpp"
#include "workloads/transformer_math.hpp"

namespace clustersim {
namespace {

// 4 layers, h 512, 8 heads, ffn 2048, seq 256, vocab 1024, untied; 8 sequences per step in
// micro-batches of 1.
WorkloadSpec gpt(int tp, int pp, int dp, int cp = 1) {
  WorkloadSpec s = testing::transformer_workload(
      "gpt", {.layers = 4, .hidden = 512, .heads = 8, .ffn_hidden = 2048, .seq_len = 256, .vocab = 1024}, 8, 1);
  s.parallelism.tp = tp;
  s.parallelism.pp = pp;
  s.parallelism.dp = dp;
  s.parallelism.cp = cp;
  return s;
}

int world(const WorkloadSpec& s) {
  const auto& p = s.parallelism;
  return p.tp * p.pp * p.dp * p.cp;
}

std::uint16_t comm_index(const ExecutionGraph& g, const std::string& name) {
  for (std::size_t i = 0; i < g.communicators().size(); ++i)
    if (g.communicators()[i].name == name) return static_cast<std::uint16_t>(i);
  ADD_FAILURE() << "no communicator " << name;
  return 0;
}

double gemm_flops(const OpTable& ops) {
  double f = 0.0;
  for (OpId i = 0; i < ops.size(); ++i)
    if (ops.kind(i) == OpKind::compute && ops.kernel(i) == KernelClass::gemm) f += ops.flops(i);
  return f;
}

// (collective kind) -> {count, bytes} of the collectives on communicator `comm` whose name starts with `prefix`.
std::map<CollectiveKind, std::pair<int, double>> collectives(const OpTable& ops, std::uint16_t comm,
                                                             std::string_view prefix = "") {
  std::map<CollectiveKind, std::pair<int, double>> out;
  for (OpId i = 0; i < ops.size(); ++i) {
    if (ops.kind(i) != OpKind::collective || ops.communicator(i) != comm) continue;
    if (ops.name(i).substr(0, prefix.size()) != prefix) continue;
    auto& [n, bytes] = out[ops.collective(i)];
    ++n;
    bytes += ops.bytes(i);
  }
  return out;
}

TEST(RankLayout, MegatronOrderPutsTensorParallelPeersNextToEachOther) {
  const RankLayout layout(ParallelismSpec{.tp = 2, .pp = 2, .dp = 2, .cp = 2});
  EXPECT_EQ(layout.world_size(), 16);
  // rank = tp + 2 * (cp + 2 * (dp + 2 * pp))
  EXPECT_EQ(layout.rank({1, 1, 1, 1}), 15);
  EXPECT_EQ(layout.rank({1, 0, 1, 0}), 5);
  const RankCoords c = layout.coords(6);
  EXPECT_EQ(c.tp, 0);
  EXPECT_EQ(c.cp, 1);
  EXPECT_EQ(c.dp, 1);
  EXPECT_EQ(c.pp, 0);
  EXPECT_EQ(layout.groups({ParallelDim::tp}).front(), (std::vector<int>{0, 1}));
  EXPECT_EQ(layout.groups({ParallelDim::pp}).front(), (std::vector<int>{0, 8}));
  EXPECT_EQ(layout.groups({ParallelDim::ep, ParallelDim::edp}).front(), (std::vector<int>{0, 4}));
  EXPECT_EQ(layout.groups({ParallelDim::ep, ParallelDim::edp, ParallelDim::cp}).front(),
            (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(layout.stage_ranks(1), (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
}

TEST(RankLayout, OrderIsConfigurable) {
  const ParallelismSpec p{.tp = 2, .pp = 2, .dp = 2, .order = "pp-tp-cp-ep-dp"};  // stages innermost
  const RankLayout layout(p);
  EXPECT_EQ(layout.groups({ParallelDim::pp}).front(), (std::vector<int>{0, 1}));
  EXPECT_EQ(layout.groups({ParallelDim::tp}).front(), (std::vector<int>{0, 2}));
  EXPECT_EQ(layout.groups({ParallelDim::ep, ParallelDim::edp}).front(), (std::vector<int>{0, 4}));
}

TEST(RankLayout, ExpertParallelGroupsSplitTheDataParallelGroup) {
  const RankLayout layout(ParallelismSpec{.tp = 2, .dp = 8, .ep = 4});
  EXPECT_EQ(layout.groups({ParallelDim::ep}).front(), (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(layout.groups({ParallelDim::edp}).front(), (std::vector<int>{0, 8}));
}

// Megatron-Core's expert rank generator (parallel_state.py at commit 00caa53): the same 8 ranks of tp
// 2 x dp 4 laid out as etp x ep x edp. etp 1, ep 2: ep stride 1, edp stride 2; etp 2 (= tp), ep 2: the
// etp groups are the tp groups, ep stride 2, edp stride 4 (ep carved out of dp, as before ETP).
TEST(RankLayout, ExpertLayersLayTheRanksOutAsEtpByEpByExpertDp) {
  ParallelismSpec p{.tp = 2, .dp = 4, .ep = 2, .etp = 1};
  const RankLayout one = expert_rank_layout(p);
  EXPECT_EQ(one.groups({ParallelDim::ep}).front(), (std::vector<int>{0, 1}));
  EXPECT_EQ(one.groups({ParallelDim::edp}).front(), (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(one.groups({ParallelDim::tp}).front(), (std::vector<int>{0}));
  p.etp = 2;
  const RankLayout two = expert_rank_layout(p);
  EXPECT_EQ(two.groups({ParallelDim::tp}).front(), (std::vector<int>{0, 1}));
  EXPECT_EQ(two.groups({ParallelDim::ep}).front(), (std::vector<int>{0, 2}));
  EXPECT_EQ(two.groups({ParallelDim::edp}).front(), (std::vector<int>{0, 4}));
  // tp 4 x dp 2 with ep 8, etp 1: ep spans every rank of the stage although it exceeds dp
  p.tp = 4;
  p.dp = 2;
  p.ep = 8;
  p.etp = 1;
  p.pp = 2;
  const RankLayout wide = expert_rank_layout(p);
  EXPECT_EQ(wide.groups({ParallelDim::ep}).front(), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(wide.stage_ranks(1), dense_rank_layout(p).stage_ranks(1));  // the same pipeline stages
}

// Expert tensor parallelism in the generated step: gpt(tp 2, dp 4) with sequence parallelism, 8
// experts top-2, ep 2. Each rank routes its T / tp = 256 / 2 = 128 tokens: 256 routed rows, dispatched
// and combined as 256 x h 512 x 2 bytes = 262,144 bytes per all-to-all. etp 1: the experts' GEMMs take
// those 256 rows through the whole width 2048; etp 2: the etp pair all-gathers them (512 rows,
// 524,288 bytes gathered) and runs 2048 / 2 = 1024 columns, then reduce-scatters the 512 rows: the
// same expert flops per rank. Per rank and layer, 4 local experts of (512 x 2048 + 2048) up and (2048
// x 512 + 512) down: 8,398,848 parameters at etp 1, 4 x (524,288 + 1,024 + 524,288 + 512) = 4,200,448
// at etp 2; x 4 layers, their fp32 gradients all-reduced over the expert data-parallel group (edp 4 at
// etp 1, 2 at etp 2).
TEST(ParallelGenerator, ExpertTensorParallelismGathersTheDispatchedRowsOverEtp) {
  WorkloadSpec s = gpt(2, 1, 4);
  s.parallelism.sequence_parallel = true;
  s.model.moe.experts = 8;
  s.model.moe.top_k = 2;
  s.parallelism.ep = 2;
  const double micro_batches = 2, layers = 4;
  double expert_flops[2] = {0.0, 0.0};
  for (const int etp : {1, 2}) {
    SCOPED_TRACE(etp);
    s.parallelism.etp = etp;
    const ExecutionGraph g = generate_transformer_training(s, world(s));
    const OpTable& ops = g.classes()[0].ops;
    const auto ep = collectives(ops, comm_index(g, "ep"));
    EXPECT_EQ(ep.at(CollectiveKind::all_to_all).first, micro_batches * layers * 4);
    EXPECT_DOUBLE_EQ(ep.at(CollectiveKind::all_to_all).second, micro_batches * layers * 4 * 262'144.0);
    EXPECT_EQ(g.communicators()[comm_index(g, "ep")].groups.front(),
              (etp == 1 ? std::vector<int>{0, 1} : std::vector<int>{0, 2}));
    EXPECT_EQ(g.communicators()[comm_index(g, "edp")].groups.front(),
              (etp == 1 ? std::vector<int>{0, 2, 4, 6} : std::vector<int>{0, 4}));
    bool has_etp = false;
    for (const Communicator& c : g.communicators())
      has_etp = has_etp || c.name == "etp";
    EXPECT_EQ(has_etp, etp == 2);
    if (etp == 2) {
      const auto gathered = collectives(ops, comm_index(g, "etp"));
      for (const CollectiveKind kind : {CollectiveKind::all_gather, CollectiveKind::reduce_scatter}) {
        EXPECT_EQ(gathered.at(kind).first, micro_batches * layers * 2);  // forward and backward
        EXPECT_DOUBLE_EQ(gathered.at(kind).second, micro_batches * layers * 2 * 524'288.0);
      }
    }
    double rows = 0.0, columns = 0.0;
    for (OpId i = 0; i < ops.size(); ++i) {
      if (ops.name(i) != "fwd.mlp_up") continue;
      rows = ops.m(i);
      columns = ops.n(i);
      expert_flops[etp - 1] += ops.flops(i);
    }
    EXPECT_EQ(rows, 256.0 * etp);
    EXPECT_EQ(columns, 2048.0 / etp);
    const double expert_parameters = layers * (etp == 1 ? 8'398'848.0 : 4'200'448.0);
    EXPECT_DOUBLE_EQ(stage_rank_parameters(s, 0).expert, expert_parameters);
    const auto edp = collectives(ops, comm_index(g, "edp"));
    EXPECT_DOUBLE_EQ(edp.at(CollectiveKind::all_reduce).second,
                     expert_parameters * parameter_state_bytes(s.training).gradients);
  }
  EXPECT_DOUBLE_EQ(expert_flops[0], expert_flops[1]);
}

TEST(PipelineSchedule, OneFOneBWarmsUpThenAlternates) {
  // 4 stages, 6 micro-batches, stage 1: 2 warm-up forwards.
  const auto units = pipeline_schedule("1f1b", 4, 1, 6, 1);
  std::string order;
  for (const auto& u : units)
    order += (u.forward ? "F" : "B") + std::to_string(u.micro_batch) + " ";
  EXPECT_EQ(order, "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5 ");
  EXPECT_EQ(pipeline_schedule("1f1b", 4, 3, 6, 1).front().forward, true);
  EXPECT_EQ(pipeline_schedule("1f1b", 4, 3, 6, 1)[1].forward, false);  // the last stage has no warm-up
}

TEST(PipelineSchedule, InterleavedCyclesThroughTheChunksInGroupsOfStages) {
  // 2 stages, 2 chunks, 4 micro-batches: forwards go (mb 0, 1) on chunk 0, (0, 1) on chunk 1, (2, 3) ...
  const auto units = pipeline_schedule("interleaved", 2, 0, 4, 2);
  ASSERT_EQ(units.size(), 16u);
  std::string order;
  for (const auto& u : units)
    order += (u.forward ? "F" : "B") + std::to_string(u.micro_batch) + "." + std::to_string(u.chunk) + " ";
  // warm-up (2 - 0 - 1) * 2 + (2 - 1) * 2 = 4 forwards; backward goes through the chunks in reverse
  EXPECT_EQ(order, "F0.0 F1.0 F0.1 F1.1 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 F3.1 B1.0 B2.1 B3.1 B2.0 B3.0 ");
}

TEST(ParallelGenerator, OneClassPerStageAndTheCommunicatorsOfTheLayout) {
  const WorkloadSpec s = gpt(2, 2, 2);
  const ExecutionGraph g = generate_transformer_training(s, world(s));
  ASSERT_EQ(g.classes().size(), 2u);
  EXPECT_EQ(g.classes()[0].ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(g.classes()[1].ranks, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(g.communicators()[comm_index(g, "tp")].groups.size(), 4u);
  EXPECT_EQ(g.communicators()[comm_index(g, "dp")].groups.front(), (std::vector<int>{0, 2}));
  EXPECT_EQ(g.communicators()[comm_index(g, "pp")].groups.front(), (std::vector<int>{0, 4}));
}

TEST(ParallelGenerator, TensorParallelismHalvesGemmFlopsAndAddsTwoAllReducesPerLayerForward) {
  const WorkloadSpec one = gpt(1, 1, 2), two = gpt(2, 1, 2);
  const ExecutionGraph g1 = generate_transformer_training(one, world(one));
  const ExecutionGraph g2 = generate_transformer_training(two, world(two));
  EXPECT_DOUBLE_EQ(gemm_flops(g2.classes()[0].ops), gemm_flops(g1.classes()[0].ops) / 2.0);
  const OpTable& ops = g2.classes()[0].ops;
  const std::uint16_t tp = comm_index(g2, "tp");
  const int micro_batches = 4;                    // 8 / (1 * 2)
  const double activation = 256.0 * 512.0 * 2.0;  // T x h x bf16
  // per layer forward: after the attention output projection and after the MLP
  const auto layers = collectives(ops, tp, "fwd.tp.");
  const auto per_layer = layers.at(CollectiveKind::all_reduce);
  // + the vocabulary-parallel embedding's all-reduce and the cross-entropy's three
  EXPECT_EQ(per_layer.first, micro_batches * (2 * 4 + 1 + 3));
  EXPECT_DOUBLE_EQ(per_layer.second, micro_batches * ((2 * 4 + 1) * activation + 3 * 256.0 * 4.0));
  // backward: one all-reduce of the input's gradient per column-parallel layer (qkv, mlp up, logits)
  EXPECT_EQ(collectives(ops, tp, "bwd.tp.").at(CollectiveKind::all_reduce).first, micro_batches * (2 * 4 + 1));
  EXPECT_TRUE(collectives(g1.classes()[0].ops, 0, "fwd.tp.").empty());
}

TEST(ParallelGenerator, SequenceParallelismTurnsAllReducesIntoGathersAndScatters) {
  WorkloadSpec s = gpt(2, 1, 1);
  s.parallelism.sequence_parallel = true;
  const ExecutionGraph g = generate_transformer_training(s, world(s));
  const OpTable& ops = g.classes()[0].ops;
  const std::uint16_t tp = comm_index(g, "tp");
  const int mb = 8;
  const auto fwd = collectives(ops, tp, "fwd.");
  // forward per layer: all-gather before qkv and mlp up, reduce-scatter after attn_out and mlp down;
  // plus the embedding's reduce-scatter and the all-gather before the logits
  EXPECT_EQ(fwd.at(CollectiveKind::all_gather).first, mb * (2 * 4 + 1));
  EXPECT_EQ(fwd.at(CollectiveKind::reduce_scatter).first, mb * (2 * 4 + 1));
  const auto bwd = collectives(ops, tp, "bwd.");
  // backward per layer: all-gather of the output gradient (2 row-parallel) and of the input again
  // (2 column-parallel), reduce-scatter of the dgrad (2); the logits layer adds one gather and one
  // scatter, the embedding one gather.
  EXPECT_EQ(bwd.at(CollectiveKind::all_gather).first, mb * (4 * 4 + 1 + 1));
  EXPECT_EQ(bwd.at(CollectiveKind::reduce_scatter).first, mb * (2 * 4 + 1));
  // Norms see T / tp tokens.
  for (OpId i = 0; i < ops.size(); ++i) {
    if (ops.name(i) == "fwd.ln1") {
      EXPECT_DOUBLE_EQ(ops.bytes(i), 2.0 * 128 * 512 * 2.0);
    }
  }
}

TEST(ParallelGenerator, PipelineStagesSendActivationsForwardAndGradientsBack) {
  const WorkloadSpec s = gpt(1, 4, 1);
  const ExecutionGraph g = generate_transformer_training(s, world(s));
  const std::uint16_t pp = comm_index(g, "pp");
  const double activation = 256.0 * 512.0 * 2.0;
  for (int stage = 0; stage < 4; ++stage) {
    const OpTable& ops = g.classes()[static_cast<std::size_t>(stage)].ops;
    int sends = 0, recvs = 0;
    for (OpId i = 0; i < ops.size(); ++i) {
      if (ops.kind(i) == OpKind::send) {
        ++sends;
        EXPECT_EQ(ops.communicator(i), pp);
        EXPECT_DOUBLE_EQ(ops.bytes(i), activation);
        EXPECT_EQ(ops.peer_offset(i), ops.tag(i) == 0 ? 1 : -1);
      }
      if (ops.kind(i) == OpKind::recv) ++recvs;
    }
    // 8 micro-batches: an activation out and a gradient in per micro-batch, except at the ends
    const int expected = (stage > 0 ? 8 : 0) + (stage < 3 ? 8 : 0);
    EXPECT_EQ(sends, expected) << stage;
    EXPECT_EQ(recvs, expected) << stage;
  }
  // one layer per stage; the embedding on the first, the logits on the last
  EXPECT_DOUBLE_EQ(gemm_flops(g.classes()[1].ops), gemm_flops(g.classes()[2].ops));
  EXPECT_GT(gemm_flops(g.classes()[3].ops), gemm_flops(g.classes()[2].ops));
}

TEST(ParallelGenerator, StageParametersSumToTheModel) {
  WorkloadSpec s = gpt(2, 4, 1);
  double total = 0.0;
  for (int stage = 0; stage < 4; ++stage)
    total += stage_rank_parameters(s, stage).total() * 2;  // both tp ranks
  // replicated per layer (norms and the two row-parallel biases) counted twice, once per tp rank
  const double replicated = replicated_layer_parameters(s.model) * 4 + embedding_parameter_groups(s.model).position +
                            embedding_parameter_groups(s.model).final_norm;
  EXPECT_DOUBLE_EQ(total - replicated, total_parameters(s.model));
}

TEST(ParallelGenerator, ZeroThreeGathersEachLayersWeightsTwicePerMicroBatchAndScattersGradientsOnce) {
  WorkloadSpec s = gpt(1, 1, 4);
  s.parallelism.zero_stage = 3;
  const ExecutionGraph g = generate_transformer_training(s, world(s));
  const OpTable& ops = g.classes()[0].ops;
  const std::uint16_t dp = comm_index(g, "dp");
  const ParameterStateBytes bytes = parameter_state_bytes(s.training);
  const double layer = layer_parameters(s.model);
  const auto all = collectives(ops, dp);
  const int micro_batches = 2;  // 8 / (1 * 4)
  // all-gather (full buffer = the layer's weights) before every layer's forward and backward
  int layer_gathers = 0, root_gathers = 0;
  double layer_gathered = 0.0, root_gathered = 0.0;
  for (OpId i = 0; i < ops.size(); ++i) {
    if (ops.kind(i) != OpKind::collective || ops.communicator(i) != dp) continue;
    if (ops.name(i) == "dp.param_all_gather") ++layer_gathers, layer_gathered += ops.bytes(i);
    if (ops.name(i) == "dp.param_all_gather.root") ++root_gathers, root_gathered += ops.bytes(i);
  }
  EXPECT_EQ(layer_gathers, micro_batches * 2 * 4);
  EXPECT_DOUBLE_EQ(layer_gathered, micro_batches * 2 * 4 * layer * bytes.weights);
  // and the root unit (the parameters outside the 4 layers) once per micro-batch, before its forward
  EXPECT_EQ(root_gathers, micro_batches);
  EXPECT_DOUBLE_EQ(root_gathered, micro_batches * (total_parameters(s.model) - 4 * layer) * bytes.weights);
  EXPECT_EQ(all.at(CollectiveKind::all_gather).first, layer_gathers + root_gathers);
  // every gradient reduce-scattered once, as fp32
  EXPECT_DOUBLE_EQ(all.at(CollectiveKind::reduce_scatter).second, total_parameters(s.model) * bytes.gradients);
  EXPECT_EQ(all.count(CollectiveKind::all_reduce), 0u);
}

TEST(ParallelGenerator, ZeroOneReduceScattersGradientsAndGathersTheUpdatedWeights) {
  WorkloadSpec s = gpt(1, 1, 4);
  s.parallelism.zero_stage = 1;
  const ExecutionGraph g = generate_transformer_training(s, world(s));
  const OpTable& ops = g.classes()[0].ops;
  const auto all = collectives(ops, comm_index(g, "dp"));
  const ParameterStateBytes bytes = parameter_state_bytes(s.training);
  EXPECT_DOUBLE_EQ(all.at(CollectiveKind::reduce_scatter).second, total_parameters(s.model) * bytes.gradients);
  EXPECT_EQ(all.at(CollectiveKind::all_gather).first, 1);
  EXPECT_DOUBLE_EQ(all.at(CollectiveKind::all_gather).second, total_parameters(s.model) * bytes.weights);
  // the optimizer updates a quarter of the parameters
  const OptimizerStepCost cost = optimizer_step_cost(s.training);
  int optimizer_ops = 0;
  for (OpId i = 0; i < ops.size(); ++i) {
    if (ops.kernel(i) == KernelClass::optimizer && ops.kind(i) == OpKind::compute) {
      ++optimizer_ops;
      EXPECT_DOUBLE_EQ(ops.bytes(i), total_parameters(s.model) / 4 * cost.bytes);
    }
  }
  EXPECT_EQ(optimizer_ops, 1);
}

TEST(ParallelGenerator, ContextParallelRingAttentionPassesKeyValueBlocks) {
  const WorkloadSpec s = gpt(1, 1, 1, 4);
  const ExecutionGraph g = generate_transformer_training(s, world(s));
  const OpTable& ops = g.classes()[0].ops;
  const std::uint16_t cp = comm_index(g, "cp");
  int sends = 0, attention = 0, causal_steps = 0;
  double attention_flops = 0.0;
  for (OpId i = 0; i < ops.size(); ++i) {
    if (ops.kind(i) == OpKind::send && ops.communicator(i) == cp && ops.tag(i) == 2) {
      ++sends;
      EXPECT_DOUBLE_EQ(ops.bytes(i), 64.0 * 2 * 512 * 2.0);  // K and V of 64 local tokens
    }
    if (ops.kind(i) == OpKind::compute && ops.name(i) == "fwd.attention") {
      ++attention;
      attention_flops += ops.flops(i);
      // load-balanced causal ring (2 cp chunks): step 0 causal over the rank's own 64 x 64 block, the
      // other steps dense over half a block, 64 queries x 32 keys
      if (ops.causal(i)) {
        ++causal_steps;
        EXPECT_EQ(ops.n(i), 64u);
      } else {
        EXPECT_EQ(ops.n(i), 32u);
      }
      EXPECT_EQ(ops.m(i), 64u);
    }
  }
  const int mb = 8;
  EXPECT_EQ(sends, mb * 4 * 3);      // cp - 1 blocks passed on per layer
  EXPECT_EQ(attention, mb * 4 * 4);  // one block per ring step
  EXPECT_EQ(causal_steps, mb * 4);   // the first step of each layer
  // every rank does 1 / cp of the causal attention over the whole sequence: half of the rank's
  // queries against every key, 4 * s_local * s * h / 2 per sequence and layer (64 x 64 / 2 + 3 x 64 x 32
  // = 8192 = 64 x 256 / 2 scores per head)
  EXPECT_DOUBLE_EQ(attention_flops, mb * 4 * 4.0 * 64 * 256 * 512 / 2.0);
  // gradients are reduced over dp x cp
  EXPECT_EQ(g.communicators()[comm_index(g, "dp")].groups.front().size(), 4u);
}

// parallelism.cp_comm all_gather (PyTorch context_parallel, workloads/context_parallel_comm.cpp):
// gpt(1, 1, 1, 4): 64 local tokens, h 512 (8 heads x 64, no GQA), 8 micro-batches of 1, 4 layers.
TEST(ParallelGenerator, ContextParallelAllGatherGathersKeyValueOncePerLayerEachWay) {
  WorkloadSpec s = gpt(1, 1, 1, 4);
  s.parallelism.cp_comm = "all_gather";
  const ExecutionGraph g = generate_transformer_training(s, world(s));
  const OpTable& ops = g.classes()[0].ops;
  const std::uint16_t cp = comm_index(g, "cp");
  const int mb = 8, layers = 4, steps = 4;
  // local K and V: 64 tokens x 2 x 512 = 65536 elements; the all-gather's output: cp x 65536 x 2 bytes
  const double kv = 64.0 * 2 * 512, q = 64.0 * 512;
  const auto fwd = collectives(ops, cp, "fwd.cp.");
  ASSERT_EQ(fwd.count(CollectiveKind::all_gather), 1u);
  EXPECT_EQ(fwd.at(CollectiveKind::all_gather).first, mb * layers);
  EXPECT_DOUBLE_EQ(fwd.at(CollectiveKind::all_gather).second, mb * layers * 4 * kv * 2.0);
  const auto bwd = collectives(ops, cp, "bwd.cp.");
  EXPECT_EQ(bwd.at(CollectiveKind::all_gather).first, mb * layers);  // gathered again in the backward
  int kv_sends = 0, grad_sends = 0, merges = 0, packs = 0, attention = 0;
  for (OpId i = 0; i < ops.size(); ++i) {
    const std::string_view name = ops.name(i);
    if (ops.kind(i) == OpKind::send && ops.communicator(i) == cp) {
      if (ops.tag(i) == 2) ++kv_sends;  // the ring's K/V blocks: none
      if (ops.tag(i) == 3) {
        ++grad_sends;
        EXPECT_DOUBLE_EQ(ops.bytes(i), kv * 4.0);  // dK and dV in fp32
      }
    }
    if (ops.kind(i) != OpKind::compute) continue;
    if (name == "fwd.attention") ++attention;
    if (name == "fwd.cp.merge") {
      ++merges;
      EXPECT_DOUBLE_EQ(ops.bytes(i), 38.0 * q);  // out.to(fp32) 6 + three fp32 eager ops 32
    }
    if (name == "fwd.cp.pack_kv") {
      ++packs;
      EXPECT_DOUBLE_EQ(ops.bytes(i), 4.0 * kv);  // torch.cat: reads and writes bf16
    }
    if (name == "fwd.cp.output_cast") {
      EXPECT_DOUBLE_EQ(ops.bytes(i), 12.0 * q);
    }
    if (name == "bwd.cp.grad_accumulate") {
      EXPECT_DOUBLE_EQ(ops.bytes(i), 18.0 * kv + 10.0 * q);
    }
    if (name == "bwd.cp.grad_cast") {
      EXPECT_DOUBLE_EQ(ops.bytes(i), 10.0 * (q + kv));
    }
  }
  EXPECT_EQ(kv_sends, 0);
  EXPECT_EQ(grad_sends, mb * layers * steps);    // every backward step passes dK/dV on
  EXPECT_EQ(merges, mb * layers * (steps - 1));  // every step after the first
  EXPECT_EQ(packs, mb * layers * (steps - 1));   // at every step i < cp - 1
  EXPECT_EQ(attention, mb * layers * steps);     // the same load-balanced steps as the ring
  // the ring is unchanged and stays the default
  EXPECT_EQ(gpt(1, 1, 1, 4).parallelism.cp_comm, "ring");
}

// fused.gqa false (torchtitan's repeat_kv): K and V are copied to every query head before attention.
TEST(ParallelGenerator, UnfusedGqaRepeatsKeyValuePerQueryHead) {
  WorkloadSpec s = gpt(1, 1, 1);
  s.model.kv_heads = 2;  // 8 query heads of 64, 2 kv heads: kv width 128, repeated 512
  StackProfile fused = find_software_stack("megatron-core");
  StackProfile repeated = fused;
  repeated.fused.gqa = false;
  const ExecutionGraph gf = generate_transformer_training(s, 1, fused);
  const ExecutionGraph gr = generate_transformer_training(s, 1, repeated);
  const OpTable& f = gf.classes()[0].ops;
  const OpTable& r = gr.classes()[0].ops;
  double repeat_bytes = 0.0, attention_f = 0.0, attention_r = 0.0;
  int repeats = 0;
  for (OpId i = 0; i < r.size(); ++i) {
    if (r.kind(i) != OpKind::compute) continue;
    if (r.name(i).find("repeat_kv") != std::string_view::npos) {
      ++repeats;
      repeat_bytes = r.bytes(i);
    }
    if (r.name(i) == "fwd.attention") attention_r = r.bytes(i);
  }
  for (OpId i = 0; i < f.size(); ++i) {
    if (f.kind(i) == OpKind::compute && f.name(i) == "fwd.attention") attention_f = f.bytes(i);
    EXPECT_EQ(f.name(i).find("repeat_kv"), std::string_view::npos);
  }
  EXPECT_EQ(repeats, 8 * 4 * 2);  // forward and backward, 4 layers, 8 micro-batches
  // 256 tokens x 2 (K, V) x (128 read + 512 written) x 2 bytes
  EXPECT_DOUBLE_EQ(repeat_bytes, 256.0 * 2 * (128 + 512) * 2.0);
  // the attention kernel reads K and V at the query width: 256 x 2 x (512 - 128) x 2 bytes more
  EXPECT_DOUBLE_EQ(attention_r - attention_f, 256.0 * 2 * (512 - 128) * 2.0);
}

// training.cross_entropy: the loss kernels move their framework's bytes per logit (memory_recipe.cpp):
// Megatron-Core 38 forward + 14 backward, flash-attn's Triton kernel 2 + 4, PyTorch eager 22 + 26
// counted by hand from aten's SoftMax.cu: forward the cast (2 + 4) and log_softmax's three passes over
// the fp32 row (max, sum of exponentials, output: 3 x 4 read + 4 written); backward the zero-filled
// dense gradient (4), _log_softmax_backward_data's two passes (the gradient summed 4, then the gradient
// and the output read 4 + 4, the result written 4) and the cast back (4 + 2);
// 256 tokens x 1024 logits per micro-batch, plus one fp32 loss per token written by the forward.
TEST(ParallelGenerator, LossKernelsMoveTheirFrameworksCrossEntropyBytes) {
  const double logits = 256.0 * 1024, tokens = 256.0;
  const std::pair<const char*, std::pair<double, double>> recipes[] = {
      {"vocab_parallel", {38.0, 14.0}},
      {"eager", {(2.0 + 4.0) + (3.0 * 4.0 + 4.0), 4.0 + (4.0 + 4.0 + 4.0 + 4.0) + (4.0 + 2.0)}},
      {"fused", {2.0, 4.0}}};
  for (const auto& [name, bytes] : recipes) {
    SCOPED_TRACE(name);
    WorkloadSpec s = gpt(1, 1, 1);
    s.training.cross_entropy = name;
    const ExecutionGraph g = generate_transformer_training(s, 1);
    const OpTable& ops = g.classes()[0].ops;
    int forward = 0, backward = 0;
    for (OpId i = 0; i < ops.size(); ++i) {
      if (ops.kind(i) != OpKind::compute) continue;
      if (ops.name(i) == "fwd.loss") {
        ++forward;
        EXPECT_EQ(ops.kernel(i), KernelClass::loss);
        EXPECT_DOUBLE_EQ(ops.bytes(i), bytes.first * logits + 4.0 * tokens);
      }
      if (ops.name(i) == "bwd.loss") {
        ++backward;
        EXPECT_DOUBLE_EQ(ops.bytes(i), bytes.second * logits);
      }
    }
    EXPECT_EQ(forward, 8);  // one per micro-batch
    EXPECT_EQ(backward, 8);
  }
}

TEST(ParallelGenerator, ExpertParallelismAddsAllToAllsAndAnExpertGradientGroup) {
  WorkloadSpec s = gpt(1, 1, 4);
  s.model.moe.experts = 8;
  s.model.moe.top_k = 2;
  s.model.moe.load_imbalance = 1.5;
  s.parallelism.ep = 2;
  const ExecutionGraph g = generate_transformer_training(s, world(s));
  const OpTable& ops = g.classes()[0].ops;
  const auto ep = collectives(ops, comm_index(g, "ep"));
  const int mb = 2;
  // dispatch and combine in forward and in backward, each layer
  EXPECT_EQ(ep.at(CollectiveKind::all_to_all).first, mb * 4 * 4);
  EXPECT_DOUBLE_EQ(ep.at(CollectiveKind::all_to_all).second, mb * 4 * 4 * (256.0 * 2 * 1.5) * 512 * 2.0);
  EXPECT_EQ(g.communicators()[comm_index(g, "edp")].groups.front(), (std::vector<int>{0, 2}));
  EXPECT_EQ(g.communicators()[comm_index(g, "ep")].groups.front(), (std::vector<int>{0, 1}));
}

TEST(ParallelGenerator, TiedEmbeddingsAreAllReducedBetweenFirstAndLastStage) {
  WorkloadSpec s = gpt(2, 3, 1);
  s.model.layers = 3;
  s.model.tied_embeddings = true;
  const ExecutionGraph g = generate_transformer_training(s, world(s));
  const std::uint16_t embd = comm_index(g, "embd");
  EXPECT_EQ(g.communicators()[embd].groups, (std::vector<std::vector<int>>{{0, 4}, {1, 5}}));
  const double bytes = 1024.0 * 512 / 2 * parameter_state_bytes(s.training).gradients;
  EXPECT_DOUBLE_EQ(collectives(g.classes()[0].ops, embd).at(CollectiveKind::all_reduce).second, bytes);
  EXPECT_TRUE(collectives(g.classes()[1].ops, embd).empty());
  EXPECT_DOUBLE_EQ(collectives(g.classes()[2].ops, embd).at(CollectiveKind::all_reduce).second, bytes);
}

// Megatron's unfused attention: the scores and the weighted sum as batched GEMMs (the same flops as
// the fused kernel's forward), the softmax reading and writing the s x s scores of every head.
TEST(ParallelGenerator, UnfusedAttentionIsTwoBatchedGemmsAroundASoftmax) {
  WorkloadSpec s = gpt(1, 1, 1);
  s.training.attention = "unfused";
  const ExecutionGraph g = generate_transformer_training(s, world(s));
  const OpTable& ops = g.classes()[0].ops;
  const double heads = 8, seq = 256, d = 64;
  int softmax = 0;
  for (OpId i = 0; i < ops.size(); ++i) {
    if (ops.name(i) == "fwd.attention.scores") {
      EXPECT_EQ(ops.kernel(i), KernelClass::gemm);
      EXPECT_DOUBLE_EQ(ops.flops(i), 2.0 * seq * seq * d * heads);
      EXPECT_EQ(ops.batch(i), 8u);
    }
    if (ops.name(i) == "fwd.attention.softmax") {
      ++softmax;
      EXPECT_DOUBLE_EQ(ops.bytes(i), 2.0 * heads * seq * seq * 2.0);
    }
  }
  EXPECT_EQ(softmax, 8 * 4);  // per micro-batch and layer
}

// Megatron's scatter-gather between stages: with tp > 1 (no sequence parallelism) each tensor-parallel
// rank sends 1/tp of the activation and the receiving stage all-gathers it.
TEST(ParallelGenerator, StagesSendOneTensorParallelShareAndGatherIt) {
  const WorkloadSpec s = gpt(2, 2, 1);
  const ExecutionGraph g = generate_transformer_training(s, world(s));
  const OpTable& last = g.classes()[1].ops;
  const double activation = 256.0 * 512.0 * 2.0;
  int recvs = 0;
  for (OpId i = 0; i < last.size(); ++i) {
    if (last.kind(i) != OpKind::recv) continue;
    ++recvs;
    EXPECT_DOUBLE_EQ(last.bytes(i), activation / 2);
  }
  EXPECT_EQ(recvs, 8);  // one activation per micro-batch
  const auto gathers = collectives(last, comm_index(g, "tp"), "pp.tp.all_gather_received");
  EXPECT_EQ(gathers.at(CollectiveKind::all_gather).first, 8);
  EXPECT_DOUBLE_EQ(gathers.at(CollectiveKind::all_gather).second, 8 * activation);
}

// tp_comm_overlap: the same GEMM flops and communicated bytes, the forward gathers and scatters split
// into tp chunks on their own stream.
TEST(ParallelGenerator, TensorParallelOverlapChunksTheSameWorkOntoAStream) {
  WorkloadSpec plain = gpt(2, 1, 1);
  plain.parallelism.sequence_parallel = true;
  WorkloadSpec overlap = plain;
  overlap.parallelism.tp_comm_overlap = true;
  const ExecutionGraph a = generate_transformer_training(plain, world(plain));
  const ExecutionGraph b = generate_transformer_training(overlap, world(overlap));
  const OpTable& pa = a.classes()[0].ops;
  const OpTable& pb = b.classes()[0].ops;
  EXPECT_DOUBLE_EQ(gemm_flops(pb), gemm_flops(pa));
  const auto ca = collectives(pa, comm_index(a, "tp"), "fwd.tp.");
  auto cb = collectives(pb, comm_index(b, "tp"), "fwd.tp.");
  // The chunks run on the second "tp" communicator: the same groups as Transformer Engine userbuffers.
  ASSERT_EQ(b.communicators().size(), a.communicators().size() + 1);
  const auto ub = static_cast<std::uint16_t>(b.communicators().size() - 1);
  EXPECT_EQ(b.communicators()[ub].name, "tp");
  EXPECT_TRUE(b.communicators()[ub].userbuffers);
  EXPECT_EQ(b.communicators()[ub].groups, b.communicators()[comm_index(b, "tp")].groups);
  for (const auto& [k, c] : collectives(pb, ub, "fwd.tp.")) {
    cb[k].first += c.first;
    cb[k].second += c.second;
  }
  for (CollectiveKind k : {CollectiveKind::all_gather, CollectiveKind::reduce_scatter}) {
    EXPECT_DOUBLE_EQ(cb.at(k).second, ca.at(k).second);
    // per layer two gathers become tp chunks each, two scatters Transformer Engine's 4 splits each
    // (embedding and logits stay whole)
    const int chunks = k == CollectiveKind::all_gather ? 2 : 4;
    EXPECT_EQ(cb.at(k).first, ca.at(k).first + 8 * 4 * 2 * (chunks - 1));
  }
  int on_tp_stream = 0;
  for (OpId i = 0; i < pb.size(); ++i)
    on_tp_stream += pb.kind(i) == OpKind::collective && pb.stream(i) == 2 ? 1 : 0;
  EXPECT_GT(on_tp_stream, 0);
}

// overlap_param_gather: the same weight bytes gathered, in buckets of consecutive layers issued at the
// start of the step (the previous step's gathers), none after the optimizer.
TEST(ParallelGenerator, OverlappedParameterGatherMovesTheSameBytesBeforeTheForward) {
  WorkloadSpec s = gpt(1, 1, 4);
  s.parallelism.zero_stage = 1;
  s.parallelism.overlap_param_gather = true;
  s.parallelism.bucket_size_params = 1;  // one bucket per layer
  const ExecutionGraph g = generate_transformer_training(s, world(s));
  const OpTable& ops = g.classes()[0].ops;
  const auto gathers = collectives(ops, comm_index(g, "dp")).at(CollectiveKind::all_gather);
  EXPECT_EQ(gathers.first, 4);  // one per layer (the first bucket also holds the embeddings)
  // every weight (the final norm and the output layer with the last layer's bucket)
  EXPECT_DOUBLE_EQ(gathers.second, total_parameters(s.model) * parameter_state_bytes(s.training).weights);
  OpId optimizer = 0;
  for (OpId i = 0; i < ops.size(); ++i) {
    if (ops.kind(i) == OpKind::compute && ops.kernel(i) == KernelClass::optimizer) optimizer = i;
    if (ops.kind(i) == OpKind::collective && ops.collective(i) == CollectiveKind::all_gather) {
      EXPECT_TRUE(ops.deps(i).empty());  // issued at the start of the step
    }
  }
  for (OpId i = optimizer + 1; i < ops.size(); ++i)
    EXPECT_NE(ops.kind(i), OpKind::collective);
}

// Dropout costs memory traffic: a kernel over the attention probabilities (unfused attention) that
// reads them and writes them with a one-byte mask, and a one-byte mask per element in each residual.
TEST(ParallelGenerator, DropoutAddsItsMasksAndAKernelOverTheProbabilities) {
  WorkloadSpec plain = gpt(1, 1, 1);
  plain.training.attention = "unfused";
  WorkloadSpec dropped = plain;
  dropped.training.dropout = 0.1;
  const ExecutionGraph ga = generate_transformer_training(plain, world(plain));
  const ExecutionGraph gb = generate_transformer_training(dropped, world(dropped));
  const OpTable& a = ga.classes()[0].ops;
  const OpTable& b = gb.classes()[0].ops;
  const double scores = 8.0 * 256 * 256, elements = 256.0 * 512;
  int dropout_kernels = 0;
  for (OpId i = 0; i < b.size(); ++i) {
    if (b.name(i) == "fwd.attention.dropout") {
      ++dropout_kernels;
      EXPECT_DOUBLE_EQ(b.bytes(i), scores * (2 * 2.0 + 1.0));
    }
  }
  EXPECT_EQ(dropout_kernels, 8 * 4);
  double residual_a = 0.0, residual_b = 0.0;
  for (OpId i = 0; i < a.size(); ++i)
    if (a.name(i) == "fwd.residual1") residual_a = a.bytes(i);
  for (OpId i = 0; i < b.size(); ++i)
    if (b.name(i) == "fwd.residual1") residual_b = b.bytes(i);
  EXPECT_DOUBLE_EQ(residual_b - residual_a, elements);
  EXPECT_DOUBLE_EQ(gemm_flops(b), gemm_flops(a));
}

}  // namespace
}  // namespace clustersim
