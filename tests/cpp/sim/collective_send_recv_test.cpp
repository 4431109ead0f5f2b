// `clustersim collective --op send_recv` (nccl-tests' sendrecv_perf): the sweep builds send/recv ops
// instead of a collective. On an idle fabric a pair's time is S/B + a (B its route's bottleneck, a its
// wire latency); pairs that share a NIC split it; both backends agree; and inside a DGX node the
// shipped NCCL profiles predict Vidur's measured send/recv times.
//
// `star(n)`: n single-GPU nodes, one 400 Gb/s NIC each (B = 50 GB/s), all under one leaf: a = 1.2 us.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "sim/collective_sweep.hpp"
#include "sim/core/error.hpp"
#include "sim_test_support.hpp"
#include "topologies/cluster_spec.hpp"

namespace clustersim {
namespace {

constexpr double kB = 50e9;
constexpr double kA = 1.2e-6;
constexpr double kS = 256e6;

CollectiveSweepOptions send_recv(std::vector<int> ranks, int peer_offset, const char* fidelity) {
  CollectiveSweepOptions o;
  o.send_recv = true;
  o.peer_offset = peer_offset;
  o.ranks = std::move(ranks);
  o.sizes = {kS / 4, kS};
  o.fidelity = fidelity;
  o.network_profile = "ideal";
  return o;
}

// Two ranks exchange S both ways at once (full-duplex links): t = S/B + a, for every size in turn.
TEST(CollectiveSendRecv, PairMatchesClosedFormOnBothBackends) {
  for (const char* fidelity : {"analytical", "flow"}) {
    const auto rows = simulate_collective_sweep(testing::fat_tree_spec(2, 1, 1), send_recv({0, 1}, 1, fidelity));
    ASSERT_EQ(rows.size(), 2u);
    for (const auto& r : rows) {
      const double expected = r.bytes / kB + kA;
      EXPECT_NEAR(r.time_s, expected, 1e-6 * expected) << fidelity << " " << r.bytes;
      EXPECT_DOUBLE_EQ(r.busbw_Bps, r.algbw_Bps);  // nccl-tests' sendrecv: bus factor 1
      EXPECT_EQ(r.algorithm, "p2p");
    }
  }
}

// Send/recv between stages on nodes whose GPUs own 4 NICs each (AWS p5: 4 x 100 Gb/s per GPU): the
// message is striped over the sender's 4 NICs, as NCCL's plugin does: node 0's GPU g sends S to node 1's
// GPU g at 4 x 12.5 GB/s, t = S/50 GB/s + a (a: NIC -> leaf -> spine -> leaf -> NIC, 4 x 0.6 us), not
// S/12.5 GB/s through one NIC.
TEST(CollectiveSendRecv, AGpusMessageCrossesAllItsNics) {
  ClusterSpec spec = testing::fat_tree_spec(2, 8, 32, 100.0);
  spec.node.pcie_switches = 8;
  for (const char* fidelity : {"analytical", "flow"}) {
    const auto rows = simulate_collective_sweep(spec, send_recv(testing::iota_ranks(16), 8, fidelity));
    for (const auto& r : rows) {
      const double expected = r.bytes / 50e9 + 4 * 0.6e-6;
      EXPECT_NEAR(r.time_s, expected, 1e-6 * expected) << fidelity << " " << r.bytes;
    }
  }
}

// Two nodes of 2 GPUs and one NIC each; offset n/2 = 2 pairs 0<->2 and 1<->3: both pairs cross both
// NICs in both directions, so each NIC direction carries 2S: t = 2S/B + a. The ring shift (offset 1:
// 0->1 over NVLink, 1->2 and 3->0 over the NICs) puts one S on each NIC direction: t = S/B + a.
TEST(CollectiveSendRecv, PairsSharingANicSplitIt) {
  const ClusterSpec spec = testing::fat_tree_spec(2, 2, 1);
  for (const char* fidelity : {"analytical", "flow"}) {
    const auto halves = simulate_collective_sweep(spec, send_recv({0, 1, 2, 3}, 2, fidelity));
    const auto shift = simulate_collective_sweep(spec, send_recv({0, 1, 2, 3}, 1, fidelity));
    EXPECT_NEAR(halves[1].time_s, 2 * kS / kB + kA, 1e-6 * halves[1].time_s) << fidelity;
    EXPECT_NEAR(shift[1].time_s, kS / kB + kA, 1e-6 * shift[1].time_s) << fidelity;
  }
}

TEST(CollectiveSendRecv, RefusesSendingToItself) {
  CollectiveSweepOptions o = send_recv({0, 1}, 2, "analytical");
  EXPECT_THROW(run_collective_sweep_in_this_process(testing::fat_tree_spec(2, 1, 1), o, ideal_network_profile()),
               SpecError);
  EXPECT_TRUE(is_send_recv_op("send_recv"));
  EXPECT_TRUE(is_send_recv_op("sendrecv"));
  EXPECT_FALSE(is_send_recv_op("all_reduce"));
}

// Vidur's NCCL send/recv between 2 GPUs of one DGX node (calibration/data/vidur/network/*_dgx/send_recv.csv,
// devices_per_node = 2, median of the repetitions), sizes >= 32 MiB, against the shipped profile of the
// GPU (its NVLink efficiency was fitted to all-reduce tables, not to these): median |error| <= 10 %,
// 90th percentile <= 20 % (single rows stray up to 40 %: the measurements jump between neighbouring sizes). The 2-node
// rows (devices_per_node = 1) are left out: Vidur does not say which NICs carried them (H100: 35 GB/s, 70 % of one 400
// Gb/s NIC; A100: 7.8 GB/s), so no cluster spec fits them.
TEST(CollectiveSendRecv, IntraNodeMatchesVidurMeasurements) {
  const std::filesystem::path data = std::filesystem::path(CLUSTERSIM_DATA_DIR) / "vidur/network";
  const std::pair<const char*, const char*> systems[] = {{"a100_dgx", "dgx-a100-superpod"},
                                                         {"h100_dgx", "dgx-h100-superpod"}};
  for (const auto& [dir, preset] : systems) {
    std::ifstream in(data / dir / "send_recv.csv");
    ASSERT_TRUE(in) << dir;
    std::string line;
    std::getline(in, line);             // header: ,min,max,mean,median,std,rank,num_workers,size,collective,dpn,max_dpn
    std::map<double, double> measured;  // size -> median time (s)
    while (std::getline(in, line)) {
      std::vector<std::string> f;
      std::stringstream ss(line);
      for (std::string cell; std::getline(ss, cell, ',');)
        f.push_back(cell);
      ASSERT_GE(f.size(), 11u) << line;
      const double size = std::stod(f[8]);
      if (f[10] == "2" && size >= (32 << 20)) measured[size] = std::stod(f[4]) * 1e-3;
    }
    ASSERT_GT(measured.size(), 50u) << dir;
    const ClusterSpec spec = load_cluster_spec(preset, {{"nodes", "1"}});
    CollectiveSweepOptions o;
    o.send_recv = true;
    o.ranks = {0, 1};
    o.fidelity = "analytical";
    for (const auto& [size, t] : measured)
      o.sizes.push_back(size);
    const auto rows =
        run_collective_sweep_in_this_process(spec, o, load_network_profile(network_profile_for_gpu(spec.gpu_id)));
    ASSERT_EQ(rows.size(), measured.size());
    std::vector<double> errors;
    for (const auto& r : rows)
      errors.push_back(std::abs(r.time_s / measured.at(r.bytes) - 1.0));
    std::sort(errors.begin(), errors.end());
    EXPECT_LE(errors[errors.size() / 2], 0.10) << dir;
    EXPECT_LE(errors[errors.size() * 9 / 10], 0.20) << dir;
  }
}

}  // namespace
}  // namespace clustersim
