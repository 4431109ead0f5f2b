// Three-tier fat-trees against the closed forms of the k-ary fat-tree (Al-Fares et al. 2008) and the
// generalised rule of fat_tree_builder.cpp; ECMP over the aggregation and core uplinks; a
// 16,384-GPU cluster builds in well under a second and routes fast.
#include <iostream>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "../spec_error_of.hpp"
#include "sim/core/error.hpp"
#include "topologies/cluster.hpp"
#include "topologies/fat_tree_builder.hpp"
#include "topology_test_util.hpp"

namespace clustersim {
namespace {

using test::check_random_routes_are_shortest;
using test::count_devices;
using test::count_links;
using test::node_spec;
using test::spec_from;

// The k-ary fat-tree's hosts: k^3 / 4 nodes of one GPU and one NIC (no scale-up domain).
ClusterSpec k_ary(int k, double oversubscription = 1.0, int nodes = 0) {
  return spec_from(node_spec(
      nodes > 0 ? nodes : k * k * k / 4, 1, 1,
      {{"type", "fat_tree"}, {"tiers", 3}, {"switch_radix", k}, {"oversubscription", oversubscription}}, "none"));
}

TEST(FatTreeThreeTier, KAryFatTreeHasKCubedOverFourHostsAndFiveKSquaredOverFourSwitches) {
  for (const int k : {4, 6, 8, 12, 16}) {
    SCOPED_TRACE("k = " + std::to_string(k));
    const Cluster c = Cluster::build(k_ary(k));
    const long hosts = k * k * k / 4;
    EXPECT_EQ(c.gpu_count(), hosts);
    EXPECT_EQ(count_devices(c, DeviceKind::nic), hosts);
    // k pods of k/2 edge (leaf) and k/2 aggregation switches, (k/2)^2 cores: 5k^2/4 switches.
    EXPECT_EQ(count_devices(c, DeviceKind::leaf_switch), k * k / 2);
    EXPECT_EQ(count_devices(c, DeviceKind::spine_switch), k * k / 2);
    EXPECT_EQ(count_devices(c, DeviceKind::core_switch), k * k / 4);
    EXPECT_EQ(count_devices(c, DeviceKind::leaf_switch) + count_devices(c, DeviceKind::spine_switch) +
                  count_devices(c, DeviceKind::core_switch),
              5 * k * k / 4);
    // k^3/4 cables at each of the three levels (NIC-leaf, leaf-aggregation, aggregation-core).
    EXPECT_EQ(count_links(c, DeviceKind::nic, DeviceKind::leaf_switch), hosts);
    EXPECT_EQ(count_links(c, DeviceKind::leaf_switch, DeviceKind::spine_switch), hosts);
    EXPECT_EQ(count_links(c, DeviceKind::spine_switch, DeviceKind::core_switch), hosts);
    // Every switch uses exactly its k ports.
    for (std::size_t i = 0; i < c.devices().size(); ++i) {
      const DeviceKind kind = c.devices()[i].kind;
      if (kind == DeviceKind::leaf_switch || kind == DeviceKind::spine_switch || kind == DeviceKind::core_switch) {
        EXPECT_EQ(c.out_links(static_cast<int>(i)).size(), static_cast<std::size_t>(k)) << c.devices()[i].name;
      }
    }
    const FatTreeShape s = fat_tree_shape(c.spec());
    EXPECT_EQ(s.pods, k);
    EXPECT_EQ(s.links_per_aggregation_core, 1);
  }
}

TEST(FatTreeThreeTier, TwoToOneLeafTierHasHalfTheUplinkBandwidth) {
  // 96 hosts at radix 12. 1:1: d = u = 6, 16 leaves x 6 uplinks = 96. 2:1: u = 4, d = 8, 12 leaves x 4
  // uplinks = 48: half the leaf-uplink bandwidth for the same hosts.
  const auto uplink_Bps = [](const Cluster& c) {
    return test::link_bandwidth_Bps(c, DeviceKind::leaf_switch, DeviceKind::spine_switch);
  };
  const Cluster full = Cluster::build(k_ary(12, 1.0, 96));
  const Cluster half = Cluster::build(k_ary(12, 2.0, 96));
  EXPECT_DOUBLE_EQ(uplink_Bps(full), 96 * 50e9);
  EXPECT_DOUBLE_EQ(uplink_Bps(half), 48 * 50e9);
  EXPECT_EQ(count_devices(full, DeviceKind::leaf_switch), 16);
  EXPECT_EQ(count_devices(half, DeviceKind::leaf_switch), 12);
  // The aggregation tier stays 1:1 (A = E = 6 leaves per pod): 2 pods of 6 leaves at 1:1 and 2:1.
  const FatTreeShape s = fat_tree_shape(half.spec());
  EXPECT_EQ(s.downlinks_per_leaf, 8);
  EXPECT_EQ(s.uplinks_per_leaf, 4);
  EXPECT_EQ(s.pods, 2);
  EXPECT_EQ(s.uplinks_per_aggregation, 6);
}

TEST(FatTreeThreeTier, CoresAreSizedToThePodsPresent) {
  // 2048 DGX nodes on radix 64, rail-optimized: d = u = 32, 64 groups of 32 nodes, 512 leaves; pods of
  // E = 32 leaves (4 groups): 16 pods; A = 32; m = 4 (16 m <= 64), C = 8: 32 x 8 = 256 cores, each
  // with 16 pods x 4 links = 64 ports.
  const ClusterSpec spec = load_cluster_spec("dgx-h100-superpod", {{"nodes", "2048"}, {"fabric.tiers", "3"}});
  const FatTreeShape s = fat_tree_shape(spec);
  EXPECT_EQ(s.leaves, 512);
  EXPECT_EQ(s.leaves_per_pod, 32);
  EXPECT_EQ(s.pods, 16);
  EXPECT_EQ(s.spines, 512);
  EXPECT_EQ(s.links_per_aggregation_core, 4);
  EXPECT_EQ(s.cores_per_group, 8);
  EXPECT_EQ(s.cores, 256);
  // Rail-optimized pods hold every rail of whole node groups: NIC j of node n on leaf (n / 32) * 8 + j.
  EXPECT_EQ(fat_tree_leaf_of(s, spec, 0, 0), 0);
  EXPECT_EQ(fat_tree_leaf_of(s, spec, 31, 7), 7);
  EXPECT_EQ(fat_tree_leaf_of(s, spec, 32, 3), 11);
  EXPECT_EQ(fat_tree_leaf_of(s, spec, 2047, 7), 511);
}

TEST(FatTreeThreeTier, RoutesAreShortestAndCrossPodRoutesUseACore) {
  const Cluster c = Cluster::build(k_ary(4));
  check_random_routes_are_shortest(c, 500);
  // Hosts 0 and 15 are in pods 0 and 3: host -> NIC -> leaf -> aggregation -> core -> aggregation -> leaf
  // -> NIC -> host is 8 links, the fourth a core uplink.
  std::vector<int> route;
  c.route(0, 15, 3, route);
  ASSERT_EQ(route.size(), 8u);
  EXPECT_EQ(c.devices()[static_cast<std::size_t>(c.links()[static_cast<std::size_t>(route[3])].dst)].kind,
            DeviceKind::core_switch);
  EXPECT_EQ(c.route_hops(0, 1), 4);  // same leaf: host -> NIC -> leaf -> NIC -> host
  EXPECT_EQ(c.route_hops(0, 2), 6);  // same pod, another leaf
  check_random_routes_are_shortest(Cluster::build(load_cluster_spec("dgx-a100-superpod")), 300);
}

TEST(FatTreeThreeTier, EcmpSpreadsTenThousandFlowsOverAggregationAndCoreUplinks) {
  // k = 4: leaf 0 holds hosts 0 and 1 and has 2 uplinks (one per aggregation switch of pod 0); each
  // aggregation switch has 2 core uplinks. 10,000 flows from hosts 0-1 to the other pods (hosts 4-15)
  // cross one leaf uplink (5,000 expected on each) and one of the 4 aggregation-core links of pod 0
  // (2,500 expected on each): every count within 5% of even.
  const Cluster c = Cluster::build(k_ary(4));
  std::mt19937_64 rng(31);
  std::uniform_int_distribution<int> src(0, 1), dst(4, 15);
  std::map<int, int> leaf_up, core_up;
  std::vector<int> route;
  constexpr int k_flows = 10000;
  for (int i = 0; i < k_flows; ++i) {
    route.clear();
    c.route(src(rng), dst(rng), rng(), route);
    for (const int id : route) {
      const Link& l = c.links()[static_cast<std::size_t>(id)];
      const DeviceKind from = c.devices()[static_cast<std::size_t>(l.src)].kind;
      const DeviceKind to = c.devices()[static_cast<std::size_t>(l.dst)].kind;
      if (from == DeviceKind::leaf_switch && to == DeviceKind::spine_switch) ++leaf_up[id];
      if (from == DeviceKind::spine_switch && to == DeviceKind::core_switch) ++core_up[id];
    }
  }
  ASSERT_EQ(leaf_up.size(), 2u);
  ASSERT_EQ(core_up.size(), 4u);
  for (const auto& [id, n] : leaf_up)
    EXPECT_NEAR(n, k_flows / 2, 0.05 * k_flows / 2) << "leaf uplink " << id;
  for (const auto& [id, n] : core_up)
    EXPECT_NEAR(n, k_flows / 4, 0.05 * k_flows / 4) << "core uplink " << id;
}

TEST(FatTreeThreeTier, RadixTooSmallForThreeTiersNamesTheRadixNeeded) {
  // 4-ary: at most 4 pods = 16 hosts. 17 hosts need a 5th pod: radix 5 has E = 2 leaves of d = 2 per
  // pod, 9 leaves -> 5 pods <= 5.
  const SpecError e = testing::spec_error_of([&] { Cluster::build(k_ary(4, 1.0, 17)); });
  EXPECT_EQ(e.json_path(), "/fabric/switch_radix");
  EXPECT_EQ(e.message(), "radix 4 too small for 17 NICs with 3 tiers (needs >= 5)");
}

TEST(FatTreeThreeTier, SixteenThousandGpusBuildAndRouteOverEightHops) {
  // Speed is measured by bench/bench_topology (build time, routes per second), not here.
  // 2,048 DGX H100 nodes (16,384 GPUs) on a rail-optimized 3-tier fat-tree of radix 64.
  // Devices: 16384 GPUs + 2048 NVSwitches + 16384 NICs + 512 leaves + 512 aggregation + 256 cores.
  // Links: 2 * (16384 * 3 + 512 * 32 + 512 * 32) = 163840.
  const ClusterSpec spec = load_cluster_spec("dgx-h100-superpod", {{"nodes", "2048"}, {"fabric.tiers", "3"}});
  const Cluster c = Cluster::build(spec);
  EXPECT_EQ(c.devices().size(), 16384u + 2048u + 16384u + 512u + 512u + 256u);
  EXPECT_EQ(c.links().size(), 163840u);

  constexpr int k_routes = 20000;
  const std::size_t hops = test::random_route_hops(c, k_routes, 5);
  // Almost every random pair crosses pods: 8 links (GPU, NIC, leaf, aggregation, core and back).
  EXPECT_GT(hops, static_cast<std::size_t>(7.5 * k_routes));
  check_random_routes_are_shortest(c, 50);
}

}  // namespace
}  // namespace clustersim
