// Topology metrics: the bill of materials of the presets worked out by hand, bisection bandwidth by
// closed form checked against a max-flow (Boost.Graph push-relabel) on small cases, diameter and hop
// counts, oversubscription per tier.
#include "topologies/topology_metrics.hpp"

#include <algorithm>
#include <numeric>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../expect_contains.hpp"
#include "topologies/cluster.hpp"
#include "topologies/fabric_builder.hpp"
#include "topology_test_util.hpp"

namespace clustersim {
namespace {

using test::node_spec;
using test::spec_from;

long device_count(const TopologyMetrics& m, const std::string& kind) {
  for (const auto& d : m.devices)
    if (d.kind == kind) return d.count;
  return 0;
}

// The GPUs of the first half of the nodes.
std::vector<int> first_half(const Cluster& c) {
  std::vector<int> a(static_cast<std::size_t>(c.gpu_count() / 2));
  std::iota(a.begin(), a.end(), 0);
  return a;
}

// The builder's closed form (it must exist here).
double closed_form_Bps(const Cluster& c) {
  const auto v = find_fabric_builder(c.spec().fabric.type)->bisection(c);
  EXPECT_TRUE(v.has_value()) << c.spec().fabric.type;
  return v.value_or(-1.0);
}

TEST(TopologyMetrics, FullBisectionFatTreeHasHostsOverTwoTimesTheLinkBandwidth) {
  // One GPU and one 400G NIC (50 GB/s) per host. Bisection of a full-bisection fat-tree = hosts/2 x B.
  struct Case {
    int hosts, radix, tiers;
  };
  for (const Case& k : {Case{32, 8, 2}, Case{16, 4, 3}, Case{128, 8, 3}, Case{54, 6, 3}}) {
    SCOPED_TRACE(std::to_string(k.hosts) + " hosts, radix " + std::to_string(k.radix) + ", " + std::to_string(k.tiers) +
                 " tiers");
    const Cluster c = Cluster::build(spec_from(
        node_spec(k.hosts, 1, 1, {{"type", "fat_tree"}, {"tiers", k.tiers}, {"switch_radix", k.radix}}, "none")));
    const double expected = k.hosts / 2.0 * 50e9;
    EXPECT_DOUBLE_EQ(closed_form_Bps(c), expected);
    EXPECT_DOUBLE_EQ(max_flow_Bps(c, first_half(c)), expected);
    EXPECT_DOUBLE_EQ(compute_metrics(c).bisection_Bps, expected);
  }
}

TEST(TopologyMetrics, OversubscribedFatTreeBisectionMatchesMaxFlow) {
  // 2:1 at radix 12: u = 4, d = 8. 96 hosts: 12 leaves; bisection = 96/2 x 50 GB/s x 4/8 = 1.2 TB/s.
  for (const int tiers : {2, 3}) {
    const int hosts = tiers == 2 ? 48 : 96;  // 2 tiers: spines of 12 ports hold 6 leaves
    const Cluster c = Cluster::build(spec_from(node_spec(
        hosts, 1, 1, {{"type", "fat_tree"}, {"tiers", tiers}, {"switch_radix", 12}, {"oversubscription", 2}}, "none")));
    const double expected = hosts / 2.0 * 50e9 / 2.0;
    EXPECT_DOUBLE_EQ(closed_form_Bps(c), expected) << tiers << " tiers";
    EXPECT_DOUBLE_EQ(max_flow_Bps(c, first_half(c)), expected) << tiers << " tiers";
  }
  // Rail-optimized DGX nodes (dgx-h100-superpod at 64 nodes: 2 leaves per rail): 512 NICs / 2 x 50 GB/s.
  const Cluster dgx = Cluster::build(load_cluster_spec("dgx-h100-superpod", {{"nodes", "64"}}));
  EXPECT_DOUBLE_EQ(closed_form_Bps(dgx), 256 * 50e9);
  EXPECT_DOUBLE_EQ(max_flow_Bps(dgx, first_half(dgx)), 256 * 50e9);
}

TEST(TopologyMetrics, TorusAndDragonflyBisectionMatchMaxFlow) {
  // Torus (4, 8) of 32 GPUs, 50 GB/s links: cutting the 4 rings of length 8 in half cuts 2 links of
  // each: 2 x 32/8 x 50 GB/s = 400 GB/s; the max-flow across x1 < 4 (the GPUs of the first half of the
  // second dimension: ranks 0..15) agrees.
  const Cluster torus = Cluster::build(
      spec_from(node_spec(8, 4, 0, {{"type", "torus"}, {"dims", {4, 8}}, {"link_bandwidth_Gbps", 400}}, "none")));
  EXPECT_DOUBLE_EQ(closed_form_Bps(torus), 400e9);
  EXPECT_DOUBLE_EQ(max_flow_Bps(torus, first_half(torus)), 400e9);
  // Dragonfly: 4 groups of 2 routers, 3 global links each: 6 ports per group, 2 links per pair of
  // groups. 16 nodes x 2 NICs = 32 NICs, 4 per router. Halves = groups {0, 1} and {2, 3}: 2 x 2 pairs
  // x 2 links x 50 GB/s = 400 GB/s, below the NIC side (16 x 50 GB/s).
  const Cluster dragonfly = Cluster::build(spec_from(node_spec(16, 2, 2,
                                                               {{"type", "dragonfly"},
                                                                {"groups", 4},
                                                                {"routers_per_group", 2},
                                                                {"global_links_per_router", 3},
                                                                {"switch_radix", 16}})));
  EXPECT_DOUBLE_EQ(closed_form_Bps(dragonfly), 400e9);
  EXPECT_DOUBLE_EQ(max_flow_Bps(dragonfly, first_half(dragonfly)), 400e9);
}

TEST(TopologyMetrics, ExactBisectionOfASmallGraphFindsTheWorstSplit) {
  // 4 switches in a ring, one host on each: ring links of 100, 400, 100, 400 Gb/s (s0-s1, s1-s2, s2-s3,
  // s3-s0). The node halves {0, 1} | {2, 3} cut 400 + 400 Gb/s = 100 GB/s; the worst split {0, 3} |
  // {1, 2} cuts 100 + 100 Gb/s = 25 GB/s, which the exhaustive search finds.
  nlohmann::json fabric = {{"type", "graph"}, {"devices", nlohmann::json::array()}, {"links", nlohmann::json::array()}};
  const double bw[] = {100, 400, 100, 400};
  for (int i = 0; i < 4; ++i) {
    fabric["devices"].push_back({{"name", "s" + std::to_string(i)}});
    fabric["links"].push_back({{"src", "node" + std::to_string(i) + "/nic0"}, {"dst", "s" + std::to_string(i)}});
    fabric["links"].push_back(
        {{"src", "s" + std::to_string(i)}, {"dst", "s" + std::to_string((i + 1) % 4)}, {"bandwidth_Gbps", bw[i]}});
  }
  const Cluster c = Cluster::build(spec_from(node_spec(4, 1, 1, fabric, "none")));
  EXPECT_DOUBLE_EQ(max_flow_Bps(c, first_half(c)), 100e9);
  const TopologyMetrics m = compute_metrics(c);
  EXPECT_DOUBLE_EQ(m.bisection_Bps, 25e9);
  EXPECT_EQ(m.bisection_method, "max-flow, minimum over all balanced GPU splits (exact)");
}

TEST(TopologyMetrics, DgxH100SuperpodBillOfMaterials) {
  const TopologyMetrics m = compute_metrics(Cluster::build(load_cluster_spec("dgx-h100-superpod")));
  EXPECT_EQ(m.nodes, 32);
  EXPECT_EQ(m.gpus, 256);
  EXPECT_EQ(m.racks, 8);  // 4 nodes per rack
  EXPECT_EQ(device_count(m, "gpu"), 256);
  EXPECT_EQ(device_count(m, "nic"), 256);
  EXPECT_EQ(device_count(m, "leaf_switch"), 8);
  EXPECT_EQ(device_count(m, "spine_switch"), 32);
  EXPECT_EQ(device_count(m, "nvswitch_chip"), 32 * 4);  // NVLink 4: 4 chips per 8 GPUs
  // Ports: leaves 32 down + 32 up = 64 each, spines 8 each, all NDR (400 Gb/s).
  for (const auto& p : m.ports) {
    if (p.device_kind == "leaf_switch") {
      EXPECT_EQ(p.count, 8 * 64);
      EXPECT_DOUBLE_EQ(p.speed_Gbps, 400);
      EXPECT_EQ(p.technology, "infiniband");
    }
    if (p.device_kind == "spine_switch") {
      EXPECT_EQ(p.count, 32 * 8);
    }
  }
  // Cables: 256 NIC-leaf + 8 x 32 leaf-spine = 512, all optical (rail leaves span racks): 1024 optics.
  ASSERT_EQ(m.cables.size(), 1u);
  EXPECT_EQ(m.cables[0].technology, "infiniband");
  EXPECT_EQ(m.cables[0].medium, "optical");
  EXPECT_EQ(m.cables[0].count, 512);
  ASSERT_EQ(m.transceivers.size(), 1u);
  EXPECT_EQ(m.transceivers[0].count, 1024);
  EXPECT_DOUBLE_EQ(m.transceivers[0].speed_Gbps, 400);
  // Bisection: 256 NICs / 2 x 50 GB/s = 6.4 TB/s.
  EXPECT_DOUBLE_EQ(m.bisection_Bps, 6.4e12);
  EXPECT_EQ(m.bisection_method, "closed form (fat_tree)");
  // Hops: same node 2 (32 x 8 x 7 = 1792 pairs); same rail, another node 4 (256 x 31 = 7936); the rest
  // (65280 - 1792 - 7936 = 55552) cross a spine: 6.
  EXPECT_EQ(m.diameter_hops, 6);
  EXPECT_EQ(m.pairs_measured, 256 * 255);
  ASSERT_EQ(m.hop_histogram.size(), 7u);
  EXPECT_EQ(m.hop_histogram[2], 1792);
  EXPECT_EQ(m.hop_histogram[4], 7936);
  EXPECT_EQ(m.hop_histogram[6], 55552);
  EXPECT_FALSE(m.hops_sampled);
  ASSERT_EQ(m.oversubscription.size(), 1u);
  EXPECT_EQ(m.oversubscription[0].tier, "leaf_switch");
  EXPECT_DOUBLE_EQ(m.oversubscription[0].ratio, 1.0);
}

TEST(TopologyMetrics, HardwareMetricsAreTheCountsWithoutTheMeasurements) {
  // What simulate hands the power and cost models: the bill of materials above (8 leaves, 32 spines,
  // 512 optical cables, 1024 transceivers, 8 racks), no hop count or bisection measured.
  const Cluster c = Cluster::build(load_cluster_spec("dgx-h100-superpod"));
  const TopologyMetrics full = compute_metrics(c);
  const TopologyMetrics counts = hardware_metrics(c);
  EXPECT_EQ(counts.name, full.name);
  EXPECT_EQ(counts.fabric, full.fabric);
  EXPECT_EQ(counts.gpus, 256);
  EXPECT_EQ(counts.racks, 8);
  EXPECT_EQ(counts.directed_links, full.directed_links);
  EXPECT_EQ(device_count(counts, "leaf_switch"), 8);
  EXPECT_EQ(device_count(counts, "spine_switch"), 32);
  EXPECT_EQ(device_count(counts, "nvswitch_chip"), 128);
  ASSERT_EQ(counts.devices.size(), full.devices.size());
  ASSERT_EQ(counts.ports.size(), full.ports.size());
  for (std::size_t i = 0; i < counts.ports.size(); ++i)
    EXPECT_EQ(counts.ports[i].count, full.ports[i].count);
  ASSERT_EQ(counts.cables.size(), 1u);
  EXPECT_EQ(counts.cables[0].count, 512);
  ASSERT_EQ(counts.transceivers.size(), 1u);
  EXPECT_EQ(counts.transceivers[0].count, 1024);
  EXPECT_EQ(counts.pairs_measured, 0);
  EXPECT_TRUE(counts.hop_histogram.empty());
  EXPECT_TRUE(counts.oversubscription.empty());
  EXPECT_EQ(counts.bisection_Bps, 0.0);
}

TEST(TopologyMetrics, CopperInsideARackOpticsBetweenRacks) {
  // hgx-h100-roce: 4 nodes per rack; leaves of 42 NICs span racks except the last, which holds node
  // 63's 8 NICs only: a top-of-rack switch, cabled in copper. 504 other NIC cables and 13 x 21 = 273
  // uplinks are optical: 777 cables, 1554 transceivers.
  const TopologyMetrics roce = compute_metrics(Cluster::build(load_cluster_spec("hgx-h100-roce")));
  ASSERT_EQ(roce.cables.size(), 2u);
  EXPECT_EQ(roce.cables[0].medium, "copper");
  EXPECT_EQ(roce.cables[0].count, 8);
  EXPECT_EQ(roce.cables[1].medium, "optical");
  EXPECT_EQ(roce.cables[1].count, 777);
  EXPECT_EQ(roce.transceivers[0].count, 1554);
  // gb200-nvl72: the 288 GPU links to the rack's NVSwitch are copper NVLink cables (the NVLink spine).
  const TopologyMetrics nvl = compute_metrics(Cluster::build(load_cluster_spec("gb200-nvl72")));
  bool found = false;
  for (const auto& cable : nvl.cables) {
    if (cable.technology == "nvlink") {
      found = true;
      EXPECT_EQ(cable.medium, "copper");
      EXPECT_EQ(cable.count, 288);
      EXPECT_DOUBLE_EQ(cable.speed_Gbps, 7200);  // 900 GB/s
    }
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(device_count(nvl, "nvswitch_chip"), 4 * 18);
}

TEST(TopologyMetrics, OversubscriptionPerTier) {
  // 3 tiers at radix 12, 2:1 at the leaves (8 down, 4 up), 1:1 at the aggregation switches (6 and 6).
  const Cluster c = Cluster::build(spec_from(node_spec(
      96, 1, 1, {{"type", "fat_tree"}, {"tiers", 3}, {"switch_radix", 12}, {"oversubscription", 2}}, "none")));
  const TopologyMetrics m = compute_metrics(c);
  ASSERT_EQ(m.oversubscription.size(), 2u);
  EXPECT_EQ(m.oversubscription[0].tier, "leaf_switch");
  EXPECT_DOUBLE_EQ(m.oversubscription[0].ratio, 2.0);
  EXPECT_DOUBLE_EQ(m.oversubscription[0].downlink_Bps, 96 * 50e9);
  EXPECT_EQ(m.oversubscription[1].tier, "spine_switch");
  EXPECT_DOUBLE_EQ(m.oversubscription[1].ratio, 1.0);
  // Diameter 8 (GPU, NIC, leaf, aggregation, core and back down).
  EXPECT_EQ(m.diameter_hops, 8);
}

TEST(TopologyMetrics, JsonAndTextReports) {
  const TopologyMetrics m = compute_metrics(Cluster::build(load_cluster_spec("torus-3d")));
  const nlohmann::json j = nlohmann::json::parse(metrics_to_json(m));
  EXPECT_EQ(j["gpus"], 64);
  EXPECT_EQ(j["diameter_hops"], 6);
  EXPECT_DOUBLE_EQ(j["bisection_Bps"].get<double>(), 2.0 * 64 / 4 * 50e9);
  EXPECT_EQ(j["hop_histogram"].size(), 7u);
  const std::string text = metrics_to_text(m);
  testing::expect_contains(text, {"torus-3d: 16 nodes, 64 GPUs", "1.6 TB/s, closed form (torus)", "6 hops",
                                  "pairs x hops: 384 x 1, 960 x 2, 1280 x 3, 960 x 4, 384 x 5, 64 x 6"});
}

}  // namespace
}  // namespace clustersim
