// Fabric transports: how flows find their equal-cost links (RoCE hashes them, EFA sprays them), and
// NICs as servers wire them (several per GPU behind a PCIe switch, the route's lane picking the GPU's
// own NIC of that rail).
#include <algorithm>
#include <map>
#include <vector>

#include <gtest/gtest.h>

#include "topologies/cluster.hpp"
#include "topologies/fabric_transport.hpp"
#include "topology_test_util.hpp"

namespace clustersim {
namespace {

using test::node_spec;
using test::spec_from;

// The most flows any leaf-to-spine link carries when GPU g of nodes 0..3 sends to GPU g of nodes 4..7
// (32 flows out of leaf 0, which has 32 uplinks), routed one after the other with the flows in flight
// counted per link, as the backends route the transfers of a collective phase.
int most_flows_on_an_uplink(const Cluster& c) {
  std::vector<int> load(c.links().size(), 0), route;
  for (int src = 0; src < 32; ++src) {
    route.clear();
    c.route(src, src + 32, static_cast<std::uint64_t>(src), route, load);
    for (const int l : route)
      ++load[static_cast<std::size_t>(l)];
  }
  int most = 0;
  for (std::size_t l = 0; l < load.size(); ++l) {
    const Link& link = c.links()[l];
    if (c.devices()[static_cast<std::size_t>(link.src)].kind == DeviceKind::leaf_switch &&
        c.devices()[static_cast<std::size_t>(link.dst)].kind == DeviceKind::spine_switch)
      most = std::max(most, load[l]);
  }
  return most;
}

TEST(Transport, AnEfaFabricHasNoFlowCollisionsWhereRoceHashesThemTogether) {
  // 8 nodes x 8 GPUs x 8 NICs, radix 64 at 1:1: 2 leaves of 32 NICs and 32 uplinks each, 32 spines.
  const auto fabric = [](const char* transport) {
    return nlohmann::json{{"type", "fat_tree"}, {"switch_radix", 64}, {"transport", transport}};
  };
  const Cluster roce = Cluster::build(spec_from(node_spec(8, 8, 8, fabric("roce"))));
  const Cluster efa = Cluster::build(spec_from(node_spec(8, 8, 8, fabric("efa"))));
  // 32 flows hashed onto 32 uplinks all land apart with probability 32!/32^32 ~ 1e-13: ECMP collides.
  EXPECT_GE(most_flows_on_an_uplink(roce), 2);
  // Sprayed (and InfiniBand's adaptive routing alike): every flow on its own uplink.
  EXPECT_EQ(most_flows_on_an_uplink(efa), 1);
  const Cluster ib = Cluster::build(spec_from(node_spec(8, 8, 8, fabric("infiniband"))));
  EXPECT_EQ(most_flows_on_an_uplink(ib), 1);
}

TEST(Transport, EveryTransportNamesItsTechnologyRoutingAndSource) {
  for (const FabricTransport& t : fabric_transports()) {
    EXPECT_TRUE(t.technology == "infiniband" || t.technology == "ethernet") << t.id;
    EXPECT_TRUE(t.routing == "adaptive" || t.routing == "ecmp" || t.routing == "spray") << t.id;
    EXPECT_FALSE(t.source.empty()) << t.id;
    EXPECT_GE(t.message_latency_us, 0.0) << t.id;
  }
  EXPECT_EQ(default_fabric_transport("ethernet")->id, "roce");
  EXPECT_EQ(default_fabric_transport("infiniband")->id, "infiniband");
  EXPECT_EQ(default_fabric_transport("nvlink"), nullptr);
}

TEST(Transport, ALaneLeavesThroughTheGpusOwnNicOfThatRail) {
  // A p5-like node: 8 GPUs, 32 NICs, one PCIe switch per GPU holding the GPU and its NICs 4g..4g+3.
  nlohmann::json doc = node_spec(2, 8, 32, {{"type", "fat_tree"}, {"switch_radix", 64}, {"transport", "efa"}});
  doc["node"]["nic_bandwidth_Gbps"] = 100;
  doc["node"]["pcie_switches"] = 8;
  const Cluster c = Cluster::build(spec_from(doc));
  EXPECT_EQ(c.spec().node.nics_per_gpu(), 4);
  std::vector<int> route;
  for (int gpu = 0; gpu < 8; ++gpu) {
    std::map<int, int> source_nics, destination_nics;
    for (int lane = 0; lane < 4; ++lane) {
      route.clear();
      c.route(gpu, 8 + gpu, 0, route, {}, lane);
      for (const int l : route) {
        const Device& d = c.devices()[static_cast<std::size_t>(c.links()[static_cast<std::size_t>(l)].dst)];
        if (d.kind != DeviceKind::nic) continue;
        (d.node == 0 ? source_nics : destination_nics)[d.local_index] = lane;
      }
    }
    // Lane l leaves through NIC 4g + l and arrives through the peer's NIC 4g + l.
    ASSERT_EQ(source_nics.size(), 4u) << "GPU " << gpu;
    ASSERT_EQ(destination_nics.size(), 4u) << "GPU " << gpu;
    for (int lane = 0; lane < 4; ++lane) {
      EXPECT_EQ(source_nics.at(4 * gpu + lane), lane);
      EXPECT_EQ(destination_nics.at(4 * gpu + lane), lane);
    }
  }
}

}  // namespace
}  // namespace clustersim
