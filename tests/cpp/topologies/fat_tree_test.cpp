// Fat-tree shapes against hand-worked closed forms (fat_tree_builder.cpp states the rule):
//   u = floor(k / (1 + r)), d = floor(r * u), L = ceil(NICs / d) (or nics * ceil(nodes / d) when
//   rail-optimized), S = u (0 for a single leaf), directed links = 2 * (GPUs [scale-up] + GPUs [PCIe to
//   the NIC, one per GPU when nics <= gpus] + NICs + L * S).
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "../spec_error_of.hpp"
#include "sim/core/error.hpp"
#include "topologies/cluster.hpp"
#include "topologies/fat_tree_builder.hpp"
#include "topology_test_util.hpp"

namespace clustersim {
namespace {

using test::count_devices;
using test::count_links;
using test::fat_tree_spec;
using test::leaf_of_nic;

TEST(FatTree, NonRailCountsMatchTheClosedForm) {
  // 6 nodes x 2 GPUs x 2 NICs = 12 NICs; radix 8, 1:1: u = d = 4; L = ceil(12 / 4) = 3; S = 4.
  const Cluster c = Cluster::build(fat_tree_spec(6, 2, 2, 8, 1.0, false));
  EXPECT_EQ(c.gpu_count(), 12);
  EXPECT_EQ(count_devices(c, DeviceKind::gpu), 12);
  EXPECT_EQ(count_devices(c, DeviceKind::nvswitch), 6);
  EXPECT_EQ(count_devices(c, DeviceKind::nic), 12);
  EXPECT_EQ(count_devices(c, DeviceKind::leaf_switch), 3);
  EXPECT_EQ(count_devices(c, DeviceKind::spine_switch), 4);
  EXPECT_EQ(c.devices().size(), 12u + 6u + 12u + 3u + 4u);
  EXPECT_EQ(count_links(c, DeviceKind::nic, DeviceKind::leaf_switch), 12);
  EXPECT_EQ(count_links(c, DeviceKind::leaf_switch, DeviceKind::spine_switch), 3 * 4);
  EXPECT_EQ(count_links(c, DeviceKind::spine_switch, DeviceKind::leaf_switch), 3 * 4);
  EXPECT_EQ(c.links().size(), 2u * (12 + 12 + 12 + 3 * 4));  // = 96

  // NICs fill leaves in (node, nic) order: NIC j of node n on leaf (2n + j) / 4.
  for (const Device& d : c.devices()) {
    if (d.kind != DeviceKind::nic) continue;
    const int nic = static_cast<int>(&d - c.devices().data());
    const int expected_leaf = (2 * d.node + d.local_index) / 4;
    EXPECT_EQ(c.devices()[static_cast<std::size_t>(leaf_of_nic(c, nic))].name, "leaf" + std::to_string(expected_leaf))
        << d.name;
  }
  // Each spine has one link to each leaf, each leaf one to each spine.
  for (const Device& d : c.devices()) {
    const int id = static_cast<int>(&d - c.devices().data());
    if (d.kind == DeviceKind::spine_switch) {
      EXPECT_EQ(c.out_links(id).size(), 3u) << d.name;
    }
    if (d.kind == DeviceKind::leaf_switch) {
      EXPECT_EQ(c.out_links(id).size(), 4u + 4u) << d.name;
    }
  }
}

TEST(FatTree, RailOptimizedPutsNicIOfEveryNodeOnRailI) {
  // 6 nodes x 4 GPUs x 4 NICs, radix 8: d = 4, ceil(6 / 4) = 2 leaves per rail, L = 4 * 2 = 8, S = 4.
  const Cluster c = Cluster::build(fat_tree_spec(6, 4, 4, 8, 1.0, true));
  EXPECT_EQ(count_devices(c, DeviceKind::nic), 24);
  EXPECT_EQ(count_devices(c, DeviceKind::leaf_switch), 8);
  EXPECT_EQ(count_devices(c, DeviceKind::spine_switch), 4);
  EXPECT_EQ(c.links().size(), 2u * (24 + 24 + 24 + 8 * 4));

  // NIC j of node n on leaf 2j + n / 4: rail j owns leaves 2j and 2j + 1, and no leaf mixes rails.
  std::map<int, std::set<int>> rails_of_leaf;
  for (const Device& d : c.devices()) {
    if (d.kind != DeviceKind::nic) continue;
    const int nic = static_cast<int>(&d - c.devices().data());
    const Device& leaf = c.devices()[static_cast<std::size_t>(leaf_of_nic(c, nic))];
    EXPECT_EQ(leaf.local_index, 2 * d.local_index + d.node / 4) << d.name;
    rails_of_leaf[leaf.local_index].insert(d.local_index);
  }
  EXPECT_EQ(rails_of_leaf.size(), 8u);
  for (const auto& [leaf, rails] : rails_of_leaf)
    EXPECT_EQ(rails.size(), 1u) << "leaf" << leaf;
  // Spot check by name: NIC 1 of node 5 is on leaf 2 * 1 + 5 / 4 = 3.
  for (const Device& d : c.devices()) {
    if (d.name == "node5/nic1") {
      const int nic = static_cast<int>(&d - c.devices().data());
      EXPECT_EQ(c.devices()[static_cast<std::size_t>(leaf_of_nic(c, nic))].name, "leaf3");
    }
  }
}

TEST(FatTree, TwoToOneHasHalfTheLeafUplinkBandwidthOfOneToOne) {
  // 24 NICs at radix 12. 1:1: u = d = 6, L = 4, S = 6: 24 uplinks. 2:1: u = 4, d = 8, L = 3, S = 4: 12.
  const Cluster full = Cluster::build(fat_tree_spec(6, 4, 4, 12, 1.0, false));
  const Cluster half = Cluster::build(fat_tree_spec(6, 4, 4, 12, 2.0, false));
  const auto uplink_Bps = [](const Cluster& c) {
    return test::link_bandwidth_Bps(c, DeviceKind::leaf_switch, DeviceKind::spine_switch);
  };
  const double line_Bps = 400e9 / 8;
  EXPECT_DOUBLE_EQ(uplink_Bps(full), 24 * line_Bps);
  EXPECT_DOUBLE_EQ(uplink_Bps(half), 12 * line_Bps);
  EXPECT_EQ(count_devices(full, DeviceKind::leaf_switch), 4);
  EXPECT_EQ(count_devices(half, DeviceKind::leaf_switch), 3);
  EXPECT_EQ(count_devices(full, DeviceKind::spine_switch), 6);
  EXPECT_EQ(count_devices(half, DeviceKind::spine_switch), 4);
  // Per leaf: 8 NIC ports against 4 uplinks.
  const FatTreeShape s = fat_tree_shape(fat_tree_spec(6, 4, 4, 12, 2.0, false));
  EXPECT_EQ(s.downlinks_per_leaf, 8);
  EXPECT_EQ(s.uplinks_per_leaf, 4);
}

TEST(FatTree, ShapeRuleAtRadix64) {
  // The documented examples: 1:1 -> 32/32, 2:1 -> 42/21, 3:1 -> 48/16.
  const auto at = [](double r) { return fat_tree_shape(fat_tree_spec(2, 8, 8, 64, r, false)); };
  EXPECT_EQ(at(1.0).downlinks_per_leaf, 32);
  EXPECT_EQ(at(1.0).uplinks_per_leaf, 32);
  EXPECT_EQ(at(2.0).downlinks_per_leaf, 42);
  EXPECT_EQ(at(2.0).uplinks_per_leaf, 21);
  EXPECT_EQ(at(3.0).downlinks_per_leaf, 48);
  EXPECT_EQ(at(3.0).uplinks_per_leaf, 16);
}

TEST(FatTree, SingleLeafHasNoSpines) {
  // 4 nodes x 8 NICs = 32 NICs = one radix-64 leaf (d = 32).
  const Cluster c = Cluster::build(fat_tree_spec(4, 8, 8, 64, 1.0, false));
  EXPECT_EQ(count_devices(c, DeviceKind::leaf_switch), 1);
  EXPECT_EQ(count_devices(c, DeviceKind::spine_switch), 0);
  EXPECT_EQ(c.links().size(), 2u * (32 + 32 + 32));
}

TEST(FatTree, LinkPropertiesComeFromTheSpec) {
  const Cluster c = Cluster::build(fat_tree_spec(2, 8, 8, 64, 1.0, true));
  for (const Link& l : c.links()) {
    const DeviceKind a = c.devices()[static_cast<std::size_t>(l.src)].kind;
    const DeviceKind b = c.devices()[static_cast<std::size_t>(l.dst)].kind;
    if (a == DeviceKind::nvswitch || b == DeviceKind::nvswitch) {
      EXPECT_EQ(l.technology, LinkTechnology::nvlink);
      EXPECT_DOUBLE_EQ(l.bandwidth_Bps, 450e9);
      EXPECT_DOUBLE_EQ(l.latency_s, 0.35e-6);
    } else if (a == DeviceKind::gpu || b == DeviceKind::gpu) {
      EXPECT_EQ(l.technology, LinkTechnology::pcie);
      EXPECT_DOUBLE_EQ(l.bandwidth_Bps, 64e9);
      EXPECT_DOUBLE_EQ(l.latency_s, 0.0);
    } else {
      EXPECT_EQ(l.technology, LinkTechnology::infiniband);
      EXPECT_DOUBLE_EQ(l.bandwidth_Bps, 50e9);
      EXPECT_DOUBLE_EQ(l.latency_s, 0.6e-6);
    }
  }
}

TEST(FatTree, SharedNicsAndSpareNics) {
  // 8 GPUs on 4 NICs: GPU g on NIC g * 4 / 8 = g / 2. 2 GPUs on 4 NICs: NIC j on GPU j * 2 / 4 = j / 2.
  const Cluster shared = Cluster::build(fat_tree_spec(2, 8, 4, 64, 1.0, false));
  EXPECT_EQ(count_links(shared, DeviceKind::gpu, DeviceKind::nic), 16);
  for (int g = 0; g < 8; ++g) {
    for (const int id : shared.out_links(g)) {
      const Device& head = shared.devices()[static_cast<std::size_t>(shared.links()[static_cast<std::size_t>(id)].dst)];
      if (head.kind == DeviceKind::nic) {
        EXPECT_EQ(head.name, "node0/nic" + std::to_string(g / 2));
      }
    }
  }
  const Cluster spare = Cluster::build(fat_tree_spec(2, 2, 4, 64, 1.0, false));
  EXPECT_EQ(count_links(spare, DeviceKind::gpu, DeviceKind::nic), 8);  // every NIC has a GPU
  EXPECT_EQ(spare.out_links(0).size(), 1u + 2u);                       // NVSwitch + NICs 0 and 1
}

TEST(FatTree, PcieScaleUpUsesOnePcieSwitchPerNode) {
  const Cluster c = Cluster::build(fat_tree_spec(2, 4, 1, 64, 1.0, false, "pcie"));
  EXPECT_EQ(count_devices(c, DeviceKind::pcie_switch), 2);
  EXPECT_EQ(count_devices(c, DeviceKind::nvswitch), 0);
  EXPECT_EQ(count_links(c, DeviceKind::gpu, DeviceKind::pcie_switch), 8);
  for (const Link& l : c.links()) {
    if (c.devices()[static_cast<std::size_t>(l.dst)].kind == DeviceKind::pcie_switch) {
      EXPECT_EQ(l.technology, LinkTechnology::pcie);
      EXPECT_DOUBLE_EQ(l.bandwidth_Bps, 450e9);  // scale_up.bandwidth_GBps: the domain's per-GPU figure
    }
  }
}

TEST(Cluster, DisconnectedGraphIsRefusedNamingAPair) {
  ClusterSpec spec = fat_tree_spec(2, 1, 1, 64, 1.0, false);
  Cluster c(spec);
  c.add_device(Device{.kind = DeviceKind::gpu, .name = "node0/gpu0", .node = 0, .forwards = false});
  c.add_device(Device{.kind = DeviceKind::gpu, .name = "node1/gpu0", .node = 1, .forwards = false});
  const int sw = c.add_device(Device{.kind = DeviceKind::leaf_switch, .name = "leaf0"});
  c.add_duplex_link(0, sw, 1e9, 0.0, LinkTechnology::ethernet);
  c.add_link(Link{sw, 1, 1e9, 0.0, LinkTechnology::ethernet});  // GPU 1 can receive but not send
  const SpecError e = testing::spec_error_of([&] { c.finalize(); });
  EXPECT_EQ(e.json_path(), "/fabric");
  EXPECT_EQ(e.message(), "the built cluster is not connected: GPU 1 (node1/gpu0) cannot reach GPU 0 (node0/gpu0)");
}

TEST(Cluster, PathsMayNotPassThroughAGpu) {
  // GPU 0 - GPU 1 - GPU 2 in a chain of direct links: 0 and 2 are joined only through GPU 1.
  ClusterSpec spec = fat_tree_spec(3, 1, 1, 64, 1.0, false);
  Cluster c(spec);
  for (int g = 0; g < 3; ++g)
    c.add_device(Device{.kind = DeviceKind::gpu, .name = "gpu" + std::to_string(g), .node = g, .forwards = false});
  c.add_duplex_link(0, 1, 1e9, 0.0, LinkTechnology::nvlink);
  c.add_duplex_link(1, 2, 1e9, 0.0, LinkTechnology::nvlink);
  const SpecError e = testing::spec_error_of([&] { c.finalize(); });
  EXPECT_EQ(e.json_path(), "/fabric");
  EXPECT_NE(e.message().find("GPU 0 (gpu0) cannot reach GPU 2 (gpu2)"), std::string::npos) << e.what();
}

TEST(Cluster, DirectGpuLinksAreRoutable) {
  // Two GPUs joined by one direct link each way: the fast check finds no switch, the exact one passes.
  ClusterSpec spec = fat_tree_spec(2, 1, 1, 64, 1.0, false);
  Cluster c(spec);
  c.add_device(Device{.kind = DeviceKind::gpu, .name = "gpu0", .node = 0, .forwards = false});
  c.add_device(Device{.kind = DeviceKind::gpu, .name = "gpu1", .node = 1, .forwards = false});
  const int ab = c.add_duplex_link(0, 1, 1e9, 2e-6, LinkTechnology::nvlink);
  c.finalize();
  std::vector<int> route;
  c.route(0, 1, 7, route);
  EXPECT_EQ(route, std::vector<int>{ab});
  EXPECT_DOUBLE_EQ(c.route_latency_s(route), 2e-6);
  EXPECT_THROW(c.add_device(Device{.kind = DeviceKind::gpu, .name = "late"}), std::logic_error);
}

TEST(Cluster, ToStringNamesEveryKind) {
  EXPECT_STREQ(to_string(DeviceKind::gpu), "gpu");
  EXPECT_STREQ(to_string(DeviceKind::nvswitch), "nvswitch");
  EXPECT_STREQ(to_string(DeviceKind::nic), "nic");
  EXPECT_STREQ(to_string(DeviceKind::pcie_switch), "pcie_switch");
  EXPECT_STREQ(to_string(DeviceKind::leaf_switch), "leaf_switch");
  EXPECT_STREQ(to_string(DeviceKind::spine_switch), "spine_switch");
  EXPECT_STREQ(to_string(DeviceKind::core_switch), "core_switch");
  EXPECT_STREQ(to_string(DeviceKind::host_bridge), "host_bridge");
  EXPECT_EQ(device_kind_named("host_bridge"), DeviceKind::host_bridge);
  EXPECT_EQ(device_kind_named("spine_switch"), DeviceKind::spine_switch);
  EXPECT_EQ(device_kind_named("router"), std::nullopt);
  EXPECT_EQ(link_technology_named("ethernet"), LinkTechnology::ethernet);
  EXPECT_EQ(link_technology_named("roce"), std::nullopt);
  EXPECT_STREQ(to_string(LinkTechnology::nvlink), "nvlink");
  EXPECT_STREQ(to_string(LinkTechnology::pcie), "pcie");
  EXPECT_STREQ(to_string(LinkTechnology::infiniband), "infiniband");
  EXPECT_STREQ(to_string(LinkTechnology::ethernet), "ethernet");
}

}  // namespace
}  // namespace clustersim
