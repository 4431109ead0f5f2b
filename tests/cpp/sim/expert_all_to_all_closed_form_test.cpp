// The closed form of the expert-parallel all-to-all across nodes (ReplayOptions::
// closed_form_edge_all_to_all): DeepEP's rail-local dispatch and combine under one leaf switch are timed
// by their idle-fabric time instead of SimGrid's flows. Checked against the exhaustive flow replay of
// the same step: exact when nothing else loads the NICs, optimistic by a bounded amount when pipeline
// sends share them; and not taken where a route climbs above the leaves.
#include <gtest/gtest.h>

#include "../transformer_fixture.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/network/network_backend.hpp"
#include "sim/replay/replay_engine.hpp"
#include "sim_test_support.hpp"
#include "workloads/transformer_generator.hpp"

namespace clustersim {
namespace {

// A small MoE model: 2 layers per stage of h 2048, 16 experts top-2, EP 16 over 2 nodes of 8 GPUs
// and 8 NICs per stage. The fat-tree's leaves of radix 64 (32 ports down) hold all 16 or 32 NICs, so
// DeepEP's RDMA stage goes NIC -> leaf -> NIC.
WorkloadSpec small_moe(int pp) {
  WorkloadSpec s = testing::transformer_workload(
      "moe", {.layers = 2 * pp, .hidden = 2048, .heads = 16, .ffn_hidden = 8192, .seq_len = 2048, .vocab = 32000},
      4 * 16, 1);
  s.model.moe.experts = 16;
  s.model.moe.top_k = 2;
  s.model.moe.expert_ffn_hidden = 2048;
  s.parallelism.pp = pp;
  s.parallelism.dp = 16;
  s.parallelism.ep = 16;
  s.parallelism.overlap_grad_reduce = false;
  return s;
}

struct Replayed {
  double step_s;
  double transfers;
};

// {closed form, exhaustive}: the step and the transfers the backend simulated, each in its own child
// (SimGrid's engine runs once per process).
std::vector<Replayed> closed_form_vs_exhaustive(const WorkloadSpec& spec, const ClusterSpec& cs,
                                                const std::string& algorithm) {
  std::vector<Replayed> out;
  for (bool closed_form : {true, false}) {
    const auto r = testing::in_child([&] {
      const Cluster cluster = Cluster::build(cs);
      const ExecutionGraph graph = generate_transformer_training(spec, cluster.gpu_count());
      auto backend = find_network_backend("flow")->make(cluster, ideal_network_profile());
      ReplayOptions options;
      options.algorithm_by_communicator["ep"] = algorithm;
      options.closed_form_edge_all_to_all = closed_form;
      const GpuSpec gpu = find_gpu("h100-sxm5-80gb", "test", "/gpu");
      const ReplayResult result = replay(graph, cluster, gpu, *backend, options);
      return std::vector<double>{result.step_time_s, static_cast<double>(result.transfers)};
    });
    out.push_back({r.at(0), r.at(1)});
  }
  return out;
}

// Expert parallelism alone (pp 1, the gradient all-reduce after the backward): the all-to-alls never
// share a link with other traffic, so the closed form is the flow model's answer, and the backend
// simulates none of DeepEP's 16 x (1 RDMA + 7 NVLink) transfers per call.
TEST(ExpertAllToAllClosedForm, ExactForExpertParallelismAlone) {
  const auto r = closed_form_vs_exhaustive(small_moe(1), testing::fat_tree_spec(2, 8, 8), "deepep");
  EXPECT_NEAR(r[0].step_s, r[1].step_s, r[1].step_s * 1e-6);
  EXPECT_LT(r[0].transfers, r[1].transfers);
}

// Two pipeline stages of 2 nodes each: the stages' sends cross the same NICs while the other stage's
// all-to-alls run. The closed form ignores that sharing: optimistic, within 1 % here.
TEST(ExpertAllToAllClosedForm, CloseWhenPipelineSendsShareTheNics) {
  const auto r = closed_form_vs_exhaustive(small_moe(2), testing::fat_tree_spec(4, 8, 8), "deepep");
  EXPECT_LE(r[0].step_s, r[1].step_s * (1 + 1e-9));
  EXPECT_NEAR(r[0].step_s, r[1].step_s, r[1].step_s * 0.01);
  EXPECT_LT(r[0].transfers, r[1].transfers);
}

// The direct all-to-all sends GPU i of node a to GPU j != i of node b: across rails, through the spine
// of a rail-optimized fabric (and between leaves of a 2-node fat-tree of radix 8): not under one leaf,
// so the backend simulates it, the same transfers either way.
TEST(ExpertAllToAllClosedForm, NotTakenWhereRoutesCrossSwitchToSwitchLinks) {
  const auto r =
      closed_form_vs_exhaustive(small_moe(1), testing::fat_tree_spec(2, 8, 8, 400.0, 450.0, 1.0, 8), "direct");
  EXPECT_EQ(r[0].transfers, r[1].transfers);
  EXPECT_DOUBLE_EQ(r[0].step_s, r[1].step_s);
}

}  // namespace
}  // namespace clustersim
