// Every preset builds, with the device and link counts of the fat-tree rule worked out by hand.
#include <gtest/gtest.h>

#include "sim/core/error.hpp"
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
  // 140 nodes x 8: 1120 GPUs and NICs. Radix 40, 1:1: d = u = 20. Rail-optimized, 3 tiers: 7 groups
  // of 20 nodes, 7 x 8 = 56 leaves; pods of E = floor(20 / 8) * 8 = 16 leaves (2 groups): 4 pods of
  // u = 20 aggregation switches = 80; A = 16 uplinks each, m = 8 (largest divisor of 16 with
  // 4 m <= 40), C = 2 cores per group: 20 x 2 = 40 cores.
  // Links: 2 * (1120 NVLink + 1120 PCIe + 1120 NIC-leaf + 56 * 20 leaf-agg + 80 * 16 agg-core) = 11520.
  const Cluster c = Cluster::build(load_cluster_spec("dgx-a100-superpod"));
  expect_counts(c, {1120, 140, 1120, 56, 80, 1120 + 140 + 1120 + 56 + 80 + 40, 11520});
  EXPECT_EQ(count_devices(c, DeviceKind::core_switch), 40);
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

TEST(Presets, DgxA100SuperpodAt256NodesNeedsThreeTiers) {
  // Two tiers of radix 40 hold at most 40 * 40 / 2 = 800 NICs (100 nodes: 5 leaves per rail, 40 leaves).
  const Cluster two = Cluster::build(load_cluster_spec("dgx-a100-superpod", {{"nodes", "100"}, {"fabric.tiers", "2"}}));
  expect_counts(two, {800, 100, 800, 40, 20, 800 + 100 + 800 + 40 + 20, 2 * (800 * 3 + 40 * 20)});
  EXPECT_THROW(Cluster::build(load_cluster_spec("dgx-a100-superpod", {{"nodes", "256"}, {"fabric.tiers", "2"}})),
               SpecError);
  // 256 nodes in 3 tiers: 13 groups (the last of 16 nodes), 104 leaves, 7 pods of 16 leaves (the last
  // of 8): 140 aggregation switches; m = 4 (7 m <= 40), C = 4: 80 cores.
  // Links: 2 * (2048 * 3 + 104 * 20 + 140 * 16) = 20928.
  const Cluster three = Cluster::build(load_cluster_spec("dgx-a100-superpod", {{"nodes", "256"}}));
  expect_counts(three, {2048, 256, 2048, 104, 140, 2048 + 256 + 2048 + 104 + 140 + 80, 20928});
}

TEST(Presets, NewPresetsCounts) {
  // hgx-h100-roce: 512 NICs, radix 64 at 2:1: u = 21, d = 42: ceil(512 / 42) = 13 leaves; 7 spines with
  // 21 / 7 = 3 links from every leaf. Links: 2 * (512 * 3 + 13 * 21) = 3618.
  const Cluster roce = Cluster::build(load_cluster_spec("hgx-h100-roce"));
  expect_counts(roce, {512, 64, 512, 13, 7, 512 + 64 + 512 + 13 + 7, 3618});
  for (const Link& l : roce.links()) {
    if (l.technology != LinkTechnology::nvlink && l.technology != LinkTechnology::pcie) {
      EXPECT_EQ(l.technology, LinkTechnology::ethernet);
      EXPECT_DOUBLE_EQ(l.latency_s, 1e-6);
    }
  }
  // gb200-nvl72: 72 trays of 4 GPUs, 4 NVLink domains of 72 GPUs (one NVSwitch each), 288 NICs
  // rail-optimized: 4 rails x ceil(72 / 32) = 12 leaves, 32 spines.
  // Links: 2 * (288 NVLink + 288 PCIe + 288 NIC-leaf + 12 * 32) = 2496.
  const Cluster nvl = Cluster::build(load_cluster_spec("gb200-nvl72"));
  expect_counts(nvl, {288, 4, 288, 12, 32, 288 + 4 + 288 + 12 + 32, 2496});
  for (const Link& l : nvl.links()) {
    if (l.technology == LinkTechnology::nvlink) {
      EXPECT_DOUBLE_EQ(l.bandwidth_Bps, 900e9);
    }  // NVLink 5 per direction
  }
  // torus-3d: 64 GPUs, 6 links each, no switch and no NIC: 64 * 6 directed links.
  const Cluster torus = Cluster::build(load_cluster_spec("torus-3d"));
  expect_counts(torus, {64, 0, 0, 0, 0, 64, 384});
  // l4-pcie-server: 8 GPUs and 2 NICs under 2 PCIe switches under one host bridge.
  // Links: 2 * (8 GPU + 2 NIC + 2 switch uplinks) = 24.
  const Cluster l4 = Cluster::build(load_cluster_spec("l4-pcie-server"));
  expect_counts(l4, {8, 0, 2, 0, 0, 8 + 2 + 2 + 1, 24});
  EXPECT_EQ(count_devices(l4, DeviceKind::pcie_switch), 2);
  EXPECT_EQ(count_devices(l4, DeviceKind::host_bridge), 1);
}

TEST(Presets, DgxH100IsOneNodeWithoutFabric) {
  // 8 GPUs, 1 NVSwitch, 8 unconnected NICs. Links: 2 * (8 NVLink + 8 PCIe) = 32.
  const Cluster c = Cluster::build(load_cluster_spec("dgx-h100"));
  expect_counts(c, {8, 1, 8, 0, 0, 8 + 1 + 8, 32});
}

TEST(Presets, RealSystemsSayWhereTheirFiguresComeFrom) {
  // The presets of real systems (issue 17) each carry a description and at least one source.
  for (const char* name : {"aws-p5", "aws-p5e", "aws-p5en", "azure-nd-h100-v5", "azure-nd-h200-v5", "gcp-a3-mega",
                           "gcp-a3-ultra", "oci-bm-gpu-h100-8", "dgx-h200-superpod", "dgx-b200-superpod"}) {
    const ClusterSpec spec = load_cluster_spec(name);
    EXPECT_GT(spec.description.size(), 200u) << name;
    ASSERT_FALSE(spec.sources.empty()) << name;
    for (const auto& s : spec.sources)
      EXPECT_EQ(s.rfind("https://", 0), 0u) << name << ": " << s;
    // Every one is 8 GPUs per node with 3.2 Tb/s of scale-out per node, except A3 Mega's 1.6 Tb/s.
    EXPECT_EQ(spec.node.gpus, 8) << name;
    const double node_Gbps = spec.node.nics * spec.node.nic_bandwidth_Gbps;
    EXPECT_DOUBLE_EQ(node_Gbps, std::string(name) == "gcp-a3-mega" ? 1600.0 : 3200.0) << name;
  }
  // p5: 32 EFA NICs of 100 Gb/s, 4 per GPU under the GPU's PCIe switch; EFA sprays (no ECMP).
  const Cluster p5 = Cluster::build(load_cluster_spec("aws-p5", {{"nodes", "2"}}));
  EXPECT_EQ(p5.spec().node.nics_per_gpu(), 4);
  EXPECT_EQ(count_devices(p5, DeviceKind::nic), 64);
  EXPECT_EQ(count_devices(p5, DeviceKind::pcie_switch), 16);
  EXPECT_EQ(p5.spec().fabric.routing_in_effect(), "spray");
  EXPECT_EQ(load_cluster_spec("aws-p5en").node.nics_per_gpu(), 2);
  // p5en's EFA v3 is tuned apart from p5's by aws-ofi-nccl (35 us declared, 18 us per LL/LL128 step).
  EXPECT_EQ(p5.spec().fabric.transport_in_effect(), "efa");
  EXPECT_EQ(load_cluster_spec("aws-p5en").fabric.transport_in_effect(), "efa_v3");
  EXPECT_EQ(load_cluster_spec("aws-p5en").fabric.routing_in_effect(), "spray");
  EXPECT_EQ(load_cluster_spec("oci-bm-gpu-h100-8").fabric.routing_in_effect(), "ecmp");
  EXPECT_EQ(load_cluster_spec("dgx-b200-superpod").node.scale_up.generation, "nvlink5");
}

TEST(Presets, AmdInstinctClustersAreXgmiMeshesOnRailOptimizedRoce) {
  // 64 nodes of 8 MI300X (or MI325X): each node a full xGMI mesh (28 pairs, 7 x 64 GB/s per GPU, no
  // switch), 8 x 400GbE per node, one NIC per GPU and rail. Rail-optimized radix-128 fat tree, 1:1: 64
  // down and 64 up per leaf, 8 leaves (one per rail, 64 nodes each), 64 spines.
  // Devices: 512 GPUs + 512 NICs + 8 leaves + 64 spines = 1096. Links (directed): mesh 2 x 28 x 64 = 3584,
  // GPU-NIC 2 x 512, NIC-leaf 2 x 512, leaf-spine 2 x 8 x 64 = 1024: 6656.
  for (const char* name : {"amd-mi300x-roce", "amd-mi325x-roce"}) {
    const Cluster c = Cluster::build(load_cluster_spec(name));
    expect_counts(c, {512, 0, 512, 8, 64, 1096, 6656});
    EXPECT_EQ(test::count_links(c, DeviceKind::gpu, DeviceKind::gpu), 3584) << name;
    EXPECT_EQ(c.spec().node.scale_up.type, "xgmi_mesh") << name;
    EXPECT_EQ(c.spec().node.scale_up.generation, "xgmi3") << name;  // derived from the GPU
    EXPECT_DOUBLE_EQ(c.spec().node.scale_up.bandwidth_GBps, 448.0) << name;
    EXPECT_DOUBLE_EQ(c.spec().node.nics * c.spec().node.nic_bandwidth_Gbps, 3200.0) << name;
    EXPECT_EQ(c.spec().fabric.routing_in_effect(), "ecmp") << name;
    EXPECT_GT(c.spec().description.size(), 200u) << name;
    ASSERT_FALSE(c.spec().sources.empty()) << name;
    for (const auto& s : c.spec().sources)
      EXPECT_EQ(s.rfind("https://", 0), 0u) << name << ": " << s;
  }
  EXPECT_EQ(load_cluster_spec("amd-mi325x-roce").gpu_id, "mi325x");
}

TEST(Presets, Mi355xClusterIsAnXgmi4MeshOnTheSameRoceFabric) {
  // The MI300X/MI325X layout (1096 devices, 6656 directed links: counts above) with the MI355X's
  // fourth-generation Infinity Fabric: 7 links of 153.6 GB/s both directions per GPU (MI355X data
  // sheet), 7 x 76.8 = 537.6 GB/s per direction, derived from the GPU; each link 76.8 GB/s.
  const Cluster c = Cluster::build(load_cluster_spec("amd-mi355x-roce"));
  expect_counts(c, {512, 0, 512, 8, 64, 1096, 6656});
  EXPECT_EQ(c.spec().gpu_id, "mi355x");
  EXPECT_EQ(c.spec().node.scale_up.type, "xgmi_mesh");
  EXPECT_EQ(c.spec().node.scale_up.generation, "xgmi4");
  EXPECT_DOUBLE_EQ(c.spec().node.scale_up.bandwidth_GBps, 537.6);
  int mesh_links = 0;
  for (const Link& l : c.links()) {
    if (l.technology != LinkTechnology::nvlink) continue;
    ++mesh_links;
    EXPECT_NEAR(l.bandwidth_Bps, 76.8e9, 1.0);
  }
  EXPECT_EQ(mesh_links, 3584);
  EXPECT_DOUBLE_EQ(c.spec().node.nics * c.spec().node.nic_bandwidth_Gbps, 3200.0);
  ASSERT_FALSE(c.spec().sources.empty());
  for (const auto& s : c.spec().sources)
    EXPECT_EQ(s.rfind("https://", 0), 0u) << s;
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
