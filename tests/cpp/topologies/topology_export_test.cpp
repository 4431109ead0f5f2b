// Exports: JSON carries the whole graph and the spec; DOT draws one edge per cable; the SimGrid
// platform declares every GPU as a host, every other device as a router and one link and one-hop route
// per ordered pair of joined devices (loading it in SimGrid is tested in tests/cpp/sim).
#include "topologies/topology_export.hpp"

#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "topologies/cluster.hpp"
#include "topology_test_util.hpp"

namespace clustersim {
namespace {

// One node of 4 GPUs joined by a (2, 2) torus of `link_Gbps` links: each pair of neighbours twice.
Cluster torus_2x2(int link_Gbps) {
  return Cluster::build(test::spec_from(
      test::node_spec(1, 4, 0, {{"type", "torus"}, {"dims", {2, 2}}, {"link_bandwidth_Gbps", link_Gbps}}, "none")));
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1))
    ++n;
  return n;
}

TEST(TopologyExport, JsonHasTheSpecDevicesAndLinks) {
  const Cluster c = Cluster::build(load_cluster_spec("dgx-h100-superpod", {{"nodes", "4"}}));
  const nlohmann::json j = nlohmann::json::parse(export_json(c));
  EXPECT_EQ(j["devices"].size(), c.devices().size());
  EXPECT_EQ(j["links"].size(), c.links().size());
  EXPECT_EQ(j["devices"][9]["name"], "node1/gpu1");
  EXPECT_EQ(j["devices"][9]["kind"], "gpu");
  EXPECT_EQ(j["devices"][9]["forwards"], false);
  EXPECT_EQ(j["links"][0]["technology"], "nvlink");
  EXPECT_DOUBLE_EQ(j["links"][0]["bandwidth_Bps"].get<double>(), 450e9);
  EXPECT_EQ(parse_cluster_spec(j["spec"].dump(), c.spec().source_file), c.spec());
}

TEST(TopologyExport, DotDrawsNodesAsBoxesAndOneEdgePerCable) {
  // 2 DGX nodes, rail-optimized: per node 8 GPUs, an NVSwitch, 8 NICs; 8 leaves, 32 spines.
  // Cables: 16 NVLink + 16 PCIe + 16 NIC-leaf + 8 x 32 leaf-spine = 304 edges.
  const Cluster c = Cluster::build(load_cluster_spec("dgx-h100-superpod", {{"nodes", "2"}}));
  const std::string dot = export_dot(c);
  EXPECT_EQ(dot.rfind("digraph \"dgx-h100-superpod\" {", 0), 0u);
  EXPECT_EQ(count(dot, "subgraph \"cluster_node"), 2u);
  EXPECT_EQ(count(dot, " -> "), 304u);
  EXPECT_EQ(count(dot, "dir=both"), 304u);
  EXPECT_EQ(count(dot, "[label=\"gpu"), 16u);
  EXPECT_NE(dot.find("\"node1/nic7\" -> \"leaf7\" [dir=both, color=royalblue, label=\"400G\"]"), std::string::npos);
  // Parallel links become one edge: a torus of (2, 2) joins each pair twice.
  const Cluster torus = torus_2x2(800);
  const std::string tdot = export_dot(torus);
  EXPECT_EQ(count(tdot, " -> "), 4u);
  EXPECT_EQ(count(tdot, "label=\"2 x 800G\""), 4u);
}

TEST(TopologyExport, SimgridPlatformDeclaresHostsRoutersLinksAndRoutes) {
  const Cluster c = Cluster::build(load_cluster_spec("dgx-h100-superpod", {{"nodes", "2"}}));
  const std::string xml = export_simgrid_xml(c, 989e12);
  EXPECT_EQ(xml.rfind("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                      "<platform version=\"4.1\">",
                      0),
            0u);
  EXPECT_EQ(count(xml, "<host "), 16u);
  EXPECT_EQ(count(xml, "<router "), c.devices().size() - 16);
  // No parallel links here: one SimGrid link and one route per directed link.
  EXPECT_EQ(count(xml, "<link "), c.links().size());
  EXPECT_EQ(count(xml, "<route "), c.links().size());
  EXPECT_NE(xml.find("<host id=\"node1/gpu7\" speed=\"9.89e+14f\"/>"), std::string::npos);
  EXPECT_NE(xml.find("bandwidth=\"450000000000Bps\" latency=\"3.5e-07s\""), std::string::npos);
  EXPECT_NE(xml.find("<route src=\"node0/gpu0\" dst=\"node0/nvswitch\" symmetrical=\"NO\"><link_ctn id=\"l"),
            std::string::npos);
  EXPECT_EQ(count(xml, "</zone>"), 1u);
  // Parallel links are merged: the (2, 2) torus has 8 ordered pairs of 2 links each, 100 GB/s per pair.
  const Cluster torus = torus_2x2(400);
  const std::string txml = export_simgrid_xml(torus);
  EXPECT_EQ(count(txml, "<link "), 8u);
  EXPECT_EQ(count(txml, "bandwidth=\"100000000000Bps\""), 8u);
}

TEST(TopologyExport, FormatsAreARegistry) {
  std::set<std::string> names;
  for (const auto& f : export_formats())
    names.insert(std::string(f.name));
  EXPECT_EQ(names, (std::set<std::string>{"simgrid", "dot", "json"}));
  EXPECT_EQ(find_export_format("graphml"), nullptr);
  const Cluster c = Cluster::build(load_cluster_spec("dgx-h100"));
  EXPECT_EQ(find_export_format("json")->write(c), export_json(c));
}

}  // namespace
}  // namespace clustersim
