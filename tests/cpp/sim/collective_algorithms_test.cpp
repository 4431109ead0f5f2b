// Every collective algorithm on an idle fabric against its closed form, conservation of bytes,
// contention, and the two backends agreeing.
//
// Fabrics used: `star(n)` = n single-GPU nodes, one 400 Gb/s NIC each (B = 50 GB/s, slower than the
// 64 GB/s PCIe hop), all under one leaf: every hop is NIC -> leaf -> NIC, a = 2 x 0.6 us = 1.2 us.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <gtest/gtest.h>

#include "sim/collectives/collective_algorithm.hpp"
#include "sim/collectives/hierarchical_algorithm.hpp"
#include "sim/core/error.hpp"
#include "sim_test_support.hpp"

namespace clustersim {
namespace {

using testing::CollectiveRun;
using testing::iota_ranks;
using testing::run_collective;

constexpr double kB = 50e9;    // NIC bandwidth
constexpr double kA = 1.2e-6;  // NIC -> leaf -> NIC latency
constexpr double kS = 256e6;   // message size

ClusterSpec star(int n) {
  return testing::fat_tree_spec(n, 1, 1);
}

double time_of(const ClusterSpec& spec, CollectiveRun run) {
  return run_collective(spec, run)[0];
}

// Double binary tree over m = 7 = 2^3 - 1 units: the busiest port sends and receives 2S (interior in
// one tree: 2 children + parent = 1.5S, a leaf in the other: 0.5S), height h = 2 edges:
//     t = 2S/B + 2h a.
TEST(CollectiveAlgorithms, DoubleBinaryTreeMatchesClosedForm) {
  const double expected = 2 * kS / kB + 2 * 2 * kA;
  const double t = time_of(star(7), {{iota_ranks(7)}, CollectiveKind::all_reduce, kS, "tree"});
  EXPECT_NEAR(t, expected, 0.005 * expected);
}

// Recursive halving-doubling over 8 ranks: 2 (N-1)/N S/B + 2 log2(N) a.
TEST(CollectiveAlgorithms, HalvingDoublingMatchesClosedForm) {
  const double expected = 2.0 * 7 / 8 * kS / kB + 2 * 3 * kA;
  const double t = time_of(star(8), {{iota_ranks(8)}, CollectiveKind::all_reduce, kS, "halving_doubling"});
  EXPECT_NEAR(t, expected, 0.005 * expected);
}

TEST(CollectiveAlgorithms, HalvingDoublingReduceScatterIsHalf) {
  const double expected = 7.0 / 8 * kS / kB + 3 * kA;
  const double t = time_of(star(8), {{iota_ranks(8)}, CollectiveKind::reduce_scatter, kS, "halving_doubling"});
  EXPECT_NEAR(t, expected, 0.005 * expected);
}

// An algorithm the group cannot run is a bad option (exit status 2), named with the communicator.
TEST(CollectiveAlgorithms, HalvingDoublingRefusesNonPowerOfTwo) {
  try {
    time_of(star(6), {{iota_ranks(6)}, CollectiveKind::all_reduce, kS, "halving_doubling"});
    FAIL() << "expected an error";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.file(), "--algorithm");
    EXPECT_NE(e.message().find("communicator 'c' (6 ranks)"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("power-of-two"), std::string::npos) << e.what();
  }
  // The planner alone, outside a replay, reports the same refusal as a failed simulation.
  const Cluster cluster = Cluster::build(star(6));
  const auto ranks = iota_ranks(6);
  EXPECT_THROW(
      plan_collective("halving_doubling", {cluster, ideal_network_profile()}, {CollectiveKind::all_reduce, &ranks, kS}),
      SimulationError);
}

// Direct all-to-all over 8 ranks, S per rank split evenly: (N-1)/N S/B + a.
TEST(CollectiveAlgorithms, DirectAllToAllMatchesClosedForm) {
  const double expected = 7.0 / 8 * kS / kB + kA;
  const double t = time_of(star(8), {{iota_ranks(8)}, CollectiveKind::all_to_all, kS, "direct"});
  EXPECT_NEAR(t, expected, 0.005 * expected);
}

// Pipelined ring broadcast: every hop carries S once: S/B + (N-1) a.
TEST(CollectiveAlgorithms, RingBroadcastMatchesClosedForm) {
  const double expected = kS / kB + 7 * kA;
  const double t = time_of(star(8), {{iota_ranks(8)}, CollectiveKind::broadcast, kS, "ring"});
  EXPECT_NEAR(t, expected, 0.005 * expected);
}

// Hierarchical all-reduce on 4 DGX-style nodes (8 GPUs, NVSwitch 450 GB/s at 0.7 us, 8 NICs under
// one leaf): reduce-scatter inside nodes 7/8 S/450e9 + 7 x 0.7us, rings of 4 nodes per rail on S/8:
// 2 x 3/4 x S/8/50e9 + 6 x 1.2us, all-gather inside nodes like the reduce-scatter.
TEST(CollectiveAlgorithms, HierarchicalMatchesClosedForm) {
  const double s = 1e9;
  const double intra = 7.0 / 8 * s / 450e9 + 7 * 0.7e-6;
  const double inter = 2.0 * 3 / 4 * (s / 8) / 50e9 + 6 * 1.2e-6;
  const double expected = 2 * intra + inter;
  const double t =
      time_of(testing::fat_tree_spec(4, 8, 8), {{iota_ranks(32)}, CollectiveKind::all_reduce, s, "hierarchical"});
  EXPECT_NEAR(t, expected, 0.005 * expected);
}

ClusterSpec nvls_node() {
  ClusterSpec spec = testing::fat_tree_spec(1, 8, 8);
  spec.node.scale_up.generation = "nvlink4";
  return spec;
}

// NVLS: the switch reduces; each GPU port moves S each way: t = S/B + a, and every GPU uplink carries
// S bytes where the ring puts 2(N-1)/N S = 1.75 S on it.
TEST(CollectiveAlgorithms, NvlsMovesHalfTheDataOfTheRing) {
  const double s = 1e9;
  const ClusterSpec spec = nvls_node();
  const auto nvls = run_collective(spec, {{iota_ranks(8)}, CollectiveKind::all_reduce, s, "nvls"});
  const auto ring = run_collective(spec, {{iota_ranks(8)}, CollectiveKind::all_reduce, s, "ring"});
  EXPECT_NEAR(nvls[0], s / 450e9 + 0.7e-6, 0.005 * nvls[0]);
  const Cluster cluster = Cluster::build(spec);
  for (int g = 0; g < 8; ++g) {
    const int uplink = cluster.out_links(g)[0];  // GPU -> NVSwitch
    ASSERT_EQ(cluster.links()[static_cast<std::size_t>(uplink)].technology, LinkTechnology::nvlink);
    EXPECT_DOUBLE_EQ(nvls[static_cast<std::size_t>(uplink) + 1], s);
    EXPECT_DOUBLE_EQ(ring[static_cast<std::size_t>(uplink) + 1], 2.0 * 7 / 8 * s);
  }
}

// NVLS all-gather and reduce-scatter (NCCL 2.19+, one node): an all-gather multicasts each GPU's S/N
// shard through the switch, so every GPU port receives S (all N shards) where the ring delivers
// (N-1)/N S; a reduce-scatter is its mirror (S up per port). On the ideal profile (NVLS at the 450 GB/s
// line rate, a = 0.7 us): t = S/B + a, a bus bandwidth of (N-1)/N B = 393.75 GB/s against the ring's
// B = 450 GB/s: the factor vs the ring is (N-1)/N = 7/8 at large sizes.
TEST(CollectiveAlgorithms, NvlsAllGatherAndReduceScatterReceiveEveryShardOnce) {
  const double s = 1e9;
  const ClusterSpec spec = nvls_node();
  const Cluster cluster = Cluster::build(spec);
  for (CollectiveKind kind : {CollectiveKind::all_gather, CollectiveKind::reduce_scatter}) {
    const auto nvls = run_collective(spec, {{iota_ranks(8)}, kind, s, "nvls"});
    const auto ring = run_collective(spec, {{iota_ranks(8)}, kind, s, "ring"});
    EXPECT_NEAR(nvls[0], s / 450e9 + 0.7e-6, 0.005 * nvls[0]) << to_string(kind);
    // The ring: (N-1)/N S per port at the line rate (plus 7 steps of latency, < 0.3 % of it here); the
    // bus bandwidth of NVLS over the ring's is then 7/8.
    EXPECT_NEAR(ring[0], 7.0 / 8 * s / 450e9, 0.005 * ring[0]) << to_string(kind);
    EXPECT_NEAR(ring[0] / nvls[0], 7.0 / 8, 0.01) << to_string(kind);
    for (std::size_t l = 0; l < cluster.links().size(); ++l) {
      const Link& link = cluster.links()[l];
      if (link.dst >= 8 || link.technology != LinkTechnology::nvlink) continue;  // NVSwitch -> GPU only
      EXPECT_DOUBLE_EQ(nvls[l + 1], s) << to_string(kind) << " link " << l;
      EXPECT_DOUBLE_EQ(ring[l + 1], 7.0 / 8 * s) << to_string(kind) << " link " << l;
    }
  }
  // Across nodes NCCL runs NVLS all-gather / reduce-scatter only with CollNet: refused, saying so.
  ClusterSpec two = testing::fat_tree_spec(2, 8, 8);
  two.node.scale_up.generation = "nvlink4";
  const Cluster pair = Cluster::build(two);
  const NetworkProfile ideal = ideal_network_profile();
  const auto sixteen = iota_ranks(16);
  EXPECT_NE(collective_infeasible("nvls", {pair, ideal}, {CollectiveKind::all_gather, &sixteen, s}).find("CollNet"),
            std::string::npos);
  const auto eight = iota_ranks(8);
  EXPECT_NE(collective_infeasible("nvls", {cluster, ideal}, {CollectiveKind::all_to_all, &eight, s}), "");
}

// NCCL's tuner rates NVLS all-gather / reduce-scatter at (N-1)^2 / (N (N+1)) of the ring's algorithm
// bandwidth (tuning.cc: nChannels x bwIntra x (ppn-1)/ppn against the ring's x N/(N-1); the NVLS graph's
// N channels of B/(N+1) each, search.cc): 8 GPUs 49/72, 4 GPUs 9/20, 2 GPUs 1/6. On the ideal profile
// (no NCCL latencies) NVLS pays one 0.7 us hop, the ring 7: with x the ring's bandwidth part, NVLS is
// rated 0.7 us + x 72/49 against 4.9 us + x, so it wins below x = 4.2 us / (72/49 - 1) = 8.95 us, i.e.
// S = 8.95 us x 450 GB/s x 8/7 = 4.6 MB, and the ring above (NCCL's own latencies, 25 us for NVLS, keep
// the ring at every size: see below).
TEST(CollectiveAlgorithms, NcclRatesNvlsAllGatherBelowTheRing) {
  EXPECT_DOUBLE_EQ(nvls_tuner_rating(CollectiveKind::all_gather, 8), 49.0 / 72);
  EXPECT_DOUBLE_EQ(nvls_tuner_rating(CollectiveKind::reduce_scatter, 4), 9.0 / 20);
  EXPECT_DOUBLE_EQ(nvls_tuner_rating(CollectiveKind::all_gather, 2), 1.0 / 6);
  EXPECT_EQ(nvls_tuner_rating(CollectiveKind::all_reduce, 8), 0.0);
  const NetworkProfile ideal = ideal_network_profile();
  const Cluster node = Cluster::build(nvls_node());
  const auto eight = iota_ranks(8);
  for (double bytes : {1e6, 4e6, 5.5e6, 64e6, 1e9}) {
    const char* expected = bytes < 4.6e6 ? "nvls" : "ring";
    EXPECT_EQ(select_collective_algorithm({node, ideal}, {CollectiveKind::all_gather, &eight, bytes}), expected)
        << bytes;
    EXPECT_EQ(select_collective_algorithm({node, ideal}, {CollectiveKind::reduce_scatter, &eight, bytes}), expected)
        << bytes;
  }
  // The shipped H100 profile (NCCL's latencies: NVLS's fitted 26 us against the ring's fitted ~0): the ring
  // at every size, as NCCL 2.27's tuner picks on a DGX H100 node.
  const NetworkProfile h100 = load_network_profile("nccl-h100");
  for (double bytes : {1e3, 1e6, 64e6, 1e9})
    EXPECT_EQ(select_collective_algorithm({node, h100}, {CollectiveKind::all_gather, &eight, bytes}), "ring") << bytes;
  // The all-reduce still goes to NVLS (it halves the bytes per port).
  EXPECT_EQ(select_collective_algorithm({node, ideal}, {CollectiveKind::all_reduce, &eight, 1e9}), "nvls");
  // The rating, not the plan, decides: with NVLS at twice the line rate its plan beats the ring's, yet
  // auto keeps the ring (rated at 49/72 of it).
  NetworkProfile fast = ideal;
  fast.nvls_efficiency.value = 2.0;
  const CollectiveContext ctx{node, fast};
  const CollectiveRequest req{CollectiveKind::all_gather, &eight, 1e9};
  EXPECT_LT(idle_fabric_time_s(ctx, plan_collective("nvls", ctx, req)),
            idle_fabric_time_s(ctx, plan_collective("ring", ctx, req)));
  EXPECT_EQ(select_collective_algorithm(ctx, req), "ring");
}

// The profile's NVLS latency is paid by each in-switch phase: once by a node's NVLS all-reduce (one
// pass), twice by SHARP (NVLS reduce-scatter and all-gather inside the nodes).
TEST(CollectiveAlgorithms, NvlsPaysItsLatencyPerInSwitchPhase) {
  const double s = 1e9;
  CollectiveRun run{{iota_ranks(8)}, CollectiveKind::all_reduce, s, "nvls"};
  const double plain = time_of(nvls_node(), run);
  run.profile.nvls_latency_s.value = 20e-6;
  EXPECT_NEAR(time_of(nvls_node(), run) - plain, 20e-6, 1e-9);
  ClusterSpec two = testing::fat_tree_spec(2, 8, 8);
  two.fabric.sharp = true;
  two.node.scale_up.generation = "nvlink4";
  CollectiveRun sharp{{iota_ranks(16)}, CollectiveKind::all_reduce, s, "sharp"};
  const double sharp_plain = time_of(two, sharp);
  sharp.profile.nvls_latency_s.value = 20e-6;
  EXPECT_NEAR(time_of(two, sharp) - sharp_plain, 2 * 20e-6, 1e-9);
  // The shipped H100 profile fits it with the NVLS efficiency to the H200 NVLS table.
  const NetworkProfile h100 = load_network_profile("nccl-h100");
  EXPECT_EQ(h100.nvls_latency_s.source, "fit to h200-nvls");
  EXPECT_GT(h100.nvls_latency_s.value, 5e-6);
  EXPECT_LT(h100.nvls_latency_s.value, 60e-6);
}

// SHARP: across 8 DGX-style nodes the inter-node phase sends each GPU's S/8 shard into the switches
// once and receives the reduced shard once: S/8 per NIC per direction, where the hierarchical ring
// per rail puts 2(M-1)/M x S/8 = 1.75 x S/8 on it. With NVLS inside the nodes.
TEST(CollectiveAlgorithms, SharpMovesHalfTheInterNodeDataOfTheRing) {
  const double s = 1e9;
  ClusterSpec spec = testing::fat_tree_spec(8, 8, 8);
  spec.fabric.sharp = true;
  spec.node.scale_up.generation = "nvlink4";
  const auto sharp = run_collective(spec, {{iota_ranks(64)}, CollectiveKind::all_reduce, s, "sharp"});
  const auto hier = run_collective(spec, {{iota_ranks(64)}, CollectiveKind::all_reduce, s, "hierarchical"});
  const Cluster cluster = Cluster::build(spec);
  int nic_uplinks = 0;
  for (std::size_t l = 0; l < cluster.links().size(); ++l) {
    const Link& link = cluster.links()[l];
    if (cluster.devices()[static_cast<std::size_t>(link.src)].kind != DeviceKind::nic ||
        link.technology != LinkTechnology::infiniband)
      continue;
    ++nic_uplinks;
    EXPECT_DOUBLE_EQ(sharp[l + 1], s / 8);
    EXPECT_DOUBLE_EQ(hier[l + 1], 2.0 * 7 / 8 * s / 8);
  }
  EXPECT_EQ(nic_uplinks, 64);
  EXPECT_LT(sharp[0], hier[0]);
}

// NCCL's NVLS + SHARP pipelines its stages chunk by chunk: the NVLS reduce-scatter and all-gather
// (together a node's NVLS all-reduce on the GPU ports: S/B_nvlink) and the in-network all-reduce of
// each S/G shard (S/G / B_nic) run at once, t = max of the two + the stages' latencies. 8 nodes of 8
// GPUs: the NIC (S/8 at 50 GB/s = 2.5 ms) bounds it at 400 Gb/s, NVLink (S at 450 GB/s = 2.2 ms) at
// 800 Gb/s; one stage after the other would take 1.75 S/450 GB/s + 2.5 ms = 6.4 ms.
TEST(CollectiveAlgorithms, SharpPipelinesItsStages) {
  const double s = 1e9;
  for (const double nic_Gbps : {400.0, 800.0}) {
    ClusterSpec spec = testing::fat_tree_spec(8, 8, 8, nic_Gbps);
    spec.fabric.sharp = true;
    spec.node.scale_up.generation = "nvlink4";
    const double t = time_of(spec, {{iota_ranks(64)}, CollectiveKind::all_reduce, s, "sharp"});
    const double bound = std::max(s / 450e9, s / 8 / (nic_Gbps / 8 * 1e9));
    EXPECT_GT(t, bound) << nic_Gbps;
    EXPECT_NEAR(t, bound, 0.005 * bound) << nic_Gbps;
    EXPECT_LT(t, 0.5 * (1.75 * s / 450e9 + s / 8 / 50e9));
  }
}

TEST(CollectiveAlgorithms, SharpNeedsSwitchesThatReduce) {
  try {
    time_of(testing::fat_tree_spec(2, 8, 8), {{iota_ranks(16)}, CollectiveKind::all_reduce, kS, "sharp"});
    FAIL() << "expected an error";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("SHARP"), std::string::npos) << e.what();
  }
}

TEST(CollectiveAlgorithms, NvlsNeedsAnNvSwitchGenerationThatReduces) {
  EXPECT_THROW(time_of(testing::fat_tree_spec(1, 8, 8), {{iota_ranks(8)}, CollectiveKind::all_reduce, kS, "nvls"}),
               SpecError);
}

// Issue 17: an H100 SXM node whose spec says only {"type": "nvswitch", "bandwidth_GBps": 450} gets what
// its hardware has, NVLink 4 with NVLS: the same answer as the spec that names the generation.
TEST(CollectiveAlgorithms, AnH100SpecWithoutGenerationRunsNvlsAsTheSpecWithIt) {
  const auto node_json = [](const char* scale_up) {
    return std::string(R"({"name": "n", "gpu": "h100-sxm5-80gb", "nodes": 1, "fabric": {"type": "single_node"},
                           "node": {"gpus": 8, "nics": 8, "scale_up": )") +
           scale_up + "}}";
  };
  const ClusterSpec implied = parse_cluster_spec(node_json(R"({"type": "nvswitch", "bandwidth_GBps": 450})"), "a.json");
  const ClusterSpec named = parse_cluster_spec(
      node_json(R"({"type": "nvswitch", "generation": "nvlink4", "bandwidth_GBps": 450})"), "b.json");
  const NetworkProfile h100 = load_network_profile("nccl-h100");
  const auto eight = iota_ranks(8);
  for (const ClusterSpec* spec : {&implied, &named}) {
    const Cluster node = Cluster::build(*spec);
    EXPECT_EQ(select_collective_algorithm({node, h100}, {CollectiveKind::all_reduce, &eight, 1e9}), "nvls");
  }
  CollectiveRun run{{eight}, CollectiveKind::all_reduce, 1e9, "auto"};
  run.profile = h100;
  const double t_implied = time_of(implied, run), t_named = time_of(named, run);
  EXPECT_DOUBLE_EQ(t_implied, t_named);
  // ~470 GB/s of bus bandwidth (NVLS), not the ring's ~348.
  run.algorithm = "ring";
  EXPECT_LT(t_implied, 0.8 * time_of(implied, run));
}

// NCCL's NVLS_TREE on two p5-like nodes (preset aws-p5: 32 x 100 Gb/s EFA, 4 NICs per GPU): NVLS inside
// the nodes, per rail a tree across them carrying each GPU's S/8 shard, striped over its 4 NICs: S/32 per
// NIC per direction at 12.5 GB/s, against S per GPU port on NVLink at 450 GB/s. Pipelined, the NICs
// set the pace: t = S / 400 GB/s (ideal profile), bus bandwidth 2(N-1)/N x 400 = 750 GB/s, where the
// ring's is bound at the NICs' 400 GB/s. The selector takes it.
TEST(CollectiveAlgorithms, NvlsTreeOnTwoP5NodesIsBoundByTheNicsOnceNotTwice) {
  const ClusterSpec spec = load_cluster_spec("aws-p5", {{"nodes", "2"}});
  const double s = 4.0 * (1 << 30), n = 16;
  const auto all = iota_ranks(16);
  const double tree = time_of(spec, {{all}, CollectiveKind::all_reduce, s, "nvls_tree"});
  EXPECT_NEAR(tree, s / 400e9, 0.01 * s / 400e9);
  const double ring = time_of(spec, {{all}, CollectiveKind::all_reduce, s, "ring"});
  // The ring: 2(N-1)/N S over the same NICs, plus its 30 steps of EFA's per-message latency (~2 %).
  EXPECT_GE(ring, 2 * (n - 1) / n * s / 400e9);
  EXPECT_LE(ring, 1.03 * 2 * (n - 1) / n * s / 400e9);
  const Cluster cluster = Cluster::build(spec);
  const NetworkProfile ideal = ideal_network_profile();
  EXPECT_EQ(select_collective_algorithm({cluster, ideal}, {CollectiveKind::all_reduce, &all, s}), "nvls_tree");
  // Without NVLS (an A100-like switch), NVLS_TREE cannot run and says why.
  const ClusterSpec a100 = load_cluster_spec("aws-p5", {{"nodes", "2"}, {"node.scale_up.generation", "\"nvlink3\""}});
  const Cluster plain = Cluster::build(a100);
  EXPECT_NE(collective_infeasible("nvls_tree", {plain, ideal}, {CollectiveKind::all_reduce, &all, s})
                .find("no in-switch reduction"),
            std::string::npos);
}

// Conservation: what the ranks send is what they receive, and each rank sends the algorithm's volume.
TEST(CollectiveAlgorithms, BytesSentEqualBytesReceived) {
  const Cluster cluster = Cluster::build(star(8));
  const NetworkProfile ideal = ideal_network_profile();
  const auto ranks = iota_ranks(8);
  struct Case {
    const char* algorithm;
    CollectiveKind kind;
    double per_rank;  // bytes each rank sends
  };
  for (const Case& c : {Case{"ring", CollectiveKind::all_reduce, 2.0 * 7 / 8 * kS},
                        Case{"halving_doubling", CollectiveKind::all_reduce, 2.0 * 7 / 8 * kS},
                        Case{"direct", CollectiveKind::all_to_all, 7.0 / 8 * kS},
                        Case{"ring", CollectiveKind::all_gather, 7.0 / 8 * kS}}) {
    const CollectivePlan plan = plan_collective(c.algorithm, {cluster, ideal}, {c.kind, &ranks, kS});
    std::vector<double> sent(8, 0.0), received(8, 0.0);
    for (const auto& phase : plan.phases) {
      for (const auto& t : phase.transfers) {
        sent[static_cast<std::size_t>(t.src_gpu)] += t.bytes;
        received[static_cast<std::size_t>(t.dst_gpu)] += t.bytes;
      }
    }
    for (int r = 0; r < 8; ++r) {
      EXPECT_NEAR(sent[static_cast<std::size_t>(r)], c.per_rank, 1e-6 * kS) << c.algorithm;
      EXPECT_NEAR(received[static_cast<std::size_t>(r)], c.per_rank, 1e-6 * kS) << c.algorithm;
    }
  }
}

// Two all-reduces whose rings share a NIC uplink each take twice as long as alone: nodes of 2 GPUs
// with one NIC; {0, 2} and {1, 3} both cross both NICs in both directions.
TEST(CollectiveAlgorithms, TwoAllReducesSharingAnUplinkTakeTwiceAsLong) {
  const ClusterSpec spec = testing::fat_tree_spec(2, 2, 1);
  for (const char* fidelity : {"flow", "analytical"}) {
    const double alone = time_of(spec, {{{0, 2}}, CollectiveKind::all_reduce, kS, "ring", fidelity});
    const double shared = time_of(spec, {{{0, 2}, {1, 3}}, CollectiveKind::all_reduce, kS, "ring", fidelity});
    // Bandwidth term S/B doubles; the latency term 2a does not.
    EXPECT_NEAR(shared - 2 * 1.2e-6, 2 * (alone - 2 * 1.2e-6), 1e-3 * alone) << fidelity;
  }
}

// On an idle fabric the analytical backend gives what SimGrid's max-min sharing gives.
TEST(CollectiveAlgorithms, AnalyticalEqualsFlowOnIdleFabrics) {
  const ClusterSpec dgx = testing::fat_tree_spec(4, 8, 8);
  for (const char* algorithm : {"ring", "tree", "hierarchical"}) {
    CollectiveRun run{{iota_ranks(32)}, CollectiveKind::all_reduce, 1e9, algorithm, "flow"};
    const double flow = time_of(dgx, run);
    run.fidelity = "analytical";
    const double analytical = time_of(dgx, run);
    EXPECT_NEAR(analytical, flow, 0.01 * flow) << algorithm;
  }
  // 8 nodes: the trees' merged edges (two flows of one node pair in one transfer) share NIC links
  // with single ones; the link drains their bytes together at both fidelities (20 % apart when the
  // analytical backend shared links per transfer).
  CollectiveRun trees{{iota_ranks(64)}, CollectiveKind::all_reduce, 1e9, "tree", "flow"};
  const ClusterSpec eight_nodes = testing::fat_tree_spec(8, 8, 8);
  const double tree_flow = time_of(eight_nodes, trees);
  trees.fidelity = "analytical";
  EXPECT_NEAR(time_of(eight_nodes, trees), tree_flow, 0.01 * tree_flow);
  CollectiveRun a2a{{iota_ranks(8)}, CollectiveKind::all_to_all, kS, "direct", "flow"};
  const double flow = time_of(star(8), a2a);
  a2a.fidelity = "analytical";
  EXPECT_NEAR(time_of(star(8), a2a), flow, 0.01 * flow);
}

// An even all-to-all across nodes is bound by each GPU's NIC, which sends the (N-G)/N of S bound for
// the other nodes: t = (N-G)/N S/B (NVLink carries the node's own pairs, 9 times faster). At flow
// fidelity its pairs move as pipelined units, ending when the busiest link has drained: the
// analytical backend's time, to rounding.
TEST(CollectiveAlgorithms, AllToAllAcrossNodesIsBoundByTheNics) {
  const ClusterSpec spec = testing::fat_tree_spec(4, 8, 8);
  CollectiveRun a2a{{iota_ranks(32)}, CollectiveKind::all_to_all, kS, "direct", "flow"};
  const double flow = time_of(spec, a2a);
  a2a.fidelity = "analytical";
  const double analytical = time_of(spec, a2a);
  const double expected = 24.0 / 32 * kS / kB;
  EXPECT_NEAR(flow, expected, 0.01 * expected);
  EXPECT_NEAR(analytical, flow, 1e-9 * flow);
}

// all_to_allv: the same total bytes, but rank 0 receives half of everything: its downlink is the
// bottleneck, so the skewed exchange is slower than the balanced one.
TEST(CollectiveAlgorithms, SkewedAllToAllvIsSlowerThanBalanced) {
  const ClusterSpec spec = star(8);
  const NetworkProfile ideal = ideal_network_profile();
  const auto ranks = iota_ranks(8);
  std::vector<double> balanced(64, kS / 8), skewed(64, 0.0);
  double total = 0;
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      if (i == j) continue;
      skewed[static_cast<std::size_t>(i * 8 + j)] = j == 0 ? kS / 2 : kS / 2 / 6;
      total += skewed[static_cast<std::size_t>(i * 8 + j)];
    }
  }
  const Cluster cluster = Cluster::build(spec);
  const CollectiveContext ctx{cluster, ideal};
  CollectiveRequest even{CollectiveKind::all_to_all, &ranks, kS, &balanced};
  CollectiveRequest skew{CollectiveKind::all_to_all, &ranks, kS, &skewed};
  const double t_even = idle_fabric_time_s(ctx, plan_collective("direct", ctx, even));
  const double t_skew = idle_fabric_time_s(ctx, plan_collective("direct", ctx, skew));
  // Rank 0 receives 7 x S/2 (3.5 S) instead of 7/8 S: four times the bottleneck bytes.
  EXPECT_NEAR(t_skew - kA, 4.0 * (t_even - kA), 1e-6 * t_skew);
  EXPECT_GT(t_skew, t_even);
  (void)total;
  // Replayed (an all_to_all op with per-pair sizes, as a trace gives it), at both fidelities: rank 0's
  // downlink drains 3.5 S, t = 3.5 S/B + a; the even exchange 7/8 S/B + a.
  for (const char* fidelity : {"flow", "analytical"}) {
    const double replayed_skew =
        time_of(spec, {{ranks}, CollectiveKind::all_to_all, kS, "direct", fidelity, ideal, skewed});
    EXPECT_NEAR(replayed_skew, 3.5 * kS / kB + kA, 0.01 * replayed_skew) << fidelity;
    const double replayed_even =
        time_of(spec, {{ranks}, CollectiveKind::all_to_all, kS, "direct", fidelity, ideal, balanced});
    EXPECT_NEAR(replayed_even, 7.0 / 8 * kS / kB + kA, 0.01 * replayed_even) << fidelity;
  }
}

// The selector picks, among NCCL's algorithms that can run the request, the one NCCL's tuner rates
// fastest: the tree for latency-bound sizes across many nodes; the ring inside a node without
// NVLS (1.75 S per port against the tree's 2S); NVLS where the switch reduces; direct for all-to-all.
// The selector's idle-fabric rating routes a phase's transfers as the backends do when it starts
// (adaptive routing sees the phase's earlier transfers): on the 3-tier fat-tree of 256 DGX H100 nodes
// (8 pods) the ring's and the tree's rated times are the replayed ones. (Routed without that load, as
// D-mod-K, the rails collided on the pods' uplinks: the ring rated 8 times and the tree 3 times slower
// than they run, and the selector passed over the tree at scale.)
TEST(CollectiveAlgorithms, IdleFabricRatingRoutesLikeTheBackends) {
  ClusterSpec spec = load_cluster_spec("dgx-h100-superpod", {{"nodes", "256"}, {"fabric.tiers", "3"}});
  const NetworkProfile ideal = ideal_network_profile();
  const auto ranks = iota_ranks(2048);
  const Cluster cluster = Cluster::build(spec);
  const CollectiveContext ctx{cluster, ideal};
  for (const char* algorithm : {"ring", "tree"}) {
    const double rated =
        idle_fabric_time_s(ctx, plan_collective(algorithm, ctx, {CollectiveKind::all_reduce, &ranks, 1e9}));
    const double replayed = time_of(spec, {{ranks}, CollectiveKind::all_reduce, 1e9, algorithm, "analytical"}) -
                            ideal.collective_latency_s.value;
    EXPECT_NEAR(rated, replayed, 0.02 * replayed) << algorithm;
  }
}

// A lent per-link scratch (CollectiveContext::scratch, as the replay lends one to every plan) gives
// the very same idle-fabric ratings as a rating with its own arrays, plan after plan (adaptive routing
// reads the scratch's in-flight counts, so a count left over would move later routes), and is all zero
// after each rating, also after one whose route throws (issue 21).
TEST(CollectiveAlgorithms, ALentLinkScratchRatesExactlyAsItsOwnArrays) {
  const ClusterSpec spec = load_cluster_spec("dgx-h100-superpod", {{"nodes", "64"}, {"fabric.tiers", "3"}});
  const NetworkProfile ideal = ideal_network_profile();
  const Cluster cluster = Cluster::build(spec);
  const std::vector<int> all = iota_ranks(512);
  std::vector<int> rail;  // GPU 3 of every node: one rank per node, across the fabric
  for (int node = 0; node < 64; ++node)
    rail.push_back(node * 8 + 3);
  LinkLoadScratch scratch;
  const CollectiveContext own{cluster, ideal};
  const CollectiveContext lent{cluster, ideal, &scratch};
  const auto all_zero = [&] {
    return std::all_of(scratch.bytes.begin(), scratch.bytes.end(), [](double b) { return b == 0.0; }) &&
           std::all_of(scratch.in_flight.begin(), scratch.in_flight.end(), [](int n) { return n == 0; });
  };
  int rated = 0;
  for (const std::vector<int>* ranks : std::vector<const std::vector<int>*>{&all, &rail, &all}) {
    for (const char* algorithm : {"ring", "tree", "halving_doubling"}) {
      const CollectivePlan plan = plan_collective(algorithm, own, {CollectiveKind::all_reduce, ranks, 1e9});
      const IdleFabricTime a = idle_fabric_time_parts(own, plan);
      const IdleFabricTime b = idle_fabric_time_parts(lent, plan);
      EXPECT_EQ(a.bandwidth_s, b.bandwidth_s) << algorithm << " over " << ranks->size();
      EXPECT_EQ(a.latency_s, b.latency_s) << algorithm;
      EXPECT_GT(b.bandwidth_s, 0.0) << algorithm;
      EXPECT_EQ(scratch.bytes.size(), cluster.links().size());
      EXPECT_TRUE(all_zero()) << algorithm;
      ++rated;
    }
  }
  EXPECT_EQ(rated, 9);
  // A plan whose second transfer names a GPU outside the cluster: the route throws, the first
  // transfer's links were loaded; the scratch is cleared on the way out.
  CollectivePlan bad;
  bad.phases.push_back({"bad", {Transfer{0, 100, 1e6}, Transfer{0, 512, 1e6}}, 1, 0.0});
  EXPECT_THROW(idle_fabric_time_parts(lent, bad), std::out_of_range);
  EXPECT_TRUE(all_zero());
}

TEST(CollectiveAlgorithms, AutoSelectsTheFastestNcclAlgorithm) {
  const NetworkProfile ideal = ideal_network_profile();
  const Cluster big = Cluster::build(testing::fat_tree_spec(32, 8, 8));
  const auto all = iota_ranks(256);
  EXPECT_EQ(select_collective_algorithm({big, ideal}, {CollectiveKind::all_reduce, &all, 64e3}), "tree");
  for (double bytes : {64e3, 1e9}) {
    const CollectiveContext ctx{big, ideal};
    const CollectiveRequest req{CollectiveKind::all_reduce, &all, bytes};
    const double chosen = idle_fabric_time_s(ctx, plan_collective("auto", ctx, req));
    // NCCL's tuner rates the tree with the ring's bandwidth (times n/(n-1)) at 0.92 and its own
    // log-depth latency: where bandwidth dominates, its pick may be a few percent off the fastest.
    const double fastest = std::min(idle_fabric_time_s(ctx, plan_collective("ring", ctx, req)),
                                    idle_fabric_time_s(ctx, plan_collective("tree", ctx, req)));
    EXPECT_LE(chosen, (bytes < 1e6 ? 1.0 : 1.05) * fastest) << bytes;
  }
  const Cluster plain = Cluster::build(testing::fat_tree_spec(1, 8, 8));
  const auto eight = iota_ranks(8);
  EXPECT_EQ(select_collective_algorithm({plain, ideal}, {CollectiveKind::all_reduce, &eight, 1e9}), "ring");
  const Cluster node = Cluster::build(nvls_node());
  EXPECT_EQ(select_collective_algorithm({node, ideal}, {CollectiveKind::all_reduce, &eight, 1e9}), "nvls");
  EXPECT_EQ(select_collective_algorithm({node, ideal}, {CollectiveKind::all_to_all, &eight, 1e9}), "direct");
}

// What NCCL's tuner picks for a multi-node all-reduce (src/graph/tuning.cc): the ring's 2(N-1) steps
// against the tree's 2 log2(nodes), the tree rated at 0.92 of the ring's bandwidth. On 2 nodes the
// ring (its bandwidth wins at large sizes); on 32 nodes the tree for small and medium sizes (latency)
// up to gigabytes, the ring beyond; inside one node without NVLS the ring. The selector rates the
// tree's bandwidth as NCCL does: the ring's (as algorithm bandwidth) x 0.92.
TEST(CollectiveAlgorithms, AutoPicksWhatNcclsTunerPicks) {
  const NetworkProfile ideal = ideal_network_profile();
  struct Case {
    int nodes;
    double bytes;
    const char* expected;
  };
  for (const Case& c : {Case{1, 1e9, "ring"}, Case{2, 1e9, "ring"}, Case{2, 4e9, "ring"}, Case{32, 64e3, "tree"},
                        Case{32, 256e6, "tree"}, Case{32, 64e9, "ring"}}) {
    const Cluster cluster = Cluster::build(testing::fat_tree_spec(c.nodes, 8, 8));
    const auto ranks = iota_ranks(8 * c.nodes);
    EXPECT_EQ(select_collective_algorithm({cluster, ideal}, {CollectiveKind::all_reduce, &ranks, c.bytes}), c.expected)
        << c.nodes << " nodes, " << c.bytes << " B";
  }
  // On 2 nodes the tree is physically faster at 1 GB (its one inter-node edge carries S per direction,
  // the ring 2(N-1)/N S), but NCCL's tuner rates it at the ring's bandwidth x 0.92: the ring is chosen.
  const Cluster two = Cluster::build(testing::fat_tree_spec(2, 8, 8));
  const auto sixteen = iota_ranks(16);
  const CollectiveContext ctx{two, ideal};
  const CollectiveRequest big{CollectiveKind::all_reduce, &sixteen, 1e9};
  const IdleFabricTime ring = idle_fabric_time_parts(ctx, plan_collective("ring", ctx, big));
  const IdleFabricTime tree = idle_fabric_time_parts(ctx, plan_collective("tree", ctx, big));
  EXPECT_LT(tree.total_s(), ring.total_s());
  EXPECT_LT(ring.total_s(), tree.latency_s + ring.bandwidth_s * 16 / 15 / 0.92);
}

}  // namespace
}  // namespace clustersim
