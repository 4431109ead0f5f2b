// A ring all-reduce across nodes, simulated on SimGrid, is slower on a 2:1 oversubscribed fabric than
// on a 1:1 one by exactly what the bottleneck predicts.
//
// Setup: 4 nodes x 8 GPUs x 8 NICs of 400 Gb/s (50 GB/s), NVSwitch at 450 GB/s, PCIe 64 GB/s, on a
// spine_leaf fabric with one spine (of 64 ports) and leaves of radix 2 (1:1: 1 NIC port and 1 uplink
// per leaf) or radix 3 (2:1: 2 NIC ports and 1 uplink). NICs fill leaves in (node, NIC) order, so at
// 2:1 NICs 2i and 2i + 1 of a node share a leaf and its single uplink. A single uplink leaves ECMP no
// choice: the bottleneck is fixed by the topology, not by hashing.
//
// The ring (sim/collectives/ring_algorithm.cpp) runs C = 8 channels; channel c enters and leaves every
// node through its rail-c GPU and NIC. Every rank sends D = 2(N-1)/N x S (N = 32); per channel
// D / 8 crosses from NIC c of node n to NIC c of node n + 1, always through the spine (the two NICs
// are on different leaves), over NIC -> leaf -> spine -> leaf -> NIC = 4 links of 0.6 us (2.4 us).
// Inside a node each GPU sends D to its ring successor over NVLink: D / 450 GB/s < D / 400 GB/s.
//   1:1  every link of an inter-node flow carries that flow alone: B = 50 GB/s (the NIC line rate),
//        t1 = (D / 8) / 50 GB/s + 2(N-1) x 2.4 us.
//   2:1  a leaf's uplink (and the spine's downlink to a leaf) carries channels 2i and 2i + 1: each flow
//        gets 25 GB/s, t2 = (D / 8) / 25 GB/s + 2(N-1) x 2.4 us.
// So the bandwidth term doubles: t2 - t1 = (D / 8) / 50 GB/s, with S = 1 GB: 4.84 ms.
#include <gtest/gtest.h>

#include "sim_test_support.hpp"
#include "topologies/cluster.hpp"

namespace clustersim {
namespace {

ClusterSpec spine_leaf(int leaf_radix, double oversubscription) {
  return parse_cluster_spec(R"({
    "name": "oversubscription", "gpu": "h100-sxm5-80gb", "nodes": 4,
    "node": {"gpus": 8, "scale_up": {"type": "nvswitch", "bandwidth_GBps": 450, "latency_us": 0.7},
             "nics": 8, "nic_bandwidth_Gbps": 400, "pcie_bandwidth_GBps": 64},
    "fabric": {"type": "spine_leaf", "switch_radix": )" +
                                std::to_string(leaf_radix) + R"(, "oversubscription": )" +
                                std::to_string(oversubscription) +
                                R"(, "spine_radix": 64, "link_latency_us": 0.6, "technology": "infiniband"}
  })",
                            "oversubscription.json");
}

TEST(Oversubscription, TwoToOneRingAllReduceIsSlowerByTheBottleneck) {
  const ClusterSpec full = spine_leaf(2, 1.0);
  const ClusterSpec half = spine_leaf(3, 2.0);
  const Cluster full_cluster = Cluster::build(full);
  const Cluster half_cluster = Cluster::build(half);
  // The uplink bandwidth is halved: 32 leaves x 1 uplink against 16 x 1, at the same line rate.
  ASSERT_EQ(full_cluster.links().size() - half_cluster.links().size(), 2u * (32 - 16));

  const double n = 32, bytes = 1e9;
  const double d = 2 * (n - 1) / n * bytes;
  const double latency = 2 * (n - 1) * 2.4e-6;
  const double t1 = d / 8 / 50e9 + latency;
  const double t2 = d / 8 / 25e9 + latency;

  testing::CollectiveRun run;
  run.groups = {testing::iota_ranks(32)};
  run.bytes = bytes;
  const auto r1 = testing::run_collective(full, run);
  const auto r2 = testing::run_collective(half, run);
  EXPECT_NEAR(r1[0], t1, 0.005 * t1);
  EXPECT_NEAR(r2[0], t2, 0.005 * t2);
  EXPECT_NEAR(r2[0] - r1[0], d / 8 / 50e9, 0.01 * d / 8 / 50e9);

  // Where the bytes went: at 2:1 every leaf uplink carries two channels (2 x D / 8), at 1:1 one.
  const auto uplink_bytes = [](const Cluster& c, const std::vector<double>& r) {
    std::vector<double> out;
    for (std::size_t i = 0; i < c.links().size(); ++i) {
      const Link& l = c.links()[i];
      if (c.devices()[static_cast<std::size_t>(l.src)].kind == DeviceKind::leaf_switch &&
          c.devices()[static_cast<std::size_t>(l.dst)].kind == DeviceKind::spine_switch)
        out.push_back(r[i + 1]);
    }
    return out;
  };
  for (const double b : uplink_bytes(full_cluster, r1))
    EXPECT_NEAR(b, d / 8, 1e-6 * d);
  for (const double b : uplink_bytes(half_cluster, r2))
    EXPECT_NEAR(b, 2 * d / 8, 1e-6 * d);
}

}  // namespace
}  // namespace clustersim
