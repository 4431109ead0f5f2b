// Every preset builds, with the device and link counts of the fat-tree rule worked out by hand.
#include <gtest/gtest.h>

#include "topologies/cluster.hpp"
#include "topology_test_util.hpp"

namespace clustersim {
namespace {

using test::count_devices;

struct Expected {
  long gpus, nvswitches, nics, leaves, spines;
  std::size_t devices, links;
};

void expect_counts(const Cluster& c, const Expected& e) {
  EXPECT_EQ(c.gpu_count(), e.gpus);
  EXPECT_EQ(count_devices(c, DeviceKind::gpu), e.gpus);
  EXPECT_EQ(count_devices(c, DeviceKind::nvswitch), e.nvswitches);
  EXPECT_EQ(count_devices(c, DeviceKind::nic), e.nics);
  EXPECT_EQ(count_devices(c, DeviceKind::leaf_switch), e.leaves);
  EXPECT_EQ(count_devices(c, DeviceKind::spine_switch), e.spines);
  EXPECT_EQ(c.devices().size(), e.devices);
  EXPECT_EQ(c.links().size(), e.links);
}

TEST(Presets, DgxH100SuperpodCounts) {
  // 32 nodes x 8: 256 GPUs and NICs. Radix 64, 1:1: d = u = 32. Rail-optimized: ceil(32 / 32) = 1 leaf
  // per rail, 8 leaves; 32 spines. Links: 2 * (256 NVLink + 256 PCIe + 256 NIC-leaf + 8 * 32) = 2048.
  const Cluster c = Cluster::build(load_cluster_spec("dgx-h100-superpod"));
  expect_counts(c, {256, 32, 256, 8, 32, 256 + 32 + 256 + 8 + 32, 2048});
  EXPECT_EQ(c.gpus_per_node(), 8);
  EXPECT_EQ(c.node_of_gpu(255), 31);
  // Device index == GPU rank: GPU g of node n is device n * 8 + g.
  EXPECT_EQ(c.devices()[8 * 5 + 3].name, "node5/gpu3");
  EXPECT_FALSE(c.devices()[8 * 5 + 3].forwards);
}

TEST(Presets, DgxH100SuperpodAt256Nodes) {
  // 2048 GPUs and NICs. d = 32: ceil(256 / 32) = 8 leaves per rail, 64 leaves: exactly the 64 ports of
  // each of the 32 spines. Links: 2 * (2048 * 3 + 64 * 32) = 16384.
  const Cluster c = Cluster::build(load_cluster_spec("dgx-h100-superpod", {{"nodes", "256"}}));
  expect_counts(c, {2048, 256, 2048, 64, 32, 2048 + 256 + 2048 + 64 + 32, 16384});
  for (const Device& d : c.devices()) {
    if (d.kind == DeviceKind::spine_switch) {
      EXPECT_EQ(c.out_links(static_cast<int>(&d - c.devices().data())).size(), 64u);
    }
  }
}

TEST(Presets, DgxA100SuperpodCounts) {
  // 20 nodes x 8: 160 GPUs and NICs. Radix 40, 1:1: d = u = 20; 1 leaf per rail, 8 leaves; 20 spines.
  // Links: 2 * (160 * 3 + 8 * 20) = 1280.
  const Cluster c = Cluster::build(load_cluster_spec("dgx-a100-superpod"));
  expect_counts(c, {160, 20, 160, 8, 20, 160 + 20 + 160 + 8 + 20, 1280});
  for (const Link& l : c.links()) {
    if (l.technology == LinkTechnology::infiniband) {
      EXPECT_DOUBLE_EQ(l.bandwidth_Bps, 25e9);
    }  // 200 Gb/s
    if (l.technology == LinkTechnology::nvlink) {
      EXPECT_DOUBLE_EQ(l.bandwidth_Bps, 300e9);
    }
    if (l.technology == LinkTechnology::pcie) {
      EXPECT_DOUBLE_EQ(l.bandwidth_Bps, 32e9);
    }
  }
}

TEST(Presets, DgxA100SuperpodLargestTwoTierSize) {
  // Radix 40 holds 40 * 40 / 2 = 800 NICs in two tiers: 100 nodes (5 leaves per rail, 40 leaves).
  const Cluster c = Cluster::build(load_cluster_spec("dgx-a100-superpod", {{"nodes", "100"}}));
  expect_counts(c, {800, 100, 800, 40, 20, 800 + 100 + 800 + 40 + 20, 2 * (800 * 3 + 40 * 20)});
}

TEST(Presets, DgxH100IsOneNodeWithoutFabric) {
  // 8 GPUs, 1 NVSwitch, 8 unconnected NICs. Links: 2 * (8 NVLink + 8 PCIe) = 32.
  const Cluster c = Cluster::build(load_cluster_spec("dgx-h100"));
  expect_counts(c, {8, 1, 8, 0, 0, 8 + 1 + 8, 32});
}

TEST(Presets, EveryPresetBuilds) {
  for (const auto& name : cluster_preset_names()) {
    const Cluster c = Cluster::build(load_cluster_spec(name));
    EXPECT_GT(c.gpu_count(), 0) << name;
    EXPECT_EQ(c.spec().name, name);
  }
}

}  // namespace
}  // namespace clustersim
