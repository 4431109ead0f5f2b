// Graph fabrics: devices and links as written, routes over them, bad graphs refused at their path.
#include <gtest/gtest.h>

#include "../spec_error_of.hpp"
#include "sim/core/error.hpp"
#include "topologies/cluster.hpp"
#include "topology_test_util.hpp"

namespace clustersim {
namespace {

using test::check_random_routes_are_shortest;
using test::node_spec;
using test::spec_from;

// 4 nodes of 1 GPU and 1 NIC; 4 switches in a ring, NIC n on switch n.
nlohmann::json ring(double bw01, double bw12, double bw23, double bw30) {
  nlohmann::json fabric = {{"type", "graph"}, {"devices", nlohmann::json::array()}, {"links", nlohmann::json::array()}};
  for (int i = 0; i < 4; ++i) {
    fabric["devices"].push_back({{"name", "sw" + std::to_string(i)}});
    fabric["links"].push_back({{"src", "node" + std::to_string(i) + "/nic0"}, {"dst", "sw" + std::to_string(i)}});
  }
  const double bw[] = {bw01, bw12, bw23, bw30};
  for (int i = 0; i < 4; ++i)
    fabric["links"].push_back({{"src", "sw" + std::to_string(i)},
                               {"dst", "sw" + std::to_string((i + 1) % 4)},
                               {"bandwidth_Gbps", bw[i]},
                               {"latency_us", 0.25 * (i + 1)}});
  return node_spec(4, 1, 1, fabric, "none");
}

TEST(GraphFabric, DevicesAndLinksAreBuiltAsWritten) {
  const Cluster c = Cluster::build(spec_from(ring(100, 200, 300, 400)));
  // 4 GPUs + 4 NICs + 4 switches; links: 4 GPU-NIC + 4 NIC-switch + 4 ring, all duplex.
  EXPECT_EQ(c.devices().size(), 12u);
  EXPECT_EQ(c.links().size(), 2u * 12u);
  EXPECT_EQ(c.devices()[8].name, "sw0");
  EXPECT_EQ(c.devices()[8].kind, DeviceKind::leaf_switch);
  // sw1 -> sw2: 200 Gb/s = 25 GB/s, 0.5 us, the fabric's technology (infiniband).
  bool found = false;
  for (const Link& l : c.links()) {
    if (c.devices()[static_cast<std::size_t>(l.src)].name == "sw1" &&
        c.devices()[static_cast<std::size_t>(l.dst)].name == "sw2") {
      found = true;
      EXPECT_DOUBLE_EQ(l.bandwidth_Bps, 25e9);
      EXPECT_DOUBLE_EQ(l.latency_s, 0.5e-6);
      EXPECT_EQ(l.technology, LinkTechnology::infiniband);
    }
  }
  EXPECT_TRUE(found);
  check_random_routes_are_shortest(c, 100);
  // GPU 0 -> GPU 2: GPU, NIC, sw0, sw1 or sw3, sw2, NIC, GPU: 6 links; both ways round are equal cost.
  EXPECT_EQ(c.route_hops(0, 2), 6);
  EXPECT_EQ(c.route_hops(0, 1), 5);
}

TEST(GraphFabric, OneWayLinksAndNonForwardingDevices) {
  // A one-way ring of 3 switches: GPU 0 reaches GPU 2 through sw1 (GPU, NIC, sw0, sw1, sw2, NIC, GPU),
  // and GPU 2 reaches GPU 0 in one switch hop (sw2 -> sw0).
  nlohmann::json fabric = {{"type", "graph"},
                           {"devices", {{{"name", "sw0"}}, {{"name", "sw1"}}, {{"name", "sw2"}}}},
                           {"links",
                            {{{"src", "node0/nic0"}, {"dst", "sw0"}},
                             {{"src", "node1/nic0"}, {"dst", "sw1"}},
                             {{"src", "node2/nic0"}, {"dst", "sw2"}},
                             {{"src", "sw0"}, {"dst", "sw1"}, {"duplex", false}},
                             {{"src", "sw1"}, {"dst", "sw2"}, {"duplex", false}},
                             {{"src", "sw2"}, {"dst", "sw0"}, {"duplex", false}}}}};
  const Cluster c = Cluster::build(spec_from(node_spec(3, 1, 1, fabric, "none")));
  EXPECT_EQ(c.links().size(), 2u * 6u + 3u);
  EXPECT_EQ(c.route_hops(0, 2), 6);
  EXPECT_EQ(c.route_hops(2, 0), 5);
  // The same graph with sw1 not forwarding: GPU 0 can no longer reach GPU 2.
  fabric["devices"][1]["forwards"] = false;
  const SpecError e = testing::spec_error_of([&] { Cluster::build(spec_from(node_spec(3, 1, 1, fabric, "none"))); });
  EXPECT_EQ(e.json_path(), "/fabric");
  EXPECT_EQ(e.message(), "the built cluster is not connected: GPU 0 (node0/gpu0) cannot reach GPU 1 (node1/gpu0)");
}

TEST(GraphFabric, DuplicateNamesAndGpuKindsAreRefused) {
  nlohmann::json doc = ring(100, 100, 100, 100);
  doc["fabric"]["devices"][2]["name"] = "node0/nic0";
  try {
    Cluster::build(spec_from(doc));
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_EQ(e.json_path(), "/fabric/devices/2/name");
    EXPECT_EQ(e.message(), "the device name \"node0/nic0\" is already taken");
  }
  doc = ring(100, 100, 100, 100);
  doc["fabric"]["devices"][1]["kind"] = "gpu";
  try {
    spec_from(doc);
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_EQ(e.json_path(), "/fabric/devices/1/kind");
  }
}

}  // namespace
}  // namespace clustersim
