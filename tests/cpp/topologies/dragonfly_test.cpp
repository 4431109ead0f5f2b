// Dragonfly: counts from the shape rule (dragonfly_builder.cpp), every pair of groups joined by
// floor(a h / (G - 1)) global links, minimal routes of at most one global hop.
#include <map>

#include <gtest/gtest.h>

#include "../spec_error_of.hpp"
#include "sim/core/error.hpp"
#include "topologies/cluster.hpp"
#include "topologies/dragonfly_builder.hpp"
#include "topology_test_util.hpp"

namespace clustersim {
namespace {

using test::check_random_routes_are_shortest;
using test::node_spec;
using test::spec_from;

nlohmann::json dragonfly(int groups, int routers, int global, int radix = 64) {
  return {{"type", "dragonfly"},
          {"groups", groups},
          {"routers_per_group", routers},
          {"global_links_per_router", global},
          {"switch_radix", radix}};
}

// Global links between every pair of groups, counted from the built graph (one direction).
std::map<std::pair<int, int>, int> global_links(const Cluster& c) {
  std::map<std::pair<int, int>, int> out;
  for (const Link& l : c.links()) {
    const Device& a = c.devices()[static_cast<std::size_t>(l.src)];
    const Device& b = c.devices()[static_cast<std::size_t>(l.dst)];
    if (a.kind == DeviceKind::leaf_switch && b.kind == DeviceKind::leaf_switch && a.group < b.group)
      ++out[{a.group, b.group}];
  }
  return out;
}

TEST(Dragonfly, CountsFollowTheShapeRule) {
  // G = 5 groups of a = 4 routers, h = 1 global link each: a h = 4 = G - 1 ports, 1 link per pair of
  // groups. 20 nodes x 2 NICs = 40 NICs on 20 routers: p = 2. Links: 40 NIC links + 5 x C(4, 2) = 30
  // local + C(5, 2) = 10 global, each duplex.
  const Cluster c = Cluster::build(spec_from(node_spec(20, 2, 2, dragonfly(5, 4, 1))));
  EXPECT_EQ(test::count_devices(c, DeviceKind::leaf_switch), 20);
  EXPECT_EQ(c.links().size(), 2u * (40 + 40 + 40 + 30 + 10));  // + 40 NVLink and 40 PCIe of the nodes
  const auto global = global_links(c);
  EXPECT_EQ(global.size(), 10u);
  for (const auto& [pair, n] : global)
    EXPECT_EQ(n, 1) << pair.first << "-" << pair.second;
  // Every router: 2 NICs, 3 local links, 1 global link.
  for (std::size_t i = 0; i < c.devices().size(); ++i) {
    if (c.devices()[i].kind == DeviceKind::leaf_switch) {
      EXPECT_EQ(c.out_links(static_cast<int>(i)).size(), 6u) << c.devices()[i].name;
    }
  }
  const DragonflyShape s = dragonfly_shape(c.spec());
  EXPECT_EQ(s.terminals_per_router, 2);
  EXPECT_EQ(s.links_per_group_pair, 1);
}

TEST(Dragonfly, SpareGlobalPortsGiveParallelGlobalLinks) {
  // G = 3, a = 4, h = 2: 8 global ports per group, 2 other groups: 4 links per pair.
  const Cluster c = Cluster::build(spec_from(node_spec(12, 2, 2, dragonfly(3, 4, 2))));
  const auto global = global_links(c);
  ASSERT_EQ(global.size(), 3u);
  for (const auto& [pair, n] : global)
    EXPECT_EQ(n, 4);
}

TEST(Dragonfly, RoutesAreMinimal) {
  // 9 groups of 4 routers with 2 global links each (1 link per pair). GPU -> NIC -> router, at most
  // local-global-local between routers, router -> NIC -> GPU: at most 7 links.
  const Cluster c = Cluster::build(spec_from(node_spec(36, 2, 2, dragonfly(9, 4, 2))));
  check_random_routes_are_shortest(c, 500);
  int longest = 0;
  for (int a = 0; a < c.gpu_count(); a += 3) {
    for (int b = 0; b < c.gpu_count(); ++b)
      longest = std::max(longest, c.route_hops(a, b));
  }
  EXPECT_EQ(longest, 7);
}

TEST(Dragonfly, BadShapesAreRefused) {
  // 8 nodes x 2 NICs on 4 groups of 2 routers: p = 2; a router needs 2 + 1 + 2 = 5 ports.
  EXPECT_NO_THROW(Cluster::build(spec_from(node_spec(8, 2, 2, dragonfly(4, 2, 2, 5)))));
  const SpecError e =
      testing::spec_error_of([&] { Cluster::build(spec_from(node_spec(8, 2, 2, dragonfly(4, 2, 2, 4)))); });
  EXPECT_EQ(e.json_path(), "/fabric/switch_radix");
  EXPECT_EQ(e.message(),
            "radix 4 too small for dragonfly routers with 2 NIC ports, 1 local and 2 global links (needs >= 5)");
}

}  // namespace
}  // namespace clustersim
