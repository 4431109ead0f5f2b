// One simulated transfer per class of identical transfers (sim/replay/traffic_classes.hpp): the
// replay with classes must equal the exhaustive replay to the last bit, link by link, where it applies
// (the analytical backend, static d_mod_k routing, and adaptive routing, checked at every launch: where
// a check fails the replay starts over with every transfer); elsewhere every transfer is simulated
// (hashed ECMP).
#include "sim/replay/traffic_classes.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include <gtest/gtest.h>

#include "../transformer_fixture.hpp"
#include "expect_same_class_times.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/network/flow_backend.hpp"
#include "sim/network/network_backend.hpp"
#include "sim/network/network_profile.hpp"
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
  // Each member crosses the links of its own class only: max-min over the classes is exact here.
  EXPECT_TRUE(classes.members_cross_class_routes());
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

ExecutionGraph step_graph(const Cluster& cluster, int dp) {
  const WorkloadSpec spec = testing::small_tp2_pp2_workload("classes", dp, 32);
  return generate_transformer_training(spec, cluster.gpu_count());
}

ReplayResult replay_step(const std::string& routing, bool classes, int dp = 8, int tiers = 2,
                         std::shared_ptr<ReplayMemo> memo = nullptr, const char* fidelity = "analytical",
                         bool adaptive_classes = true) {
  const Cluster cluster = step_cluster(routing, dp, tiers);
  const ExecutionGraph graph = step_graph(cluster, dp);
  auto backend = find_network_backend(fidelity)->make(cluster, ideal_network_profile());
  const GpuSpec gpu = find_gpu("h100-sxm5-80gb", "test", "/gpu");
  ReplayOptions options;
  options.traffic_classes = classes;
  options.adaptive_traffic_classes = adaptive_classes;
  options.memo = std::move(memo);
  return replay(graph, cluster, gpu, *backend, options);
}

// The same replay, bit for bit: the step, every class's times, every collective's end, every link's bytes
// and busy time (and bytes per communicator), the transfers and the point-to-point bytes.
void expect_same_replay(const ReplayResult& exact, const ReplayResult& reduced) {
  EXPECT_EQ(exact.step_time_s, reduced.step_time_s);
  EXPECT_EQ(exact.critical_class, reduced.critical_class);
  ASSERT_NO_FATAL_FAILURE(testing::expect_same_class_times(
      exact, reduced, {&ClassTimes::finish_s, &ClassTimes::exposed_communication_s, &ClassTimes::communication_s}));
  ASSERT_EQ(exact.collectives.size(), reduced.collectives.size());
  for (std::size_t i = 0; i < exact.collectives.size(); ++i)
    EXPECT_EQ(exact.collectives[i].end_s, reduced.collectives[i].end_s) << i;
  double network_bytes = 0.0;
  for (double bytes : exact.link_bytes)
    network_bytes += bytes;
  EXPECT_GT(network_bytes, 0.0);
  EXPECT_EQ(exact.link_bytes, reduced.link_bytes);
  EXPECT_EQ(exact.link_busy_s, reduced.link_busy_s);
  EXPECT_EQ(exact.link_bytes_by_communicator, reduced.link_bytes_by_communicator);
  EXPECT_EQ(exact.transfers, reduced.transfers);
  EXPECT_EQ(exact.p2p_bytes, reduced.p2p_bytes);
}

// Under d_mod_k routing: every transfer simulated without classes, at most half with them, the same replay.
void expect_equal_replays(int dp, int tiers, std::shared_ptr<ReplayMemo> memo = nullptr) {
  SCOPED_TRACE("d_mod_k, dp " + std::to_string(dp) + ", " + std::to_string(tiers) + " tiers");
  const ReplayResult exact = replay_step("d_mod_k", false, dp, tiers);
  const ReplayResult reduced = replay_step("d_mod_k", true, dp, tiers, memo);
  EXPECT_EQ(exact.transfers_simulated, exact.transfers);
  EXPECT_LT(2 * reduced.transfers_simulated, reduced.transfers);  // at least halved
  expect_same_replay(exact, reduced);
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

// Max-min sharing with classes (sim/network/flow_backend.cpp): 4 nodes of 2 GPUs and one 400 Gb/s
// NIC (50 GB/s) under one leaf; GPU 0 -> 2 and 1 -> 3 share node 0's NIC uplink and node 1's NIC
// downlink, GPU 4 -> 6 and 5 -> 7 those of nodes 2 and 3. The 4 transfers are one class; its class
// route lists the canonical uplink and downlink twice (c = 2 transfers of the class on each), so the
// representative alone gets half a NIC: 1 GB at 25 GB/s = 0.04 s, the exhaustive max-min time, and
// the canonical uplink carries 2 GB.
TEST(TrafficClasses, FlowBackendChargesAClassRouteLinkOncePerTransferOfTheClass) {
  ClusterSpec spec = testing::fat_tree_spec(4, 2, 1, 400.0, 450.0, 1.0, 8);
  spec.fabric.routing = "d_mod_k";
  const double bytes = 1e9;
  const std::vector<Transfer> batch{{0, 2, bytes}, {1, 3, bytes}, {4, 6, bytes}, {5, 7, bytes}};
  const auto r = testing::in_child([&] {
    const Cluster cluster = Cluster::build(spec);
    TrafficClasses classes(cluster);
    if (!classes.add_batch(batch) || !classes.refine()) return std::vector<double>{};
    auto backend = make_flow_backend(cluster, ideal_network_profile());
    if (!backend->use_link_classes(nullptr) || !backend->use_link_classes(&classes.link_classes()))
      return std::vector<double>{};
    std::vector<Transfer> reps;
    for (const auto& [i, route] : classes.representatives(0)) {
      reps.push_back(batch[i]);
      reps.back().route_class = route;
    }
    double done_at = -1.0;
    backend->schedule(0.0, [&] { backend->start_transfers(reps, 0, [&] { done_at = backend->now_s(); }); });
    backend->run();
    std::vector<int> route;
    cluster.route(0, 2, 0, route);
    // The NIC uplink of node 0: the second link of GPU 0's route (GPU -> NIC, NIC -> leaf, ...).
    const auto uplink = static_cast<std::size_t>(classes.link_classes().canonical[static_cast<std::size_t>(route[1])]);
    return std::vector<double>{static_cast<double>(classes.transfer_classes()), static_cast<double>(reps.size()),
                               classes.members_cross_class_routes() ? 1.0 : 0.0, done_at,
                               backend->link_bytes()[uplink]};
  });
  ASSERT_EQ(r.size(), 5U);
  EXPECT_EQ(r[0], 1.0);
  EXPECT_EQ(r[1], 1.0);
  EXPECT_EQ(r[2], 1.0);
  EXPECT_NEAR(r[3], bytes / 25e9, 1e-12);
  EXPECT_EQ(r[4], 2 * bytes);
}

// The flow replay of the generated step with classes against the exhaustive one, both in child
// processes (SimGrid runs once per process): {step, transfers simulated, transfers, each class's
// finish, each collective's end, each link's bytes and busy time}.
std::vector<double> flow_summary(const ReplayResult& r) {
  std::vector<double> out{r.step_time_s, static_cast<double>(r.transfers_simulated), static_cast<double>(r.transfers)};
  for (const auto& c : r.classes)
    out.push_back(c.finish_s);
  for (const auto& c : r.collectives)
    out.push_back(c.end_s);
  out.insert(out.end(), r.link_bytes.begin(), r.link_bytes.end());
  out.insert(out.end(), r.link_busy_s.begin(), r.link_busy_s.end());
  return out;
}

std::vector<double> flow_replay(bool classes, int dp, int tiers) {
  return testing::in_child([&] { return flow_summary(replay_step("d_mod_k", classes, dp, tiers, nullptr, "flow")); });
}

// Two flow summaries are the same replay: every figure equal, bit for bit (the exhaustive one first).
void expect_same_flow_replay(const std::vector<double>& exact, const std::vector<double>& reduced) {
  ASSERT_EQ(exact.size(), reduced.size());
  ASSERT_GT(exact.size(), 3U);
  EXPECT_EQ(exact[1], exact[2]);  // every transfer simulated
  EXPECT_EQ(exact[2], reduced[2]);
  for (std::size_t i = 3; i < exact.size(); ++i)
    EXPECT_EQ(exact[i], reduced[i]) << i;
  EXPECT_EQ(exact[0], reduced[0]);
}

// Max-min shares lifted from the representatives are the exhaustive ones where every member of a
// class crosses every link class of its class route (checked by refine, which holds here); SimGrid
// sums a class's c charges on a link in one coefficient where the exhaustive system adds c terms, so
// times agree to rounding (1e-12 relative), bytes exactly.
TEST(TrafficClasses, FlowReplayWithClassesEqualsTheExhaustiveOne) {
  for (const auto& [dp, tiers] : {std::pair{8, 2}, std::pair{32, 3}}) {
    SCOPED_TRACE("dp " + std::to_string(dp) + ", " + std::to_string(tiers) + " tiers");
    const auto exact = flow_replay(false, dp, tiers);
    const auto reduced = flow_replay(true, dp, tiers);
    expect_same_flow_replay(exact, reduced);
    EXPECT_LT(2 * reduced.at(1), reduced.at(2));  // at least halved
  }
}

// Under adaptive routing the flow backend cannot start over in its process (SimGrid), so replay() with
// fresh backends runs each attempt in a child process on a backend of its own. `seeded`: the memo
// holds the classes and variants of an analytical replay of the step first, as simulate's clock
// replays leave them. In a child of the test (the exhaustive flow replay needs SimGrid to itself).
std::vector<double> adaptive_flow_replay(bool classes, int dp, int tiers, bool seeded) {
  return testing::in_child([&] {
    const Cluster cluster = step_cluster("adaptive", dp, tiers);
    const ExecutionGraph graph = step_graph(cluster, dp);
    const GpuSpec gpu = find_gpu("h100-sxm5-80gb", "test", "/gpu");
    ReplayOptions options;
    options.traffic_classes = classes;
    options.memo = make_replay_memo(&graph);
    if (seeded) {
      auto clock = find_network_backend("analytical")->make(cluster, ideal_network_profile());
      replay(graph, cluster, gpu, *clock, options);
    }
    const auto make = [&] { return make_flow_backend(cluster, ideal_network_profile()); };
    const auto backend = make();
    return flow_summary(replay(graph, cluster, gpu, *backend, make, options));
  });
}

TEST(TrafficClasses, FlowReplayUnderAdaptiveRoutingStartsOverInChildProcessesAndIsTheExhaustiveOne) {
  for (const auto& [dp, tiers] : {std::pair{8, 2}, std::pair{32, 3}}) {
    const auto exact = adaptive_flow_replay(false, dp, tiers, false);
    for (const bool seeded : {false, true}) {
      SCOPED_TRACE("dp " + std::to_string(dp) + ", " + std::to_string(tiers) + " tiers, seeded " +
                   std::to_string(seeded));
      const auto reduced = adaptive_flow_replay(true, dp, tiers, seeded);
      expect_same_flow_replay(exact, reduced);
      EXPECT_LT(2 * reduced.at(1), reduced.at(2));  // at least halved
    }
  }
}

// Adaptive routing picks links by the load when a transfer starts. The classes route each collective's
// groups, phase by phase, as the backend starts them (one launch: each transfer against the launch's
// earlier ones), and each start is checked against the load then in flight (AdaptiveChecks): where a
// choice could differ, the replay starts over with every transfer. So every time and every link's
// bytes and busy time are the exhaustive replay's, whether the classes were kept or not (session 16's
// unchecked classes moved 0.158 % and 0.348 % of these steps' link bytes to other links).
void expect_exhaustive_adaptive_replay(int dp, int tiers, std::shared_ptr<ReplayMemo> memo = nullptr) {
  SCOPED_TRACE("adaptive, dp " + std::to_string(dp) + ", " + std::to_string(tiers) + " tiers");
  expect_same_replay(replay_step("adaptive", false, dp, tiers), replay_step("adaptive", true, dp, tiers, memo));
}

TEST(TrafficClasses, ReplayWithClassesUnderAdaptiveRoutingIsTheExhaustiveOne) {
  expect_exhaustive_adaptive_replay(8, 2);
  expect_exhaustive_adaptive_replay(32, 3);
  // Replays sharing a memo (the clock solver's): once a check has failed, the next ones replay every
  // transfer from the start; each is the exhaustive replay.
  const auto memo = make_replay_memo();
  for (int k = 0; k < 3; ++k)
    expect_exhaustive_adaptive_replay(8, 2, memo);
}

// A hand-sized fabric: 16 single-GPU nodes on 2 tiers of radix 8 (4 leaves of 4 nodes, each leaf with
// 4 uplinks, 2 to each of the 2 spines). Ranks 4k (k = 0..3) send message A (`a_bytes`) to rank
// 4(k + 1) mod 16, on the next leaf, at time 0; ranks 4k + 1 first compute for `compute_s` (a measured
// duration), then send message B (1 MB) to rank 4(k + 1) mod 16 + `b_offset`. Each message is a launch
// of its own (4 transfers, one per leaf), so the classes route B on a fabric carrying nothing else;
// the replay checks B's start against the load then in flight.
ReplayResult replay_two_messages(bool classes, double a_bytes, double compute_s, int b_offset,
                                 const char* fidelity = "analytical") {
  ClusterSpec spec = testing::fat_tree_spec(16, 1, 1, 400.0, 450.0, 1.0, 8);
  spec.fabric.routing = "adaptive";
  const Cluster cluster = Cluster::build(spec);
  ExecutionGraph g(16);
  const auto a = g.add_communicator({"a", {{0, 4, 8, 12}}});
  std::vector<std::vector<int>> b_groups;
  for (int k = 0; k < 4; ++k)
    b_groups.push_back({4 * k + 1, (4 * (k + 1) + b_offset) % 16});
  const auto b = g.add_communicator({"b", b_groups});
  RankClass& senders_a = g.add_class("a", {0, 4, 8, 12});
  RankClass& senders_b = g.add_class("b", {1, 5, 9, 13});
  senders_a.ops.add_p2p(P2POp{"send a", OpKind::send, a, +1, 0, a_bytes, 1, false});
  senders_a.ops.add_p2p(P2POp{"recv a", OpKind::recv, a, -1, 0, a_bytes, 2, false});
  ComputeOp work = testing::gemm(64, 64, 64);
  work.duration_s = compute_s;
  const OpId computed = senders_b.ops.add_compute(work);
  senders_b.ops.add_p2p(P2POp{"send b", OpKind::send, b, +1, 0, 1e6, 1, false}, std::span(&computed, 1));
  // B's receivers: ranks 4k (b_offset 0), or ranks 4k + 2 (b_offset 2).
  RankClass& thirds = g.add_class("c", {2, 6, 10, 14});
  (b_offset == 0 ? senders_a : thirds).ops.add_p2p(P2POp{"recv b", OpKind::recv, b, -1, 0, 1e6, 3, false});
  if (b_offset != 2) thirds.ops.add_compute(work);
  g.add_class("others", {3, 7, 11, 15}).ops.add_compute(work);
  const auto make = [&] { return find_network_backend(fidelity)->make(cluster, ideal_network_profile()); };
  const auto backend = make();
  ReplayOptions options;
  options.traffic_classes = classes;
  return replay(g, cluster, find_gpu("h100-sxm5-80gb", "test", "/gpu"), *backend, make, options);
}

// The leaf -> spine links that carried bytes.
int uplinks_used(const ReplayResult& r) {
  ClusterSpec spec = testing::fat_tree_spec(16, 1, 1, 400.0, 450.0, 1.0, 8);
  const Cluster cluster = Cluster::build(spec);
  int used = 0;
  for (std::size_t l = 0; l < cluster.links().size(); ++l) {
    const Link& link = cluster.links()[l];
    used += cluster.devices()[static_cast<std::size_t>(link.src)].kind == DeviceKind::leaf_switch &&
            cluster.devices()[static_cast<std::size_t>(link.dst)].kind == DeviceKind::spine_switch &&
            r.link_bytes[l] > 0.0;
  }
  return used;
}

// The two messages' replay with classes is the exhaustive one (8 transfers, each simulated there).
void expect_same_two_message_replay(const ReplayResult& exact, const ReplayResult& checked) {
  expect_same_replay(exact, checked);
  EXPECT_EQ(exact.transfers, 8U);
  EXPECT_EQ(exact.transfers_simulated, 8U);
}

// A (1 GB at 50 GB/s: 20 ms) is in flight when B starts (1 ms): B goes to A's destination, whose digit
// names the uplink A took, so the exhaustive replay sees A there and takes the next uplink, where the
// classes' idle-fabric route took A's. The check fails at B's start (the uplink taken carries one more
// transfer than the others: D 1 against 0); the replay starts over with a variant of B's message routed
// against the load then in flight (A's), which its check then takes: the exhaustive replay's answer,
// with 2 representatives (A's, B's variant's).
TEST(TrafficClasses, AnAdaptiveChoiceThatTheLoadInFlightChangesTakesAVariantRoutedAgainstIt) {
  const ReplayResult exact = replay_two_messages(false, 1e9, 1e-3, 0);
  const ReplayResult checked = replay_two_messages(true, 1e9, 1e-3, 0);
  expect_same_two_message_replay(exact, checked);
  EXPECT_EQ(checked.transfers_simulated, 2U);
  EXPECT_GT(checked.step_time_s, 0.02);  // A's 20 ms
  EXPECT_EQ(uplinks_used(exact), 8);     // A and B on two uplinks of each leaf (on an idle fabric: one)
}

// The same at flow fidelity: the first attempt (a child process) forms the classes, B's check fails
// there and the child sends back B's variant; the second attempt (another child, a fresh SimGrid) takes
// it: 2 representatives, and every figure the exhaustive flow replay's (8 transfers).
TEST(TrafficClasses, AFlowReplayWhoseAdaptiveCheckFailsStartsOverInAnotherChildWithTheVariant) {
  const auto exact = testing::in_child([] { return flow_summary(replay_two_messages(false, 1e9, 1e-3, 0, "flow")); });
  const auto checked = testing::in_child([] { return flow_summary(replay_two_messages(true, 1e9, 1e-3, 0, "flow")); });
  expect_same_flow_replay(exact, checked);
  EXPECT_EQ(exact.at(2), 8.0);
  EXPECT_EQ(checked.at(1), 2.0);
  EXPECT_GT(checked.at(0), 0.02);  // A's 20 ms
}

// B starts once A has ended (A: 1 MB, 20 us; B after 1 ms): the fabric carries nothing else, the
// check holds (D 0 everywhere) and the classes are kept: 2 representatives (one per message, the 4
// transfers of each alike), and the answer is the exhaustive replay's.
TEST(TrafficClasses, AnAdaptiveLaunchOnAnIdleFabricKeepsItsClasses) {
  const ReplayResult exact = replay_two_messages(false, 1e6, 1e-3, 0);
  const ReplayResult checked = replay_two_messages(true, 1e6, 1e-3, 0);
  expect_same_two_message_replay(exact, checked);
  EXPECT_EQ(checked.transfers_simulated, 2U);
  EXPECT_EQ(uplinks_used(exact), 4);  // A and B on the same uplink of each leaf, one after the other
}

// A in flight (20 ms) when B starts (1 ms), but B goes to another GPU of A's destination leaf (4(k + 1)
// + 2): its digit names another uplink, which carries nothing; the uplink A took carries one transfer
// more than B's formation saw (D 1), B's own uplink none (D 0, the least): the exhaustive replay takes
// B's uplink too. The classes are kept and the answer is the exhaustive replay's.
TEST(TrafficClasses, AnAdaptiveLaunchBesideTrafficInFlightKeepsItsClasses) {
  const ReplayResult exact = replay_two_messages(false, 1e9, 1e-3, 2);
  const ReplayResult checked = replay_two_messages(true, 1e9, 1e-3, 2);
  expect_same_two_message_replay(exact, checked);
  EXPECT_EQ(checked.transfers_simulated, 2U);
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

// Variants of one message (GPU 0 -> GPU 4; 8 single-GPU nodes, radix 8: 4 uplinks per leaf) formed
// under three loads in flight. On an idle fabric it takes uplink u (the destination's digit). With u
// carrying 1 transfer it takes the next uplink u2; with u carrying 2, u2 again: the same route, so that
// variant shares the first one's transfer and classes (no transfer added) and keeps its own check (P 2
// on u). With u and u2 carrying 1 each it takes a third uplink: a transfer of its own.
TEST(TrafficClasses, AVariantWithTheRoutesOfAnEarlierOneSharesItsClassesAndKeepsItsCheck) {
  ClusterSpec spec = testing::fat_tree_spec(8, 1, 1, 400.0, 450.0, 1.0, 8);
  spec.fabric.routing = "adaptive";
  const Cluster cluster = Cluster::build(spec);
  const auto uplink_of = [&](std::span<const int> load) {
    std::vector<int> route;
    cluster.route(0, 4, 0, route, load);
    for (const int l : route) {
      const Link& link = cluster.links()[static_cast<std::size_t>(l)];
      if (cluster.devices()[static_cast<std::size_t>(link.src)].kind == DeviceKind::leaf_switch &&
          cluster.devices()[static_cast<std::size_t>(link.dst)].kind == DeviceKind::spine_switch)
        return l;
    }
    return -1;
  };
  std::vector<int> load(cluster.links().size(), 0);
  const int u = uplink_of(load);
  load[static_cast<std::size_t>(u)] = 1;
  const int u2 = uplink_of(load);
  load[static_cast<std::size_t>(u2)] = 1;
  const int u3 = uplink_of(load);
  ASSERT_GE(u, 0);
  ASSERT_NE(u2, u);
  ASSERT_NE(u3, u);
  ASSERT_NE(u3, u2);
  const std::vector<Transfer> message{{0, 4, 1.0}};
  const std::vector<std::pair<int, int>> one{{u, 1}}, two{{u, 2}}, both{{std::min(u, u2), 1}, {std::max(u, u2), 1}};
  const std::vector<std::uint32_t> earlier_1{1}, earlier_2{1, 2};
  TrafficClasses classes(cluster, true);
  ASSERT_TRUE(classes.add_batch(message));                         // batch 0: u
  ASSERT_TRUE(classes.add_batch(message, false, one, {}));         // batch 1: u2
  ASSERT_TRUE(classes.add_batch(message, false, two, earlier_1));  // batch 2: u2, shares batch 1's
  EXPECT_EQ(classes.transfers(), 2U);
  ASSERT_TRUE(classes.add_batch(message, false, both, earlier_2));  // batch 3: u3, its own
  EXPECT_EQ(classes.transfers(), 3U);
  ASSERT_TRUE(classes.refine());
  EXPECT_EQ(classes.transfer_classes(), 3U);  // one per route: u, u2, u3
  EXPECT_EQ(classes.representatives(2), classes.representatives(1));
  EXPECT_NE(classes.representatives(3), classes.representatives(1));
  // The checks, on canonical links (each uplink taken is a class of its own: its canonical link).
  const AdaptiveChecks& checks = classes.adaptive_checks();
  std::vector<int> in_flight(cluster.links().size(), 0);
  const auto with_u = [&](int count) {
    in_flight[static_cast<std::size_t>(u)] = count;
    return std::span<const int>(in_flight);
  };
  EXPECT_TRUE(checks.hold(0, with_u(0)));   // D 0 everywhere
  EXPECT_FALSE(checks.hold(0, with_u(1)));  // D 1 on u, the link taken; 0 on the others
  EXPECT_TRUE(checks.hold(1, with_u(1)));   // its own P: 1 on u
  EXPECT_FALSE(checks.hold(1, with_u(0)));  // D -1 on u, below D 0 on u2, the link taken
  EXPECT_TRUE(checks.hold(2, with_u(2)));   // its own P: 2 on u, not batch 1's
  EXPECT_FALSE(checks.hold(2, with_u(1)));  // D -1 on u
  EXPECT_TRUE(checks.hold(2, with_u(3)));   // D 1 on u, above D 0 on u2
}

// The same fabric: ranks 4k send message A (1 GB, 20 ms) to ranks 4(k + 1) + 1 at time 0; ranks 4k + 1
// receive it, compute for 1 ms and then run a ring all-reduce of 1 MB over {1, 5, 9, 13}, whose
// transfers 4k + 1 -> 4(k + 1) + 1 go to A's destinations: at its start the uplinks A took carry A,
// the check fails, and a collective's phase has no variant (its groups start as one launch): the
// replay starts over with every transfer. The exhaustive replay's answer, every transfer simulated.
TEST(TrafficClasses, ACollectiveWhoseAdaptiveChoiceTheLoadChangesReplaysEveryTransfer) {
  ClusterSpec spec = testing::fat_tree_spec(16, 1, 1, 400.0, 450.0, 1.0, 8);
  spec.fabric.routing = "adaptive";
  const Cluster cluster = Cluster::build(spec);
  const auto run = [&](bool classes, double a_bytes) {
    ExecutionGraph g(16);
    const auto a = g.add_communicator({"a", {{0, 5}, {4, 9}, {8, 13}, {12, 1}}});
    const auto dp = g.add_communicator({"dp", {{1, 5, 9, 13}}});
    RankClass& senders = g.add_class("a", {0, 4, 8, 12});
    RankClass& ring = g.add_class("ring", {1, 5, 9, 13});
    senders.ops.add_p2p(P2POp{"send a", OpKind::send, a, +1, 0, a_bytes, 1, false});
    ring.ops.add_p2p(P2POp{"recv a", OpKind::recv, a, -1, 0, a_bytes, 2, false});
    ComputeOp work = testing::gemm(64, 64, 64);
    work.duration_s = 1e-3;
    const OpId computed = ring.ops.add_compute(work);
    ring.ops.add_collective({"ar", CollectiveKind::all_reduce, dp, 1e6, 1}, std::span(&computed, 1));
    g.add_class("c", {2, 6, 10, 14}).ops.add_compute(work);
    g.add_class("d", {3, 7, 11, 15}).ops.add_compute(work);
    auto backend = find_network_backend("analytical")->make(cluster, ideal_network_profile());
    ReplayOptions options;
    options.traffic_classes = classes;
    options.collective_algorithm = "ring";
    return replay(g, cluster, find_gpu("h100-sxm5-80gb", "test", "/gpu"), *backend, options);
  };
  const ReplayResult exact = run(false, 1e9);
  const ReplayResult checked = run(true, 1e9);
  EXPECT_EQ(exact.step_time_s, checked.step_time_s);
  EXPECT_GT(exact.step_time_s, 0.02);  // A's 20 ms
  EXPECT_EQ(exact.link_bytes, checked.link_bytes);
  EXPECT_EQ(exact.link_busy_s, checked.link_busy_s);
  ASSERT_EQ(exact.collectives.size(), 1U);
  EXPECT_EQ(exact.collectives[0].end_s, checked.collectives[0].end_s);
  EXPECT_EQ(checked.transfers_simulated, checked.transfers);
  EXPECT_GT(checked.transfers, 4U);
  // With A of 1 MB (20 us, ended by 1 ms) the ring starts on an idle fabric and the classes are kept.
  const ReplayResult idle = run(true, 1e6);
  EXPECT_EQ(idle.step_time_s, run(false, 1e6).step_time_s);
  EXPECT_LT(2 * idle.transfers_simulated, idle.transfers);
}

// Without adaptive_traffic_classes (the opt-out; the default is on) adaptive routing replays every transfer.
TEST(TrafficClasses, AdaptiveRoutingSimulatesEveryTransferWhenTheClassesAreOff) {
  const ReplayResult r = replay_step("adaptive", true, 8, 2, nullptr, "analytical", false);
  EXPECT_EQ(r.transfers_simulated, r.transfers);
}

// ECMP hashes the flow id: routes computed once would not be the backend's, so every transfer is simulated.
TEST(TrafficClasses, HashedRoutingSimulatesEveryTransfer) {
  const ReplayResult r = replay_step("ecmp", true);
  EXPECT_EQ(r.transfers_simulated, r.transfers);
}

}  // namespace
}  // namespace clustersim
