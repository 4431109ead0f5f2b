// Scale-up domains: NVSwitch (per node, or rack-scale as in NVL72), the DGX-1 hybrid cube-mesh, NVLink
// bridges between pairs, PCIe trees with a host bridge; the figures of the NVLink generations.
#include <map>

#include <gtest/gtest.h>

#include "../spec_error_of.hpp"
#include "sim/core/error.hpp"
#include "topologies/cluster.hpp"
#include "topologies/node_builder.hpp"
#include "topologies/scale_up_generation.hpp"
#include "topology_test_util.hpp"

namespace clustersim {
namespace {

using test::check_random_routes_are_shortest;
using test::count_devices;
using test::count_links;
using test::spec_from;

const Link& link(const Cluster& c, int id) {
  return c.links()[static_cast<std::size_t>(id)];
}
const Device& head(const Cluster& c, int id) {
  return c.devices()[static_cast<std::size_t>(link(c, id).dst)];
}

TEST(ScaleUpGenerations, VendorFiguresPerGpuPerDirection) {
  // NVLink bandwidth is quoted bidirectional: 300 / 600 / 900 / 1800 GB/s for NVLink 2 / 3 / 4 / 5.
  const std::map<std::string, double> expected = {{"nvlink2", 150}, {"nvlink3", 300}, {"nvlink4", 450},
                                                  {"nvlink5", 900}, {"pcie4", 32},    {"pcie5", 64}};
  for (const auto& [id, GBps] : expected) {
    const ScaleUpGeneration* g = find_scale_up_generation(id);
    ASSERT_NE(g, nullptr) << id;
    EXPECT_DOUBLE_EQ(g->bandwidth_GBps, GBps) << id;
    EXPECT_FALSE(g->source.empty()) << id;
  }
  // NVL72: 18 NVSwitch chips for 72 GPUs; DGX H100: 4 for 8.
  EXPECT_DOUBLE_EQ(find_scale_up_generation("nvlink5")->nvswitch_chips_per_gpu * 72, 18.0);
  EXPECT_DOUBLE_EQ(find_scale_up_generation("nvlink4")->nvswitch_chips_per_gpu * 8, 4.0);
  EXPECT_EQ(find_scale_up_generation("nvlink6"), nullptr);
}

TEST(ScaleUp, RackScaleNvlinkDomainSpansItsTrays) {
  // 36 trays of 4 GPUs, NVL72 domains: 2 domains of 18 trays, each one NVSwitch with 72 GPU links.
  nlohmann::json doc = test::node_spec(36, 4, 4, {{"type", "rail_optimized"}, {"switch_radix", 64}});
  doc["node"]["scale_up"] = {{"type", "nvswitch"}, {"generation", "nvlink5"}, {"domain_gpus", 72}};
  const Cluster nvl = Cluster::build(spec_from(doc));
  EXPECT_EQ(count_devices(nvl, DeviceKind::nvswitch), 2);
  EXPECT_EQ(count_links(nvl, DeviceKind::gpu, DeviceKind::nvswitch), 144);
  const int domain0 = link(nvl, nvl.out_links(0)[0]).dst;
  EXPECT_EQ(nvl.devices()[static_cast<std::size_t>(domain0)].name, "domain0/nvswitch");
  EXPECT_EQ(nvl.devices()[static_cast<std::size_t>(domain0)].node, -1);
  // GPU 0 (tray 0) to GPU 71 (tray 17): one NVLink domain, 2 hops at 900 GB/s.
  std::vector<int> route;
  nvl.route(0, 71, 5, route);
  ASSERT_EQ(route.size(), 2u);
  EXPECT_EQ(link(nvl, route[0]).technology, LinkTechnology::nvlink);
  EXPECT_DOUBLE_EQ(link(nvl, route[0]).bandwidth_Bps, 900e9);
  // GPU 0 to GPU 72 (tray 18, the other domain): through the NICs and the fabric (same rail: 4 links).
  EXPECT_EQ(nvl.route_hops(0, 72), 4);
  check_random_routes_are_shortest(nvl, 300);
}

TEST(ScaleUp, HybridCubeMeshOfDgx1) {
  // DGX-1V: 8 V100 on the hybrid cube-mesh (6 NVLink 2 bricks of 25 GB/s each), 4 PCIe switches with 2
  // GPUs and 1 NIC each, one host bridge.
  nlohmann::json doc = test::node_spec(1, 8, 4, {{"type", "single_node"}});
  doc["node"]["scale_up"] = {{"type", "nvlink_mesh"}, {"generation", "nvlink2"}};
  doc["node"]["pcie_switches"] = 4;
  const Cluster c = Cluster::build(spec_from(doc));
  EXPECT_EQ(count_links(c, DeviceKind::gpu, DeviceKind::gpu), 2 * 16);  // 16 mesh links, both ways
  for (int g = 0; g < 8; ++g) {
    double nvlink_Bps = 0;
    int peers = 0;
    for (const int id : c.out_links(g)) {
      if (link(c, id).technology == LinkTechnology::nvlink) {
        nvlink_Bps += link(c, id).bandwidth_Bps;
        ++peers;
      }
    }
    EXPECT_EQ(peers, 4) << "GPU " << g;
    EXPECT_DOUBLE_EQ(nvlink_Bps, 150e9) << "GPU " << g;  // 6 bricks x 25 GB/s
  }
  // NVLink neighbours: one hop. GPU 0 and GPU 5 have no NVLink: over PCIe, switch 0 -> host -> switch 2.
  EXPECT_EQ(c.route_hops(0, 3), 1);
  EXPECT_EQ(c.route_hops(0, 4), 1);
  std::vector<int> route;
  c.route(0, 5, 0, route);
  ASSERT_EQ(route.size(), 4u);
  EXPECT_EQ(head(c, route[0]).name, "node0/pcie0");
  EXPECT_EQ(head(c, route[1]).name, "node0/host");
  EXPECT_EQ(head(c, route[2]).name, "node0/pcie2");
  EXPECT_EQ(hybrid_cube_mesh_links().size(), 16u);
  check_random_routes_are_shortest(c, 100);
}

TEST(ScaleUpGenerations, InfinityFabricIsSevenXgmiLinksPerGpu) {
  // AMD data sheets: MI300X/MI325X 896 GB/s aggregate = 7 x 64 GB/s per direction; MI355X 1,075.2 GB/s
  // aggregate = 7 x 76.8 GB/s. No switch (no NVSwitch domain, no NVLS).
  const ScaleUpGeneration* x3 = find_scale_up_generation("xgmi3");
  const ScaleUpGeneration* x4 = find_scale_up_generation("xgmi4");
  ASSERT_NE(x3, nullptr);
  ASSERT_NE(x4, nullptr);
  EXPECT_DOUBLE_EQ(x3->bandwidth_GBps, 7 * 64.0);
  EXPECT_DOUBLE_EQ(x4->bandwidth_GBps, 7 * 76.8);
  EXPECT_EQ(x3->max_domain_gpus, 0);
  EXPECT_FALSE(x3->nvls);
  EXPECT_EQ(scale_up_generation_of_gpu("mi300x", "xgmi"), x3);
  EXPECT_EQ(scale_up_generation_of_gpu("mi325x", "xgmi"), x3);
  EXPECT_EQ(scale_up_generation_of_gpu("mi355x", "xgmi"), x4);
  EXPECT_EQ(scale_up_generation_of_gpu("mi300x", "nvlink"), nullptr);
  EXPECT_EQ(scale_up_technology_of_type("xgmi_mesh"), "xgmi");
}

TEST(ScaleUp, XgmiMeshLinksEveryPairOfANodeWithoutASwitch) {
  // 2 MI300X platforms: 8 GPUs, every pair joined by its own 64 GB/s link (448 / 7), no NVSwitch.
  nlohmann::json doc = test::node_spec(2, 8, 8, {{"type", "fat_tree"}, {"switch_radix", 16}});
  doc["gpu"] = "mi300x";
  doc["node"]["scale_up"] = {{"type", "xgmi_mesh"}};
  const ClusterSpec spec = spec_from(doc);
  EXPECT_EQ(spec.node.scale_up.generation, "xgmi3");  // derived from the GPU
  EXPECT_DOUBLE_EQ(spec.node.scale_up.bandwidth_GBps, 448.0);
  const Cluster c = Cluster::build(spec);
  EXPECT_EQ(count_devices(c, DeviceKind::nvswitch), 0);
  EXPECT_EQ(count_links(c, DeviceKind::gpu, DeviceKind::gpu), 2 * 2 * 28);  // 8 choose 2 per node, both ways
  for (int g = 0; g < 16; ++g) {
    int peers = 0;
    double xgmi_Bps = 0;
    for (const int id : c.out_links(g)) {
      if (link(c, id).technology != LinkTechnology::nvlink) continue;
      EXPECT_DOUBLE_EQ(link(c, id).bandwidth_Bps, 64e9);
      EXPECT_EQ(head(c, id).node, g / 8);  // the mesh stays inside the node
      xgmi_Bps += link(c, id).bandwidth_Bps;
      ++peers;
    }
    EXPECT_EQ(peers, 7) << "GPU " << g;
    EXPECT_DOUBLE_EQ(xgmi_Bps, 448e9) << "GPU " << g;
  }
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b)
      if (a != b) {
        EXPECT_EQ(c.route_hops(a, b), 1) << a << " -> " << b;
      }
  check_random_routes_are_shortest(c, 200);
}

TEST(ScaleUp, XgmiMeshRefusesANvlinkGenerationAndLargeNodes) {
  nlohmann::json doc = test::node_spec(1, 8, 0, {{"type", "single_node"}});
  doc["gpu"] = "mi300x";
  doc["node"]["scale_up"] = {{"type", "xgmi_mesh"}, {"generation", "nvlink4"}};
  {
    const SpecError e = testing::spec_error_of([&] { (void)spec_from(doc); });
    EXPECT_NE(std::string(e.what()).find("/node/scale_up/generation"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Infinity Fabric"), std::string::npos) << e.what();
  }
  doc["node"]["scale_up"] = {{"type", "xgmi_mesh"}};
  doc["node"]["gpus"] = 16;
  {
    const SpecError e = testing::spec_error_of([&] { (void)Cluster::build(spec_from(doc)); });
    EXPECT_NE(std::string(e.what()).find("/node/gpus"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("2 to 8 GPUs"), std::string::npos) << e.what();
  }
}

TEST(ScaleUp, NvlinkPairsAndPcieTrees) {
  // 4 GPUs bridged two by two, under 2 PCIe switches (GPUs 0, 1 on switch 0; 2, 3 on switch 1).
  nlohmann::json doc = test::node_spec(1, 4, 2, {{"type", "single_node"}});
  doc["node"]["scale_up"] = {{"type", "nvlink_pairs"}, {"bandwidth_GBps", 300}, {"latency_us", 0.5}};
  doc["node"]["pcie_switches"] = 2;
  const Cluster c = Cluster::build(spec_from(doc));
  std::vector<int> route;
  c.route(0, 1, 0, route);  // the bridge (1 hop), not the shared PCIe switch (2 hops)
  ASSERT_EQ(route.size(), 1u);
  EXPECT_DOUBLE_EQ(link(c, route[0]).bandwidth_Bps, 300e9);
  EXPECT_DOUBLE_EQ(c.route_latency_s(route), 0.5e-6);
  EXPECT_EQ(c.route_hops(0, 2), 4);  // GPU -> switch 0 -> host -> switch 1 -> GPU
  EXPECT_EQ(c.route_hops(1, 3), 4);
}

TEST(ScaleUp, NvlinkIsPreferredToPcieAtEqualHops) {
  // A DGX-like node with its GPUs and NICs under 4 PCIe switches: GPUs 0 and 1 share a PCIe switch, so
  // GPU 0 -> switch -> GPU 1 ties with GPU 0 -> NVSwitch -> GPU 1; every flow takes NVLink. GPU-to-NIC
  // traffic crosses the PCIe switch.
  nlohmann::json doc = test::node_spec(2, 8, 8, {{"type", "fat_tree"}, {"switch_radix", 64}});
  doc["node"]["pcie_switches"] = 4;
  const Cluster c = Cluster::build(spec_from(doc));
  std::vector<int> route;
  for (std::uint64_t flow = 0; flow < 64; ++flow) {
    route.clear();
    c.route(0, 1, flow, route);
    ASSERT_EQ(route.size(), 2u);
    EXPECT_EQ(link(c, route[0]).technology, LinkTechnology::nvlink);
  }
  route.clear();
  c.route(0, 8, 0, route);  // to GPU 0 of node 1: GPU, PCIe switch, NIC, leaf, NIC, PCIe switch, GPU
  ASSERT_EQ(route.size(), 6u);
  EXPECT_EQ(head(c, route[0]).kind, DeviceKind::pcie_switch);
  EXPECT_EQ(head(c, route[1]).kind, DeviceKind::nic);
  check_random_routes_are_shortest(c, 300);
}

TEST(ScaleUp, PcieServerLatencies) {
  // l4-pcie-server: 4 GPUs per PCIe switch; every PCIe link costs latency_us / 2 = 0.5 us.
  const Cluster c = Cluster::build(load_cluster_spec("l4-pcie-server"));
  std::vector<int> route;
  c.route(0, 3, 0, route);
  EXPECT_EQ(route.size(), 2u);
  EXPECT_DOUBLE_EQ(c.route_latency_s(route), 1.0e-6);
  EXPECT_DOUBLE_EQ(link(c, route[0]).bandwidth_Bps, 32e9);
  route.clear();
  c.route(0, 4, 0, route);  // across switches, through the host bridge
  EXPECT_EQ(route.size(), 4u);
  EXPECT_DOUBLE_EQ(c.route_latency_s(route), 2.0e-6);
}

}  // namespace
}  // namespace clustersim
