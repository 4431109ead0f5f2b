// One simulated transfer per class of identical transfers (sim/replay/traffic_classes.hpp): the
// replay with classes must equal the exhaustive replay to the last bit, link by link, where it applies
// (the analytical backend, static d_mod_k routing); elsewhere every transfer is simulated.
#include "sim/replay/traffic_classes.hpp"

#include <algorithm>
#include <memory>

#include <gtest/gtest.h>

#include "../transformer_fixture.hpp"
#include "expect_same_class_times.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/network/network_backend.hpp"
#include "sim/replay/replay_engine.hpp"
#include "sim_test_support.hpp"
#include "topologies/cluster.hpp"
#include "workloads/transformer_generator.hpp"

namespace clustersim {
namespace {

// A ring of 8 single-GPU nodes on a 2-tier fat-tree of radix 8 (4 nodes per leaf, 2 leaves), D-mod-K:
// the 6 transfers inside a leaf (0->1, 1->2, 2->3, 4->5, 5->6, 6->7) cross NIC -> leaf -> NIC links
// that no other transfer crosses: one class. The 2 that cross the spines (3->4, 7->0) are another.
TEST(TrafficClasses, ARingAcrossTwoLeavesHasTwoClasses) {
  ClusterSpec spec = testing::fat_tree_spec(8, 1, 1, 400.0, 450.0, 1.0, 8);
  spec.fabric.routing = "d_mod_k";
  const Cluster cluster = Cluster::build(spec);
  std::vector<Transfer> ring;
  for (int r = 0; r < 8; ++r)
    ring.push_back({r, (r + 1) % 8, 1.0});
  TrafficClasses classes(cluster);
  ASSERT_TRUE(classes.add_batch(ring));
  ASSERT_TRUE(classes.refine());
  EXPECT_EQ(classes.transfers(), 8U);
  ASSERT_EQ(classes.transfer_classes(), 2U);
  const auto reps = classes.representatives(0);
  ASSERT_EQ(reps.size(), 2U);
  EXPECT_EQ(reps[0].first, 0U);  // 0 -> 1 stands for the transfers inside a leaf
  EXPECT_EQ(reps[1].first, 3U);  // 3 -> 4 for those across the spines
  // 0 -> 1 crosses GPU -> NIC, NIC -> leaf, leaf -> NIC, NIC -> GPU, each crossed by this transfer
  // only: two classes of links (PCIe, InfiniBand), each once in its class route, as canonical links.
  const LinkClasses& lc = classes.link_classes();
  std::vector<int> route;
  cluster.route(0, 1, 0, route);
  ASSERT_EQ(route.size(), 4U);
  const auto class_route = lc.route(static_cast<std::size_t>(reps[0].second));
  EXPECT_EQ(class_route.size(), 2U);
  for (const int l : class_route)
    EXPECT_EQ(lc.canonical[static_cast<std::size_t>(l)], l);
  EXPECT_EQ(lc.canonical[static_cast<std::size_t>(route[0])], lc.canonical[static_cast<std::size_t>(route[3])]);
  EXPECT_EQ(lc.canonical[static_cast<std::size_t>(route[1])], lc.canonical[static_cast<std::size_t>(route[2])]);
}

// A generated training step (tp 2, pp 2, dp 8, 2-GPU nodes: 16 nodes on a 2-tier fat-tree of radix 8)
// on the analytical backend, with and without traffic classes.
ReplayResult replay_step(const std::string& routing, bool classes, int dp = 8, int tiers = 2,
                         std::shared_ptr<ReplayMemo> memo = nullptr) {
  ClusterSpec cs = testing::fat_tree_spec(2 * dp, 2, 2, 400.0, 450.0, 1.0, 8);
  cs.fabric.tiers = tiers;
  cs.fabric.routing = routing;
  const Cluster cluster = Cluster::build(cs);
  WorkloadSpec spec = testing::transformer_workload(
      "classes", {.layers = 4, .hidden = 1024, .heads = 8, .ffn_hidden = 4096, .seq_len = 1024, .vocab = 1000}, 32, 1);
  spec.parallelism.tp = 2;
  spec.parallelism.pp = 2;
  spec.parallelism.dp = dp;
  const ExecutionGraph graph = generate_transformer_training(spec, cluster.gpu_count());
  auto backend = find_network_backend("analytical")->make(cluster, ideal_network_profile());
  const GpuSpec gpu = find_gpu("h100-sxm5-80gb", "test", "/gpu");
  ReplayOptions options;
  options.traffic_classes = classes;
  options.memo = std::move(memo);
  return replay(graph, cluster, gpu, *backend, options);
}

void expect_equal_replays(int dp, int tiers, std::shared_ptr<ReplayMemo> memo = nullptr) {
  SCOPED_TRACE("dp " + std::to_string(dp) + ", " + std::to_string(tiers) + " tiers");
  const ReplayResult exact = replay_step("d_mod_k", false, dp, tiers);
  const ReplayResult reduced = replay_step("d_mod_k", true, dp, tiers, memo);
  EXPECT_EQ(exact.transfers_simulated, exact.transfers);
  EXPECT_LT(2 * reduced.transfers_simulated, reduced.transfers);  // at least halved
  EXPECT_EQ(exact.step_time_s, reduced.step_time_s);
  EXPECT_EQ(exact.critical_class, reduced.critical_class);
  ASSERT_NO_FATAL_FAILURE(testing::expect_same_class_times(
      exact, reduced, {&ClassTimes::finish_s, &ClassTimes::exposed_communication_s, &ClassTimes::communication_s}));
  ASSERT_EQ(exact.collectives.size(), reduced.collectives.size());
  for (std::size_t i = 0; i < exact.collectives.size(); ++i)
    EXPECT_EQ(exact.collectives[i].end_s, reduced.collectives[i].end_s) << i;
  double network_bytes = 0.0;
  ASSERT_EQ(exact.link_bytes.size(), reduced.link_bytes.size());
  for (std::size_t l = 0; l < exact.link_bytes.size(); ++l) {
    network_bytes += exact.link_bytes[l];
    EXPECT_EQ(exact.link_bytes[l], reduced.link_bytes[l]) << "link " << l;
    EXPECT_EQ(exact.link_busy_s[l], reduced.link_busy_s[l]) << "link " << l;
  }
  EXPECT_GT(network_bytes, 0.0);
  EXPECT_EQ(exact.link_bytes_by_communicator, reduced.link_bytes_by_communicator);
  EXPECT_EQ(exact.transfers, reduced.transfers);
  EXPECT_EQ(exact.p2p_bytes, reduced.p2p_bytes);
}

// 16 nodes on 2 tiers (4 leaves); 64 nodes on 3 tiers of radix 8 (pods of 4 leaves: 4 pods).
TEST(TrafficClasses, ReplayWithClassesEqualsTheExhaustiveOneUnderDestinationRouting) {
  expect_equal_replays(8, 2);
  expect_equal_replays(32, 3);
}

// The clock solver's replays share a memo (simulate: one per simulation, one cluster): replays of one
// step on it give the exhaustive replay's result each time, and a step with other batches forms its
// classes afresh.
TEST(TrafficClasses, ReplaysSharingAMemoEqualTheExhaustiveOne) {
  const auto memo = make_replay_memo();
  expect_equal_replays(8, 2, memo);
  expect_equal_replays(8, 2, memo);
  expect_equal_replays(32, 3, memo);  // other batches: formed afresh
}

// Adaptive routing picks links by load when a transfer starts: routes cannot be computed once.
TEST(TrafficClasses, AdaptiveRoutingSimulatesEveryTransfer) {
  const ReplayResult r = replay_step("adaptive", true);
  EXPECT_EQ(r.transfers_simulated, r.transfers);
}

}  // namespace
}  // namespace clustersim
