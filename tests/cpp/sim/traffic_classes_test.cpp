// One simulated transfer per class of identical transfers (sim/replay/traffic_classes.hpp): the
// replay with classes must equal the exhaustive replay to the last bit, link by link, where it applies
// (the analytical backend, static d_mod_k routing, and adaptive routing where each collective's launch
// meets no other traffic at its choices); elsewhere every transfer is simulated (hashed ECMP).
#include "sim/replay/traffic_classes.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include <gtest/gtest.h>

#include "../transformer_fixture.hpp"
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
Cluster step_cluster(const std::string& routing, int dp, int tiers) {
  ClusterSpec cs = testing::fat_tree_spec(2 * dp, 2, 2, 400.0, 450.0, 1.0, 8);
  cs.fabric.tiers = tiers;
  cs.fabric.routing = routing;
  return Cluster::build(cs);
}

ReplayResult replay_step(const std::string& routing, bool classes, int dp = 8, int tiers = 2,
                         std::shared_ptr<ReplayMemo> memo = nullptr, bool adaptive_classes = true) {
  const Cluster cluster = step_cluster(routing, dp, tiers);
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
  options.adaptive_traffic_classes = adaptive_classes;
  options.memo = std::move(memo);
  return replay(graph, cluster, gpu, *backend, options);
}

// `moved_share`: under adaptive routing a launch is routed against its own load only (where other
// traffic is in flight the exhaustive replay may pick another of the equal-cost links): the times must
// still be equal, each link's bytes within this share of all the bytes moved (sum |diff| / sum), each
// tier's total exactly; < 0: every link equal.
void expect_equal_replays(int dp, int tiers, std::shared_ptr<ReplayMemo> memo = nullptr,
                          const std::string& routing = "d_mod_k", double moved_share = -1.0) {
  SCOPED_TRACE(routing + ", dp " + std::to_string(dp) + ", " + std::to_string(tiers) + " tiers");
  const ReplayResult exact = replay_step(routing, false, dp, tiers);
  const ReplayResult reduced = replay_step(routing, true, dp, tiers, memo);
  EXPECT_EQ(exact.transfers_simulated, exact.transfers);
  EXPECT_LT(2 * reduced.transfers_simulated, reduced.transfers);  // at least halved
  EXPECT_EQ(exact.step_time_s, reduced.step_time_s);
  EXPECT_EQ(exact.critical_class, reduced.critical_class);
  ASSERT_EQ(exact.classes.size(), reduced.classes.size());
  for (std::size_t c = 0; c < exact.classes.size(); ++c) {
    EXPECT_EQ(exact.classes[c].finish_s, reduced.classes[c].finish_s) << c;
    EXPECT_EQ(exact.classes[c].exposed_communication_s, reduced.classes[c].exposed_communication_s) << c;
    EXPECT_EQ(exact.classes[c].communication_s, reduced.classes[c].communication_s) << c;
  }
  ASSERT_EQ(exact.collectives.size(), reduced.collectives.size());
  for (std::size_t i = 0; i < exact.collectives.size(); ++i)
    EXPECT_EQ(exact.collectives[i].end_s, reduced.collectives[i].end_s) << i;
  double network_bytes = 0.0, moved = 0.0;
  ASSERT_EQ(exact.link_bytes.size(), reduced.link_bytes.size());
  std::map<std::pair<DeviceKind, DeviceKind>, std::pair<double, double>> per_tier;  // (exact, reduced) bytes
  const Cluster cluster = step_cluster(routing, dp, tiers);
  for (std::size_t l = 0; l < exact.link_bytes.size(); ++l) {
    network_bytes += exact.link_bytes[l];
    moved += std::abs(exact.link_bytes[l] - reduced.link_bytes[l]);
    const Link& link = cluster.links()[l];
    auto& tier = per_tier[{cluster.devices()[static_cast<std::size_t>(link.src)].kind,
                           cluster.devices()[static_cast<std::size_t>(link.dst)].kind}];
    tier.first += exact.link_bytes[l];
    tier.second += reduced.link_bytes[l];
    if (moved_share >= 0.0) continue;
    EXPECT_EQ(exact.link_bytes[l], reduced.link_bytes[l]) << "link " << l;
    EXPECT_EQ(exact.link_busy_s[l], reduced.link_busy_s[l]) << "link " << l;
  }
  EXPECT_GT(network_bytes, 0.0);
  EXPECT_LE(moved, std::max(moved_share, 0.0) * network_bytes) << "share " << moved / network_bytes;
  for (const auto& [kinds, bytes] : per_tier)
    EXPECT_DOUBLE_EQ(bytes.first, bytes.second);
  if (moved_share < 0.0) EXPECT_EQ(exact.link_bytes_by_communicator, reduced.link_bytes_by_communicator);
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

// Adaptive routing picks links by the load when a transfer starts. The classes route each collective's
// groups, phase by phase, as the backend starts them (one launch: each transfer against the launch's
// earlier ones), not against other traffic in flight: where that meets a launch at a choice the
// exhaustive replay may take another of the equal-cost links. Here (and in the 405B-class step from
// 1,024 to 131,072 GPUs, docs/performance.md) every time is the exhaustive replay's; the bytes moved to
// other links of the same tier are bounded by the measured share (sum |diff| / sum of the link bytes:
// dp 8 0.158 %, dp 32 0.348 %; the 405B-class step 0.0007 % to 0.0012 %).
TEST(TrafficClasses, ReplayWithClassesUnderAdaptiveRoutingKeepsTheExhaustiveTimes) {
  expect_equal_replays(8, 2, nullptr, "adaptive", 0.0016);
  expect_equal_replays(32, 3, nullptr, "adaptive", 0.0035);
}

// Two transfers to GPU 4 from leaf 0 (GPUs 0 and 1; 8 single-GPU nodes, radix 8: 4 nodes and 4 uplinks
// per leaf). Both start their scan of leaf 0's uplinks at the destination's digit. In one launch the
// second sees the first on that uplink and takes the next one, as the backend routes a launch; as two
// launches each is routed on an idle fabric and both take the same uplink.
TEST(TrafficClasses, ALaunchRoutesItsBatchesAgainstEachOthersLoad) {
  ClusterSpec spec = testing::fat_tree_spec(8, 1, 1, 400.0, 450.0, 1.0, 8);
  spec.fabric.routing = "adaptive";
  const Cluster cluster = Cluster::build(spec);
  const std::vector<Transfer> first{{0, 4, 1.0}}, second{{1, 4, 1.0}};
  const auto uplinks_taken = [&](bool same_launch) {
    TrafficClasses classes(cluster);
    EXPECT_TRUE(classes.add_batch(first));
    EXPECT_TRUE(classes.add_batch(second, same_launch));
    EXPECT_TRUE(classes.refine());
    int taken = 0;  // leaf -> spine links some class route takes
    for (std::size_t l = 0; l < cluster.links().size(); ++l) {
      const Link& link = cluster.links()[l];
      if (cluster.devices()[static_cast<std::size_t>(link.src)].kind == DeviceKind::leaf_switch &&
          cluster.devices()[static_cast<std::size_t>(link.dst)].kind == DeviceKind::spine_switch &&
          classes.link_classes().canonical[l] >= 0)
        ++taken;
    }
    return taken;
  };
  EXPECT_EQ(uplinks_taken(true), 2);   // two uplinks of leaf 0
  EXPECT_EQ(uplinks_taken(false), 1);  // one, shared
}

// Without adaptive_traffic_classes (the default) adaptive routing replays every transfer.
TEST(TrafficClasses, AdaptiveRoutingSimulatesEveryTransferUnlessAsked) {
  const ReplayResult r = replay_step("adaptive", true, 8, 2, nullptr, false);
  EXPECT_EQ(r.transfers_simulated, r.transfers);
}

// ECMP hashes the flow id: routes computed once would not be the backend's, so every transfer is simulated.
TEST(TrafficClasses, HashedRoutingSimulatesEveryTransfer) {
  const ReplayResult r = replay_step("ecmp", true);
  EXPECT_EQ(r.transfers_simulated, r.transfers);
}

}  // namespace
}  // namespace clustersim
