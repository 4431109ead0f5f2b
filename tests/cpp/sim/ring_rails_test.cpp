// Rings across nodes run one channel per NIC, each entering and leaving a node at the GPU next to its
// NIC: with fewer NICs than GPUs (DGX A100-style 4 x HDR for 8 GPUs) every NIC carries one channel.
#include <vector>

#include <gtest/gtest.h>

#include "sim_test_support.hpp"

namespace clustersim {
namespace {

// Every link leaving a NIC into the InfiniBand fabric carried `expected_bytes` (r[1 + link], within
// 1e-9); returns how many such links there are.
int nic_uplinks_carrying(const Cluster& cluster, const std::vector<double>& r, double expected_bytes) {
  const auto links = cluster.links();
  const auto devices = cluster.devices();
  int nic_uplinks = 0;
  for (std::size_t i = 0; i < links.size(); ++i) {
    if (links[i].technology != LinkTechnology::infiniband) continue;
    if (devices[static_cast<std::size_t>(links[i].src)].kind != DeviceKind::nic) continue;
    ++nic_uplinks;
    EXPECT_NEAR(r.at(1 + i), expected_bytes, expected_bytes * 1e-9)
        << devices[static_cast<std::size_t>(links[i].src)].name;
  }
  return nic_uplinks;
}

TEST(RingRails, EveryNicCarriesOneChannelWhenGpusShareNics) {
  const ClusterSpec spec = testing::fat_tree_spec(2, 8, 4, 200.0);
  testing::CollectiveRun run;
  run.groups = {testing::iota_ranks(16)};
  run.bytes = 256e6;
  run.algorithm = "ring";
  const auto r = testing::run_collective(spec, run);
  const Cluster cluster = Cluster::build(spec);
  const double n = 16, nic_Bps = 25e9;
  // Each of the 4 channels crosses each node boundary once per direction: (2(N-1)/N * S) / 4 bytes.
  const double expected_bytes = 2 * (n - 1) / n * run.bytes / 4;
  EXPECT_EQ(nic_uplinks_carrying(cluster, r, expected_bytes), 8);
  // The four NICs in parallel: the ring moves at 4 x 25 GB/s per node (latency terms are microseconds).
  EXPECT_NEAR(r[0], expected_bytes / nic_Bps, expected_bytes / nic_Bps * 0.01);
}

// NICs as AWS wires p5 (32 x 100 Gb/s EFA per 8 GPUs, 4 per GPU behind its PCIe switch) and p5en
// (16 x 200 Gb/s, 2 per GPU): NCCL's plugin stripes each GPU's messages over its own NICs, so the ring's
// bus bandwidth is bound by the node's 3.2 Tb/s = 400 GB/s, not by one NIC per GPU (0.8 Tb/s, 100 GB/s).
struct MultiNicCase {
  int nics;
  double nic_Gbps;
  int fabric_links;  // links of an inter-node hop: radix 64 puts 32 NICs under a leaf
};

class MultiNicRing : public ::testing::TestWithParam<MultiNicCase> {};

TEST_P(MultiNicRing, RingCrossesEveryNicAndRunsAtTheNodesAggregate) {
  const MultiNicCase c = GetParam();
  ClusterSpec spec = testing::fat_tree_spec(2, 8, c.nics, c.nic_Gbps);
  spec.node.pcie_switches = 8;  // GPU g and NICs g k .. g k + k - 1 under PCIe switch g
  testing::CollectiveRun run;
  run.groups = {testing::iota_ranks(16)};
  run.bytes = 1 << 30;
  run.algorithm = "ring";
  const auto r = testing::run_collective(spec, run);
  const Cluster cluster = Cluster::build(spec);
  const double n = 16, nic_Bps = c.nic_Gbps * 1e9 / 8;
  // 2(N-1)/N S leaves each node per direction, spread evenly over its NICs.
  const double expected_bytes = 2 * (n - 1) / n * run.bytes / c.nics;
  EXPECT_EQ(nic_uplinks_carrying(cluster, r, expected_bytes), 2 * c.nics);
  // t = 2(N-1)/N S / (node's NIC bandwidth) + 2(N-1) a, a = 0.6 us per fabric link (32 x 100: each node's
  // NICs fill a leaf, NIC -> leaf -> spine -> leaf -> NIC; 16 x 200: both nodes under one leaf). Bus
  // bandwidth: the node's 3.2 Tb/s.
  const double expected_s = 2 * (n - 1) / n * run.bytes / (c.nics * nic_Bps) + 2 * (n - 1) * c.fabric_links * 0.6e-6;
  EXPECT_NEAR(r[0], expected_s, 1e-3 * expected_s);
  const double busbw_Bps = 2 * (n - 1) / n * run.bytes / r[0];
  EXPECT_GT(busbw_Bps, 3.5 * 8 * 100e9 / 8);  // far above one 100 Gb/s NIC per GPU (8 x 12.5 GB/s)
}

// The PCIe switch pairing a GPU with its NICs: the GPU's own Gen5 x16 link (64 GB/s per direction) carries
// all its NICs' traffic. Four 400 Gb/s NICs per GPU (200 GB/s) are held to 64 GB/s: the ring's bus
// bandwidth is 8 x 64 = 512 GB/s per node, not the NICs' 1.6 TB/s (NVLink at 900 GB/s, as NVLink 5, so
// that the ring's intra-node hops, 2(N-1)/N S each, do not bind first).
TEST(RingRails, AGpusPcieLinkBoundsItsNicsTogether) {
  ClusterSpec spec = testing::fat_tree_spec(2, 8, 32, 400.0, 900.0);
  spec.node.pcie_switches = 8;
  testing::CollectiveRun run;
  run.groups = {testing::iota_ranks(16)};
  run.bytes = 1 << 30;
  run.algorithm = "ring";
  const auto r = testing::run_collective(spec, run);
  const double n = 16;
  // Per GPU 2(N-1)/N S / 8 through its PCIe link; 30 steps of NIC -> leaf -> spine -> leaf -> NIC.
  const double expected_s = 2 * (n - 1) / n * run.bytes / 8 / 64e9 + 2 * (n - 1) * 4 * 0.6e-6;
  EXPECT_NEAR(r[0], expected_s, 1e-3 * expected_s);
}

INSTANTIATE_TEST_SUITE_P(P5AndP5en, MultiNicRing,
                         ::testing::Values(MultiNicCase{32, 100.0, 4}, MultiNicCase{16, 200.0, 2}),
                         [](const ::testing::TestParamInfo<MultiNicCase>& i) {
                           return std::to_string(i.param.nics) + "x" +
                                  std::to_string(static_cast<int>(i.param.nic_Gbps));
                         });

}  // namespace
}  // namespace clustersim
