// NCCL's protocols (LL, LL128, Simple) against their closed forms, and the tuner's choice among
// (algorithm, protocol) pairs.
//
// Node `slow_node()`: 8 GPUs on an NVSwitch of 200 GB/s per direction (B), 0.7 us GPU to GPU (a).
// The profile is the ideal one (line rate, wire latencies) with NCCL's protocols on, so the only
// overheads are the protocols'. NCCL's figures, restated from src/graph/tuning.cc of NCCL 2.27.7
// (ring, NVLink):
//   Simple: base 8.4 us, 3.4 us per step, full bandwidth;
//   LL:     base 6.6 us, 0.6 us per step, half the bandwidth (4 data bytes per 8), at most 141 GB/s
//           of bus bandwidth on a Hopper node (llMaxBw; 200 GB/s x 1/2 stays below it);
//   LL128:  base 14 us, 1.9 us per step, 0.92 of the bandwidth (NCCL's figure for 120/128).
// A ring all-reduce over N ranks under protocol p:
//     t_p = 2(N-1)/N * S / (f_p B) + 2(N-1) (a + hw_p) + base_p.
#include "sim/collectives/nccl_protocol.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

#include <gtest/gtest.h>

#include "sim/collectives/collective_algorithm.hpp"
#include "sim/core/error.hpp"
#include "sim_test_support.hpp"
#include "topologies/cluster_spec.hpp"

namespace clustersim {
namespace {

using testing::iota_ranks;

constexpr double kB = 200e9;
constexpr double kA = 0.7e-6;
constexpr double kN = 8;

struct Protocol {
  const char* name;
  double fraction;
  double hw_s;
  double base_s;
};
constexpr Protocol kSimple{"Simple", 1.0, 3.4e-6, 8.4e-6};
constexpr Protocol kLL{"LL", 0.5, 0.6e-6, 6.6e-6};
constexpr Protocol kLL128{"LL128", 0.92, 1.9e-6, 14e-6};

// An H100-like node (NVLink 4: NCCL's Hopper row of llMaxBw) with 200 GB/s per GPU.
ClusterSpec slow_node() {
  ClusterSpec s = testing::fat_tree_spec(1, 8, 8, 400.0, 200.0);
  s.node.scale_up.generation = "nvlink4";
  return s;
}

// LL128's bus bandwidth is also capped at NCCL's per-channel maximum (Hopper: 36.7 GB/s) x the channels the
// call runs on by its size (nccl_channels.hpp: floor(S / (640 threads x 8)), 1 to 64): at 8 B one channel,
// 36.7 GB/s, below 0.92 x 200 GB/s (50.4001 us before the cap, 50.4004 us with it); from 64 kB (12 channels,
// 440 GB/s) it does not bind.
double ring_closed_form(const Protocol& p, double bytes) {
  double bus_Bps = p.fraction * kB;
  if (p.name == std::string_view("LL128"))
    bus_Bps = std::min(bus_Bps, std::clamp(std::floor(bytes / 5120.0), 1.0, 64.0) * 36.7e9);
  return 2 * (kN - 1) / kN * bytes / bus_Bps + 2 * (kN - 1) * (kA + p.hw_s) + p.base_s;
}

NetworkProfile ideal_with_protocols() {
  NetworkProfile p = ideal_network_profile();
  p.nccl_protocols = true;
  return p;
}

double ring_time(const Cluster& cluster, const NetworkProfile& profile, const Protocol& p, double bytes) {
  const auto ranks = iota_ranks(8);
  const CollectiveContext ctx{cluster, profile};
  return idle_fabric_time_s(ctx, plan_collective("ring", p.name, ctx, {CollectiveKind::all_reduce, &ranks, bytes}));
}

TEST(NcclProtocols, RingUnderEachProtocolMatchesItsClosedForm) {
  const Cluster node = Cluster::build(slow_node());
  const NetworkProfile profile = ideal_with_protocols();
  for (double bytes : {8.0, 64e3, 256e6}) {
    for (const Protocol& p : {kSimple, kLL, kLL128}) {
      const double expected = ring_closed_form(p, bytes);
      EXPECT_NEAR(ring_time(node, profile, p, bytes), expected, 1e-9 * expected) << p.name << " " << bytes;
    }
  }
  // The ideal profile has no protocols: the ring is the textbook 2(N-1)/N S/B + 2(N-1) a, called Simple.
  const auto ranks = iota_ranks(8);
  const CollectiveContext ideal{node, ideal_network_profile()};
  const CollectivePlan plain = plan_collective("ring", ideal, {CollectiveKind::all_reduce, &ranks, 256e6});
  EXPECT_EQ(plain.protocol, "Simple");
  const double textbook = 2 * (kN - 1) / kN * 256e6 / kB + 2 * (kN - 1) * kA;
  EXPECT_NEAR(idle_fabric_time_s(ideal, plain), textbook, 1e-9 * textbook);
}

// LL's bandwidth is capped at 141 GB/s of bus bandwidth on a Hopper node: on 450 GB/s NVLink its
// bytes take 450/141 times longer than Simple's, not 2x.
TEST(NcclProtocols, LlIsCappedAtNcclsLlMaxBandwidth) {
  ClusterSpec spec = testing::fat_tree_spec(1, 8, 8);
  spec.node.scale_up.generation = "nvlink4";
  const Cluster node = Cluster::build(spec);
  const NetworkProfile profile = ideal_with_protocols();
  const double big = 1024.0 * 1024 * 1024;
  const double ll_bw = ring_time(node, profile, kLL, big) - (2 * (kN - 1) * (kA + kLL.hw_s) + kLL.base_s);
  EXPECT_NEAR(ll_bw, 2 * (kN - 1) / kN * big / 141e9, 1e-9 * ll_bw);
}

// NCCL's tree correction by size (tuning.cc v2.27.7-1, treeCorrectionFactor, index log2(bytes / 64)):
// 16 MiB = 2^24 B -> index 18: LL128 0.9, Simple 0.7; 1 MiB -> index 14: Simple 0.5, LL 0.5; 256 MiB
// -> index 22: Simple 0.9; 512 MiB and 32 B are outside the table: 1. The selector divides its estimate
// of a tree all-reduce's bandwidth by it, as NCCL's tuner does. On 2 p5 nodes with the shipped profile
// this moves 32 MiB from the tree (LL128, 0.9) to the ring, as the plugin's own p5 tuner does above
// 30 MiB (aws-ofi-nccl src/tuner/nccl_ofi_regions.cpp), and keeps the tree under LL128 at 16 MiB.
TEST(NcclProtocols, TreeAllReduceEstimateTakesNcclsCorrectionBySize) {
  const double mib = 1024.0 * 1024;
  EXPECT_DOUBLE_EQ(nccl_tree_correction(NcclProtocol::ll128, 16 * mib), 0.9);
  EXPECT_DOUBLE_EQ(nccl_tree_correction(NcclProtocol::simple, 16 * mib), 0.7);
  EXPECT_DOUBLE_EQ(nccl_tree_correction(NcclProtocol::simple, mib), 0.5);
  EXPECT_DOUBLE_EQ(nccl_tree_correction(NcclProtocol::ll, mib), 0.5);
  EXPECT_DOUBLE_EQ(nccl_tree_correction(NcclProtocol::simple, 256 * mib), 0.9);
  EXPECT_DOUBLE_EQ(nccl_tree_correction(NcclProtocol::simple, 512 * mib), 1.0);
  EXPECT_DOUBLE_EQ(nccl_tree_correction(NcclProtocol::simple, 32), 1.0);
  const Cluster p5 = Cluster::build(load_cluster_spec("aws-p5", {{"nodes", "2"}}));
  const NetworkProfile h100 = load_network_profile("nccl-h100");
  const auto ranks = iota_ranks(16);
  EXPECT_EQ(select_collective_algorithm({p5, h100}, {CollectiveKind::all_reduce, &ranks, 16 * mib}), "tree");
  EXPECT_EQ(select_collective_algorithm({p5, h100}, {CollectiveKind::all_reduce, &ranks, 32 * mib}), "ring");
}

// LL wins small messages by the latency difference and loses large ones by its 2x bandwidth factor;
// the two times cross at S* = (latency difference) x B N / (2(N-1)) (1/0.5 - 1 = 1).
TEST(NcclProtocols, LlBeatsSimpleBelowTheCrossoverAndLosesAboveIt) {
  const Cluster node = Cluster::build(slow_node());
  const NetworkProfile profile = ideal_with_protocols();
  const double latency_gap_s = 2 * (kN - 1) * (kSimple.hw_s - kLL.hw_s) + (kSimple.base_s - kLL.base_s);
  EXPECT_NEAR(latency_gap_s, 41.0e-6, 1e-12);
  // At 8 B the gap is the latency difference less LL's extra wire time of 2(N-1)/N x 8 B / B.
  const double small_gap = ring_time(node, profile, kSimple, 8) - ring_time(node, profile, kLL, 8);
  EXPECT_NEAR(small_gap, latency_gap_s - 2 * (kN - 1) / kN * 8 / kB, 1e-12);
  // At 1 GiB the bandwidth parts differ by exactly 2x.
  const double big = 1024.0 * 1024 * 1024;
  const double ll_bw = ring_time(node, profile, kLL, big) - (2 * (kN - 1) * (kA + kLL.hw_s) + kLL.base_s);
  const double simple_bw =
      ring_time(node, profile, kSimple, big) - (2 * (kN - 1) * (kA + kSimple.hw_s) + kSimple.base_s);
  EXPECT_NEAR(ll_bw / simple_bw, 2.0, 1e-9);
  const double crossover = latency_gap_s * kB * kN / (2 * (kN - 1));
  EXPECT_NEAR(crossover, 4.6857e6, 1e2);
  EXPECT_NEAR(ring_time(node, profile, kLL, crossover), ring_time(node, profile, kSimple, crossover), 1e-12);
  EXPECT_LT(ring_time(node, profile, kLL, 0.9 * crossover), ring_time(node, profile, kSimple, 0.9 * crossover));
  EXPECT_GT(ring_time(node, profile, kLL, 1.1 * crossover), ring_time(node, profile, kSimple, 1.1 * crossover));
  // Asked for the ring by name, the tuner takes the protocol with the least time: LL for tiny
  // messages, LL128 in between (a lower latency than Simple at 0.92 of its bandwidth), Simple for
  // large ones. LL128 overtakes LL where 2(N-1)/N S/B (2 - 1/0.92) = their latency gap (25.6 us).
  const auto ranks = iota_ranks(8);
  const CollectiveContext ctx{node, profile};
  EXPECT_EQ(plan_collective("ring", ctx, {CollectiveKind::all_reduce, &ranks, 8}).protocol, "LL");
  EXPECT_EQ(plan_collective("ring", ctx, {CollectiveKind::all_reduce, &ranks, 16e6}).protocol, "LL128");
  EXPECT_EQ(plan_collective("ring", ctx, {CollectiveKind::all_reduce, &ranks, 1e9}).protocol, "Simple");
}

// The flow backend runs what the tuner planned: the ring at 8 B under LL, in its closed-form time.
TEST(NcclProtocols, FlowBackendRunsTheChosenProtocol) {
  testing::CollectiveRun run{{iota_ranks(8)}, CollectiveKind::all_reduce, 8.0, "ring"};
  run.profile = ideal_with_protocols();
  const double t = testing::run_collective(slow_node(), run)[0];
  EXPECT_NEAR(t, ring_closed_form(kLL, 8.0), 1e-3 * ring_closed_form(kLL, 8.0));
}

// On a DGX H100 node with NCCL's latency table as NCCL's tuner reads it (the shipped H100 profile with
// its intra-node scale at 1), the tuner takes LL for 8 B (ring LL: 6.6 + 14 x 0.6 us; tree LL: 6.8 +
// 2 x 7 x 0.6 us; against NVLS's in-switch step) and Simple for 1 GiB (NVLS, which runs Simple only).
TEST(NcclProtocols, TunerPicksLlForTinyAndSimpleForLargeOnADgxH100Node) {
  const Cluster node = Cluster::build(load_cluster_spec("dgx-h100", {{"nodes", "1"}}));
  NetworkProfile h100 = load_network_profile("nccl-h100");
  ASSERT_TRUE(h100.nccl_protocols);
  h100.nccl_intra_latency_scale.value = 1.0;
  const auto ranks = iota_ranks(8);
  const CollectiveContext ctx{node, h100};
  const CollectivePlan tiny = plan_collective("auto", ctx, {CollectiveKind::all_reduce, &ranks, 8});
  EXPECT_EQ(tiny.protocol, "LL");
  EXPECT_TRUE(tiny.algorithm == "ring" || tiny.algorithm == "tree") << tiny.algorithm;
  const CollectivePlan large = plan_collective("auto", ctx, {CollectiveKind::all_reduce, &ranks, 1024.0 * 1024 * 1024});
  EXPECT_EQ(large.protocol, "Simple");
  EXPECT_EQ(large.algorithm, "nvls");
  // In between, LL128 (120/128 of the bandwidth at a lower latency than Simple) wins a range of sizes.
  const CollectivePlan mid = plan_collective("ring", ctx, {CollectiveKind::all_reduce, &ranks, 16.0 * 1024 * 1024});
  EXPECT_EQ(mid.protocol, "LL128");
}

TEST(NcclProtocols, WhoMayRunWhat) {
  const NetworkProfile profile = ideal_with_protocols();
  const Cluster node = Cluster::build(testing::fat_tree_spec(1, 8, 8));
  const CollectiveContext ctx{node, profile};
  EXPECT_EQ(collective_protocols("ring", ctx), (std::vector<std::string>{"LL", "LL128", "Simple"}));
  EXPECT_EQ(collective_protocols("nvls", ctx), (std::vector<std::string>{"Simple"}));
  EXPECT_EQ(collective_protocols("nvls_tree", ctx), (std::vector<std::string>{"Simple"}));
  // LL128 needs NVLink inside the node.
  ClusterSpec pcie = testing::fat_tree_spec(1, 8, 8);
  pcie.node.scale_up.type = "pcie";
  pcie.node.scale_up.generation = "";
  const Cluster pcie_node = Cluster::build(pcie);
  EXPECT_EQ(collective_protocols("ring", {pcie_node, profile}), (std::vector<std::string>{"LL", "Simple"}));
  // Without NCCL's protocols (the ideal profile) everything is Simple.
  EXPECT_EQ(collective_protocols("ring", {node, ideal_network_profile()}), (std::vector<std::string>{"Simple"}));
  // Asking for a protocol an algorithm cannot run is an error that says why.
  const auto ranks = iota_ranks(8);
  try {
    plan_collective("direct", "LL", ctx, {CollectiveKind::all_to_all, &ranks, 1e6});
    FAIL() << "expected an error";
  } catch (const SimulationError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot run the LL protocol"), std::string::npos) << e.what();
  }
  EXPECT_THROW(plan_collective("auto", "LL", ctx, {CollectiveKind::all_reduce, &ranks, 1e6}), SimulationError);
}

// The tree's protocols: NCCL's tree latency 2 ((N/M - 1) intra + log2(M) network steps) + base. On
// star(8) (M = 8 nodes of one GPU) a tree LL all-reduce of 8 B pays 6.8 + 2 x 3 x 5.0 = 36.8 us of
// NCCL latency against the ring LL's 6.6 + 14 x 5.0 = 76.6 us: the tuner takes the tree.
TEST(NcclProtocols, TreeLatencyIsLogarithmicInTheNodes) {
  const Cluster star = Cluster::build(testing::fat_tree_spec(8, 1, 1));
  const NetworkProfile with = ideal_with_protocols();
  const auto ranks = iota_ranks(8);
  const CollectiveRequest req{CollectiveKind::all_reduce, &ranks, 8};
  const double tree_ll = idle_fabric_latency_s({star, with}, plan_collective("tree", "LL", {star, with}, req));
  const double tree_plain = idle_fabric_latency_s({star, ideal_network_profile()},
                                                  plan_collective("tree", {star, ideal_network_profile()}, req));
  EXPECT_NEAR(tree_ll - tree_plain, 36.8e-6, 1e-12);
  const CollectivePlan chosen = plan_collective("auto", {star, with}, req);
  EXPECT_EQ(chosen.algorithm, "tree");
  EXPECT_EQ(chosen.protocol, "LL");
}

// Over EFA the low-latency protocols take aws-ofi-nccl's modelled network step (20 us, its p5 tuner's
// net_lat) where Simple takes the plugin's declared 75 us twice (topologies/fabric_transport.cpp). Two
// nodes of one GPU (so NCCL charges the tree's network figures), a tree all-reduce of 8 B: one level,
// 2 log2(2) = 2 network steps, no NVLink steps. NCCL's latency on top of the plain tree:
//   LL      6.8 + 2 x (5.0 + 20)       =  56.8 us
//   LL128  14.0 + 2 x (8.5 + 20)       =  71.0 us
//   Simple  8.4 + 2 x (14 + 2 x 75)    = 336.4 us
// and on RoCE (no plugin latency) LL is 6.8 + 2 x 5.0 = 16.8 us.
TEST(NcclProtocols, EfaLowLatencyProtocolsTakeThePluginsModelledNetworkStep) {
  ClusterSpec spec = testing::fat_tree_spec(2, 1, 1);
  spec.fabric.technology = "ethernet";
  spec.fabric.transport = "efa";
  const Cluster efa = Cluster::build(spec);
  spec.fabric.transport = "roce";
  const Cluster roce = Cluster::build(spec);
  const NetworkProfile with = ideal_with_protocols();
  const NetworkProfile plain = ideal_network_profile();
  const auto ranks = iota_ranks(2);
  const CollectiveRequest req{CollectiveKind::all_reduce, &ranks, 8};
  const auto extra_s = [&](const Cluster& c, const char* protocol) {
    return idle_fabric_latency_s({c, with}, plan_collective("tree", protocol, {c, with}, req)) -
           idle_fabric_latency_s({c, plain}, plan_collective("tree", {c, plain}, req));
  };
  EXPECT_NEAR(extra_s(efa, "LL"), 56.8e-6, 1e-12);
  EXPECT_NEAR(extra_s(efa, "LL128"), 71.0e-6, 1e-12);
  EXPECT_NEAR(extra_s(efa, "Simple"), 336.4e-6, 1e-12);
  EXPECT_NEAR(extra_s(roce, "LL"), 16.8e-6, 1e-12);
  // EFA v3 (p5en): the plugin declares 35 us and its tuner models 18 us per LL/LL128 step:
  //   LL 6.8 + 2 x (5.0 + 18) = 52.8 us; Simple 8.4 + 2 x (14 + 2 x 35) = 176.4 us.
  spec.fabric.transport = "efa_v3";
  const Cluster efa_v3 = Cluster::build(spec);
  EXPECT_NEAR(extra_s(efa_v3, "LL"), 52.8e-6, 1e-12);
  EXPECT_NEAR(extra_s(efa_v3, "Simple"), 176.4e-6, 1e-12);
  // GPUDirect-TCPXO: its fitted 28 us per network step under every protocol, twice under Simple:
  //   LL 6.8 + 2 x (5.0 + 28) = 72.8 us; Simple 8.4 + 2 x (14 + 2 x 28) = 148.4 us.
  spec.fabric.transport = "tcpxo";
  const Cluster tcpxo = Cluster::build(spec);
  EXPECT_NEAR(extra_s(tcpxo, "LL"), 72.8e-6, 1e-12);
  EXPECT_NEAR(extra_s(tcpxo, "Simple"), 148.4e-6, 1e-12);
}

// The shipped profiles carry NCCL's protocols, and their fit scales NCCL's intra-node latencies down:
// on the >= 1 MiB nccl-tests tables of A100 and H100 nodes the table's 3.4 us per NVLink ring step
// (Simple) is far more than the measurements leave room for, so the fitted scale is < 0.1 and an NVLink
// all-reduce of a megabyte or more runs Simple, as the fitted efficiency and per-call latency describe.
TEST(NcclProtocols, ShippedProfilesFitTheScaleOfNcclsIntraNodeLatencies) {
  for (const char* name : {"nccl-a100", "nccl-h100"}) {
    const NetworkProfile p = load_network_profile(name);
    EXPECT_TRUE(p.nccl_protocols) << name;
    EXPECT_LT(p.nccl_intra_latency_scale.value, 0.1) << name;
    EXPECT_NE(p.nccl_intra_latency_scale.source.find("fit to"), std::string::npos) << name;
  }
  EXPECT_FALSE(ideal_network_profile().nccl_protocols);
}

// PAT (NCCL 2.23+) on 8 single-GPU nodes (NIC 50 GB/s, hop 1.2 us): Bruck's steps at distances 1, 2, 4
// move 1, 2, 4 blocks of S/8, (N-1)/N S in all, and NCCL charges 8 + log2(8) x 14 / 3.5 + 2.8 x 8 =
// 42.4 us: t = 7/8 S/B + 3 a + 42.4 us. The tuner takes it for small all-gathers (the ring pays
// 8.4 + 7 x 14 us there) and the ring for large ones (NCCL rates PAT's bandwidth at 0.75).
TEST(NcclProtocols, PatAllGatherMatchesItsClosedForm) {
  const Cluster star = Cluster::build(testing::fat_tree_spec(8, 1, 1));
  const NetworkProfile profile = ideal_with_protocols();
  const auto ranks = iota_ranks(8);
  const CollectiveContext ctx{star, profile};
  for (CollectiveKind kind : {CollectiveKind::all_gather, CollectiveKind::reduce_scatter}) {
    const double s = 256e6;
    const CollectivePlan pat = plan_collective("pat", ctx, {kind, &ranks, s});
    EXPECT_EQ(pat.phases.size(), 3u);
    const double expected = 7.0 / 8 * s / 50e9 + 3 * 1.2e-6 + 42.4e-6;
    EXPECT_NEAR(idle_fabric_time_s(ctx, pat), expected, 1e-9 * expected);
  }
  EXPECT_EQ(plan_collective("auto", ctx, {CollectiveKind::all_gather, &ranks, 64e3}).algorithm, "pat");
  EXPECT_EQ(plan_collective("auto", ctx, {CollectiveKind::all_gather, &ranks, 1e9}).algorithm, "ring");
  // Two GPUs per node: NCCL does not enable PAT, and asking for it says why.
  const Cluster pairs = Cluster::build(testing::fat_tree_spec(4, 2, 2));
  EXPECT_NE(collective_infeasible("pat", {pairs, profile}, {CollectiveKind::all_gather, &ranks, 1e6})
                .find("one GPU per node"),
            std::string::npos);
  // Without NCCL's protocol model (the ideal profile) PAT is not offered either.
  EXPECT_FALSE(
      collective_infeasible("pat", {star, ideal_network_profile()}, {CollectiveKind::all_gather, &ranks, 1e6}).empty());
}

}  // namespace
}  // namespace clustersim
