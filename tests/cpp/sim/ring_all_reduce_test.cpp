// The ring all-reduce on an idle fabric, simulated on SimGrid, against its closed form
//     t = 2(N-1)/N * S/B + 2(N-1) * a
// where B is the bandwidth of the slowest hop and a its route latency.
#include <gtest/gtest.h>

#include "sim/collectives/collective_algorithm.hpp"
#include "sim/core/error.hpp"
#include "sim/hardware/gpu_spec.hpp"
#include "sim/network/flow_backend.hpp"
#include "sim/replay/replay_engine.hpp"
#include "sim_test_support.hpp"

namespace clustersim {
namespace {

// One all-reduce of `bytes` over every GPU of the cluster, replayed; returns {step time, transfers}.
std::vector<double> simulate_all_reduce(const ClusterSpec& spec, double bytes, CollectiveKind kind) {
  return testing::in_child([&] {
    const Cluster cluster = Cluster::build(spec);
    ExecutionGraph graph(cluster.gpu_count());
    std::vector<int> all(static_cast<std::size_t>(cluster.gpu_count()));
    for (int r = 0; r < cluster.gpu_count(); ++r)
      all[static_cast<std::size_t>(r)] = r;
    const auto comm = graph.add_communicator({"dp", {all}});
    RankClass& rc = graph.add_class("all ranks", all);
    rc.ops.add_collective({"grad all-reduce", kind, comm, bytes, 1});
    auto backend = make_flow_backend(cluster, ideal_network_profile());
    ReplayOptions options;
    options.collective_algorithm = "ring";
    const ReplayResult r = replay(graph, cluster, GpuSpec{}, *backend, options);
    return std::vector<double>{r.step_time_s, static_cast<double>(r.transfers)};
  });
}

struct RingCase {
  int nodes;
  int gpus_per_node;
  double bandwidth_Bps;  // slowest hop
  double hop_latency_s;  // its route latency
};

void expect_closed_form(const RingCase& c, double bytes) {
  const ClusterSpec spec = testing::fat_tree_spec(c.nodes, c.gpus_per_node, c.gpus_per_node);
  const double n = c.nodes * c.gpus_per_node;
  const double expected = 2 * (n - 1) / n * bytes / c.bandwidth_Bps + 2 * (n - 1) * c.hop_latency_s;
  const auto r = simulate_all_reduce(spec, bytes, CollectiveKind::all_reduce);
  EXPECT_NEAR(r[0], expected, 0.005 * expected) << "N = " << n;
}

// One GPU per node, one 400 Gb/s NIC each: the NIC (50 GB/s) is the slowest hop (PCIe is 64 GB/s).
// Two nodes share a leaf: route NIC -> leaf -> NIC = 2 fabric links of 0.6 us.
TEST(RingAllReduce, TwoRanksMatchClosedForm) {
  expect_closed_form({2, 1, 50e9, 1.2e-6}, 256e6);
}

TEST(RingAllReduce, EightRanksMatchClosedForm) {
  expect_closed_form({8, 1, 50e9, 1.2e-6}, 256e6);
}

// 64 nodes on radix-64 leaves with 32 down-ports: two leaves, so the slowest hop crosses a spine
// (NIC -> leaf -> spine -> leaf -> NIC = 4 links of 0.6 us).
TEST(RingAllReduce, SixtyFourRanksMatchClosedForm) {
  expect_closed_form({64, 1, 50e9, 2.4e-6}, 256e6);
}

// Inside one NVSwitch node: B = 450 GB/s per GPU per direction, a = 0.7 us GPU to GPU.
TEST(RingAllReduce, EightGpusOnNvSwitchMatchClosedForm) {
  expect_closed_form({1, 8, 450e9, 0.7e-6}, 1e9);
}

// Small messages are latency bound: 2(N-1) steps of a dominate.
TEST(RingAllReduce, SmallMessagesAreLatencyBound) {
  expect_closed_form({8, 1, 50e9, 1.2e-6}, 8e3);
}

// All-gather is half an all-reduce: (N-1)/N * S/B + (N-1) * a.
TEST(RingAllReduce, AllGatherIsHalfTheRing) {
  const ClusterSpec spec = testing::fat_tree_spec(8, 1, 1);
  const double n = 8, bytes = 256e6;
  const double expected = (n - 1) / n * bytes / 50e9 + (n - 1) * 1.2e-6;
  EXPECT_NEAR(simulate_all_reduce(spec, bytes, CollectiveKind::all_gather)[0], expected, 0.005 * expected);
}

// Across DGX-style nodes NCCL runs one ring per NIC (channels), each on its own rail, so the node's
// 8 NICs together carry the inter-node traffic. Per byte of the ring volume D = 2(N-1)/N * S, each
// NIC carries D/8 at 50 GB/s while each NVLink port carries D at 450 GB/s; the NICs are the
// bottleneck (1/400 > 1/450), so
//     t = D / (8 x 50 GB/s) + 2(N-1) a.
// 4 nodes x 8 NICs = 32 NICs fit one radix-64 leaf (32 down-ports): the inter-node route is
// NIC -> leaf -> NIC, 2 links of 0.6 us, slower than the 0.7 us NVSwitch hop.
TEST(RingAllReduce, ChannelsSpreadInterNodeTrafficOverAllNics) {
  const ClusterSpec spec = testing::fat_tree_spec(4, 8, 8);
  const double n = 32, bytes = 1e9;
  const double expected = 2 * (n - 1) / n * bytes / (8 * 50e9) + 2 * (n - 1) * 1.2e-6;
  const auto r = simulate_all_reduce(spec, bytes, CollectiveKind::all_reduce);
  EXPECT_NEAR(r[0], expected, 0.005 * expected);
  // Merged per (src, dst) pair: one intra-node and one inter-node flow per GPU, not 8 x 32 hops.
  EXPECT_EQ(r[1], 2 * n);
}

// Bytes are conserved, and every hop carries what the ring says. With D = 2(N-1)/N * S and C = 8
// rail-aligned channels, each GPU port sends D over NVLink (every channel goes once around the node,
// D/C each) and the rail GPU of each channel forwards D/C to the next node (PXN), so every rank sends
// and receives D + D/C: 31/16 S + 31/128 S for N = 32.
TEST(RingAllReduce, EveryRankSendsAndReceivesTheRingVolume) {
  const ClusterSpec spec = testing::fat_tree_spec(4, 8, 8);
  const Cluster cluster = Cluster::build(spec);
  std::vector<int> ranks(32);
  for (int r = 0; r < 32; ++r)
    ranks[static_cast<std::size_t>(r)] = r;
  const double bytes = 1e9;
  const NetworkProfile ideal = ideal_network_profile();
  const CollectivePlan plan = plan_collective("ring", {cluster, ideal}, {CollectiveKind::all_reduce, &ranks, bytes});
  EXPECT_EQ(plan.channels, 8);
  const double d = 2.0 * 31 / 32 * bytes;
  std::vector<double> sent(32, 0.0), received(32, 0.0);
  double total_sent = 0, total_received = 0;
  for (const auto& t : plan.phases.at(0).transfers) {
    const bool same_node = cluster.node_of_gpu(t.src_gpu) == cluster.node_of_gpu(t.dst_gpu);
    // Intra-node pairs carry D (all channels); inter-node pairs are rail-aligned and carry D/C.
    EXPECT_NEAR(t.bytes, same_node ? d : d / 8, 1e-6 * bytes);
    if (!same_node) {
      EXPECT_EQ(t.src_gpu % 8, t.dst_gpu % 8) << "inter-node hop leaves its rail";
    }
    sent[static_cast<std::size_t>(t.src_gpu)] += t.bytes;
    received[static_cast<std::size_t>(t.dst_gpu)] += t.bytes;
    total_sent += t.bytes;
    total_received += t.bytes;
  }
  EXPECT_DOUBLE_EQ(total_sent, total_received);
  for (int r = 0; r < 32; ++r) {
    EXPECT_NEAR(sent[static_cast<std::size_t>(r)], d + d / 8, 1e-6 * bytes);
    EXPECT_NEAR(received[static_cast<std::size_t>(r)], d + d / 8, 1e-6 * bytes);
  }
}

TEST(RingAllReduce, AnAlgorithmThatCannotRunTheRequestIsAnError) {
  const Cluster cluster = Cluster::build(testing::fat_tree_spec(1, 8, 8));
  const NetworkProfile ideal = ideal_network_profile();
  std::vector<int> ranks{0, 1, 2, 3};
  EXPECT_THROW(plan_collective("ring", {cluster, ideal}, {CollectiveKind::all_to_all, &ranks, 1e6}), SimulationError);
  EXPECT_THROW(plan_collective("no-such-algorithm", {cluster, ideal}, {CollectiveKind::all_reduce, &ranks, 1e6}),
               SimulationError);
}

}  // namespace
}  // namespace clustersim
