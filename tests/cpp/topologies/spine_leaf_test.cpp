// Spine-leaf (Ethernet): uplinks spread over a chosen number of spines; multi-plane fabrics: every NIC
// has one port per plane, planes are independent copies of the fabric.
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "topologies/cluster.hpp"
#include "topologies/fat_tree_builder.hpp"
#include "topology_test_util.hpp"

namespace clustersim {
namespace {

using namespace test;  // topology_test_util.hpp: specs, counts, routes

TEST(SpineLeaf, UplinksAreSpreadOverTheSpines) {
  // 8 nodes x 8 NICs = 64 NICs. Radix 24 at 2:1: u = 8, d = 16: 4 leaves; 4 spines with 8 / 4 = 2
  // parallel links from every leaf; a spine uses 4 x 2 = 8 of its ports.
  const Cluster c = Cluster::build(spec_from(
      node_spec(8, 8, 8, {{"type", "spine_leaf"}, {"switch_radix", 24}, {"oversubscription", 2}, {"spines", 4}})));
  EXPECT_EQ(count_devices(c, DeviceKind::leaf_switch), 4);
  EXPECT_EQ(count_devices(c, DeviceKind::spine_switch), 4);
  EXPECT_EQ(count_links(c, DeviceKind::leaf_switch, DeviceKind::spine_switch), 4 * 8);
  const FatTreeShape s = fat_tree_shape(c.spec());
  EXPECT_EQ(s.links_per_leaf_spine, 2);
  for (const Link& l : c.links()) {
    if (l.technology != LinkTechnology::nvlink && l.technology != LinkTechnology::pcie) {
      EXPECT_EQ(l.technology, LinkTechnology::ethernet);  // the spine_leaf default
    }
  }
  check_random_routes_are_shortest(c, 300);

  // ECMP treats the 8 parallel uplinks of leaf 0 (to 4 spines) as 8 equal-cost choices: 10,000 flows
  // from node 0's GPUs (NICs on leaf 0) to nodes 2..7 spread within 5% of 1,250 each.
  std::mt19937_64 rng(17);
  std::uniform_int_distribution<int> src(0, 7), dst(16, 63);
  std::map<int, int> per_uplink;
  std::vector<int> route;
  for (int i = 0; i < 10000; ++i) {
    route.clear();
    c.route(src(rng), dst(rng), rng(), route);
    for (const int id : route) {
      const Link& l = c.links()[static_cast<std::size_t>(id)];
      if (c.devices()[static_cast<std::size_t>(l.src)].name == "leaf0" &&
          c.devices()[static_cast<std::size_t>(l.dst)].kind == DeviceKind::spine_switch)
        ++per_uplink[id];
    }
  }
  ASSERT_EQ(per_uplink.size(), 8u);
  for (const auto& [id, n] : per_uplink)
    EXPECT_NEAR(n, 1250, 0.05 * 1250) << "uplink " << id;
}

TEST(SpineLeaf, SpineCountAndRadixAreChecked) {
  try {  // u = 8 uplinks cannot be spread evenly over 3 spines
    Cluster::build(spec_from(
        node_spec(8, 8, 8, {{"type", "spine_leaf"}, {"switch_radix", 24}, {"oversubscription", 2}, {"spines", 3}})));
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_EQ(e.json_path(), "/fabric/spines");
    EXPECT_EQ(e.message(),
              "expected a divisor of the 8 uplinks per leaf (each leaf spreads them evenly over the spines), got 3");
  }
  try {  // 4 leaves x 8 links on one spine of 16 ports
    Cluster::build(spec_from(node_spec(
        8, 8, 8,
        {{"type", "spine_leaf"}, {"switch_radix", 24}, {"oversubscription", 2}, {"spines", 1}, {"spine_radix", 16}})));
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_EQ(e.json_path(), "/fabric/spine_radix");
    EXPECT_EQ(e.message(), "spine radix 16 too small for 4 leaves (needs >= 32)");
  }
}

TEST(MultiPlane, EveryNicHasOnePortPerIndependentPlane) {
  // 8 nodes x 2 NICs of 400G, 2 planes: every NIC has two 200G ports, one per plane. Each plane is the
  // radix-8 fat-tree of 16 ports: d = u = 4, 4 leaves, 4 spines.
  const Cluster c =
      Cluster::build(spec_from(node_spec(8, 2, 2, {{"type", "fat_tree"}, {"switch_radix", 8}, {"planes", 2}})));
  EXPECT_EQ(count_devices(c, DeviceKind::leaf_switch), 2 * 4);
  EXPECT_EQ(count_devices(c, DeviceKind::spine_switch), 2 * 4);
  EXPECT_EQ(count_links(c, DeviceKind::nic, DeviceKind::leaf_switch), 2 * 16);
  std::map<std::string, std::set<std::string>> planes_of_nic;
  for (const Link& l : c.links()) {
    const Device& a = c.devices()[static_cast<std::size_t>(l.src)];
    const Device& b = c.devices()[static_cast<std::size_t>(l.dst)];
    if (a.kind == DeviceKind::nic && b.kind == DeviceKind::leaf_switch) {
      EXPECT_DOUBLE_EQ(l.bandwidth_Bps, 25e9);  // 400 Gb/s / 2 planes
      planes_of_nic[a.name].insert(b.name.substr(0, b.name.find('/')));
    }
    // Planes are independent: no switch of one plane links to a switch of the other.
    if (a.kind != DeviceKind::nic && b.kind != DeviceKind::nic && a.node < 0 && b.node < 0) {
      EXPECT_EQ(a.name.substr(0, 6), b.name.substr(0, 6)) << a.name << " - " << b.name;
    }
  }
  EXPECT_EQ(planes_of_nic.size(), 16u);
  for (const auto& [nic, planes] : planes_of_nic)
    EXPECT_EQ(planes, (std::set<std::string>{"plane0", "plane1"})) << nic;
  check_random_routes_are_shortest(c, 300);
  // ECMP spreads inter-node flows over both planes.
  int on_plane0 = 0;
  std::vector<int> route;
  for (std::uint64_t flow = 0; flow < 2000; ++flow) {
    route.clear();
    c.route(0, 15, flow, route);
    on_plane0 += c.devices()[static_cast<std::size_t>(c.links()[static_cast<std::size_t>(route[1])].dst)].name.rfind(
                     "plane0", 0) == 0;
  }
  EXPECT_NEAR(on_plane0, 1000, 100);
}

}  // namespace
}  // namespace clustersim
