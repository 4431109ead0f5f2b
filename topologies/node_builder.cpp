// The inside of a node. Equations (units SI after conversion at this boundary):
//
// Scale-up domain (node.scale_up.type), latency_us is GPU to GPU through the domain:
//   nvswitch      one logical non-blocking NVSwitch per domain (the domain's chips act as one crossbar);
//                 GPU <-> switch: bandwidth_GBps per direction, latency_us / 2 per link. A domain holds
//                 domain_gpus GPUs (default node.gpus): NVL72 = 18 nodes (compute trays) of 4 GPUs.
//   nvlink_mesh   the DGX-1 hybrid cube-mesh of 8 GPUs: each GPU has 6 NVLink bricks of
//                 bandwidth_GBps / 6, to 4 peers (2 of them over 2 bricks); one link per peer carries
//                 its bricks' bandwidth, latency_us. Other pairs talk over PCIe.
//   xgmi_mesh     AMD Infinity Fabric: every GPU of the node linked to every other, no switch (MI300X,
//                 MI325X, MI355X: 8 GPUs, 7 links each). bandwidth_GBps is the GPU's, over its gpus - 1
//                 links: one link per pair at bandwidth_GBps / (gpus - 1) per direction (MI300X: 448 / 7 =
//                 64 GB/s), latency_us. A transfer between two GPUs takes their one link; a ring step uses
//                 one link, so one ring is bound by 1/7 of the GPU's bandwidth and RCCL runs several
//                 (sim/collectives/ring_algorithm.cpp), while an all-to-all uses the 7 links at once.
//   nvlink_pairs  GPUs 2k and 2k + 1 joined by an NVLink bridge of bandwidth_GBps, latency_us; other
//                 pairs talk over PCIe.
//   pcie          GPUs talk over PCIe: with pcie_switches = 0, one PCIe switch joins them (GPU <->
//                 switch at bandwidth_GBps, latency_us / 2); otherwise through the PCIe tree below.
//   none          no scale-up links (a torus links its GPUs itself).
//
// PCIe (GPU <-> NIC traffic, and GPU <-> GPU traffic without NVLink):
//   pcie_switches = 0  GPU g <-> NIC g * nics / gpus directly (every NIC gets a GPU when there are more
//                      NICs than GPUs: NIC j <-> GPU j * gpus / nics), pcie_bandwidth_GBps, latency 0.
//   pcie_switches = S  a host bridge (CPU root complex) above S PCIe switches; GPU g under switch
//                      g * S / gpus, NIC j under switch j * S / nics. Links: GPU <-> switch at
//                      scale_up.bandwidth_GBps for type pcie (the GPU's own x16 link) and
//                      pcie_bandwidth_GBps otherwise; NIC <-> switch and switch <-> host bridge at
//                      pcie_bandwidth_GBps. Latency latency_us / 2 per PCIe link for type pcie, 0
//                      otherwise (GPU <-> NIC latency is part of the fabric's per-hop figure).
#include "topologies/node_builder.hpp"

#include <algorithm>
#include <span>
#include <string_view>

#include "sim/core/error.hpp"
#include "sim/core/named_table.hpp"
#include "sim/core/units.hpp"
#include "topologies/scale_up_generation.hpp"

namespace clustersim {
namespace {

// The DGX-1 (V100) hybrid cube-mesh: two fully connected quads (0-3, 4-7) joined by 0-4, 1-5, 2-6,
// 3-7; 6 bricks per GPU. Source: NVIDIA DGX-1 with Tesla V100 System Architecture white paper
// (WP-08437-002), Figure 2, and `nvidia-smi topo -m` on a DGX-1V (NV1/NV2 entries).
constexpr MeshLink k_hybrid_cube_mesh[] = {
    {0, 1, 1}, {0, 2, 1}, {0, 3, 2}, {0, 4, 2}, {1, 2, 2}, {1, 3, 1}, {1, 5, 2}, {2, 3, 2},
    {2, 6, 1}, {3, 7, 1}, {4, 5, 1}, {4, 6, 1}, {4, 7, 2}, {5, 6, 2}, {5, 7, 1}, {6, 7, 2},
};
constexpr int k_mesh_gpus = 8;
constexpr int k_mesh_bricks_per_gpu = 6;

// State shared by the nodes of one cluster while building.
struct NodeBuild {
  Cluster& cluster;
  const ClusterSpec& spec;
  int domain_switch = -1;  // the NVSwitch of the current domain
};

using ScaleUpCheckFn = void (*)(const ClusterSpec& spec);
using ScaleUpBuildFn = void (*)(NodeBuild& b, int node);

struct ScaleUpBuilder {
  std::string_view type;
  ScaleUpCheckFn check;
  ScaleUpBuildFn build;
};

[[noreturn]] void fail(const ClusterSpec& spec, const std::string& path, const std::string& message) {
  throw SpecError(spec.source_file, path, message);
}

int first_gpu(const ClusterSpec& spec, int node) {
  return node * spec.node.gpus;
}

void require_pcie_for_missing_pairs(const ClusterSpec& spec, const std::string& example) {
  if (spec.node.pcie_switches < 1)
    fail(spec, "/node/pcie_switches",
         spec.node.scale_up.type + " leaves GPU pairs without NVLink (" + example +
             "): they talk over PCIe, so node.pcie_switches must be >= 1, got 0");
}

void check_nvswitch(const ClusterSpec& spec) {
  const int gpus = spec.node.gpus;
  const int domain = spec.domain_gpus();
  if (domain % gpus != 0)
    fail(spec, "/node/gpus",
         "expected node.gpus to divide scale_up.domain_gpus (" + std::to_string(domain) +
             ": an NVLink domain spans whole nodes), got " + std::to_string(gpus));
  const int per_domain = domain / gpus;
  if (spec.nodes % per_domain != 0)
    fail(spec, "/nodes",
         "expected a multiple of " + std::to_string(per_domain) + " (an NVLink domain of " + std::to_string(domain) +
             " GPUs spans " + std::to_string(per_domain) + " nodes of " + std::to_string(gpus) + " GPUs), got " +
             std::to_string(spec.nodes));
  if (const ScaleUpGeneration* g = find_scale_up_generation(spec.node.scale_up.generation)) {
    if (domain > g->max_domain_gpus)
      fail(spec, spec.node.scale_up.domain_gpus > 0 ? "/node/scale_up/domain_gpus" : "/node/gpus",
           "an " + std::string(g->id) + " NVSwitch domain holds at most " + std::to_string(g->max_domain_gpus) +
               " GPUs (" + std::string(g->gpus) + "), got " + std::to_string(domain));
  }
}

void build_nvswitch(NodeBuild& b, int node) {
  const ClusterSpec& spec = b.spec;
  const ScaleUpSpec& s = spec.node.scale_up;
  const int per_domain = spec.nodes_per_domain();
  if (node % per_domain == 0) {
    const int domain = node / per_domain;
    const bool rack_scale = per_domain > 1;
    b.domain_switch = b.cluster.add_device(Device{.kind = DeviceKind::nvswitch,
                                                  .name = rack_scale ? "domain" + std::to_string(domain) + "/nvswitch"
                                                                     : "node" + std::to_string(node) + "/nvswitch",
                                                  .node = rack_scale ? -1 : node,
                                                  .local_index = 0,
                                                  .forwards = true,
                                                  .group = rack_scale ? domain : -1});
  }
  const double bandwidth_Bps = s.bandwidth_GBps * units::kGBpsToBps;
  const double latency_s = s.latency_us * units::kUsToS / 2.0;
  for (int g = 0; g < spec.node.gpus; ++g)
    b.cluster.add_duplex_link(first_gpu(spec, node) + g, b.domain_switch, bandwidth_Bps, latency_s,
                              LinkTechnology::nvlink);
}

void check_nvlink_mesh(const ClusterSpec& spec) {
  if (spec.node.gpus != k_mesh_gpus)
    fail(spec, "/node/gpus",
         "nvlink_mesh is the DGX-1 hybrid cube-mesh of exactly 8 GPUs, got " + std::to_string(spec.node.gpus));
  require_pcie_for_missing_pairs(spec, "GPU 0 and GPU 5");
}

void build_nvlink_mesh(NodeBuild& b, int node) {
  const ScaleUpSpec& s = b.spec.node.scale_up;
  const double brick_Bps = s.bandwidth_GBps * units::kGBpsToBps / k_mesh_bricks_per_gpu;
  const int base = first_gpu(b.spec, node);
  for (const MeshLink& l : k_hybrid_cube_mesh)
    b.cluster.add_duplex_link(base + l.a, base + l.b, brick_Bps * l.bricks, s.latency_us * units::kUsToS,
                              LinkTechnology::nvlink);
}

// Fully connected 8-GPU platforms: AMD Instinct MI300X/MI325X/MI355X platform data sheets (one xGMI link
// between every pair of the 8 OAM modules). Bounded at 8: no larger fully connected xGMI node exists.
constexpr int k_xgmi_mesh_max_gpus = 8;

void check_xgmi_mesh(const ClusterSpec& spec) {
  if (spec.node.gpus < 2 || spec.node.gpus > k_xgmi_mesh_max_gpus)
    fail(spec, "/node/gpus",
         "xgmi_mesh links every GPU of a node to every other (an AMD Instinct platform: up to 8 GPUs, 7 links "
         "each): expected 2 to 8 GPUs, got " +
             std::to_string(spec.node.gpus));
}

void build_xgmi_mesh(NodeBuild& b, int node) {
  const ScaleUpSpec& s = b.spec.node.scale_up;
  const int gpus = b.spec.node.gpus;
  const double link_Bps = s.bandwidth_GBps * units::kGBpsToBps / (gpus - 1);
  const int base = first_gpu(b.spec, node);
  for (int a = 0; a < gpus; ++a)
    for (int c = a + 1; c < gpus; ++c)
      b.cluster.add_duplex_link(base + a, base + c, link_Bps, s.latency_us * units::kUsToS, LinkTechnology::nvlink);
}

void check_nvlink_pairs(const ClusterSpec& spec) {
  if (spec.node.gpus % 2 != 0)
    fail(spec, "/node/gpus",
         "nvlink_pairs bridges GPUs two by two: expected an even number, got " + std::to_string(spec.node.gpus));
  if (spec.node.gpus > 2) require_pcie_for_missing_pairs(spec, "GPU 0 and GPU 2");
}

void build_nvlink_pairs(NodeBuild& b, int node) {
  const ScaleUpSpec& s = b.spec.node.scale_up;
  const int base = first_gpu(b.spec, node);
  for (int g = 0; g + 1 < b.spec.node.gpus; g += 2)
    b.cluster.add_duplex_link(base + g, base + g + 1, s.bandwidth_GBps * units::kGBpsToBps,
                              s.latency_us * units::kUsToS, LinkTechnology::nvlink);
}

void check_nothing(const ClusterSpec& /*spec*/) {}

void build_pcie(NodeBuild& b, int node) {
  if (b.spec.node.pcie_switches > 0) return;  // the GPUs hang under the node's PCIe tree
  const ScaleUpSpec& s = b.spec.node.scale_up;
  const int sw = b.cluster.add_device(Device{.kind = DeviceKind::pcie_switch,
                                             .name = "node" + std::to_string(node) + "/pcie_switch",
                                             .node = node,
                                             .local_index = 0,
                                             .forwards = true});
  for (int g = 0; g < b.spec.node.gpus; ++g)
    b.cluster.add_duplex_link(first_gpu(b.spec, node) + g, sw, s.bandwidth_GBps * units::kGBpsToBps,
                              s.latency_us * units::kUsToS / 2.0, LinkTechnology::pcie);
}

void build_none(NodeBuild& /*b*/, int /*node*/) {}

constexpr ScaleUpBuilder k_scale_up_builders[] = {
    {"nvswitch", &check_nvswitch, &build_nvswitch},
    {"nvlink_mesh", &check_nvlink_mesh, &build_nvlink_mesh},
    {"nvlink_pairs", &check_nvlink_pairs, &build_nvlink_pairs},
    {"xgmi_mesh", &check_xgmi_mesh, &build_xgmi_mesh},
    {"pcie", &check_nothing, &build_pcie},
    {"none", &check_nothing, &build_none},
};

const ScaleUpBuilder& find_scale_up(const ClusterSpec& spec) {
  for (const auto& b : k_scale_up_builders) {
    if (b.type == spec.node.scale_up.type) return b;
  }
  std::string known;
  for (const auto& b : k_scale_up_builders)
    known += (known.empty() ? "" : ", ") + std::string(b.type);
  throw SpecError(spec.source_file, "/node/scale_up/type",
                  "expected one of " + known + ", got \"" + spec.node.scale_up.type + "\"");
}

void add_nics(NodeBuild& b, int node, NodeLayout& layout) {
  for (int j = 0; j < b.spec.node.nics; ++j) {
    layout.nic_devices.push_back(
        b.cluster.add_device(Device{.kind = DeviceKind::nic,
                                    .name = "node" + std::to_string(node) + "/nic" + std::to_string(j),
                                    .node = node,
                                    .local_index = j,
                                    .forwards = true}));
  }
}

// pcie_switches = 0: every GPU gets a NIC (GPU g uses NIC g * nics / gpus) and, when there are more
// NICs than GPUs, every NIC gets a GPU (NIC j hangs off GPU j * gpus / nics).
void link_nics_directly(NodeBuild& b, int node, const NodeLayout& layout) {
  const NodeSpec& n = b.spec.node;
  if (n.nics == 0) return;
  const double bandwidth_Bps = n.pcie_bandwidth_GBps * units::kGBpsToBps;
  const int base = first_gpu(b.spec, node);
  if (n.nics <= n.gpus) {
    for (int g = 0; g < n.gpus; ++g)
      b.cluster.add_duplex_link(base + g, layout.nic(node, n.nic_of_gpu(g)), bandwidth_Bps, 0.0, LinkTechnology::pcie);
  } else {
    for (int j = 0; j < n.nics; ++j)
      b.cluster.add_duplex_link(base + n.gpu_of_nic(j), layout.nic(node, j), bandwidth_Bps, 0.0, LinkTechnology::pcie);
  }
}

// pcie_switches = S >= 1: a host bridge above S switches, GPUs and NICs spread over the switches.
void build_pcie_tree(NodeBuild& b, int node, const NodeLayout& layout) {
  const NodeSpec& n = b.spec.node;
  const int switches = n.pcie_switches;
  const bool pcie_scale_up = n.scale_up.type == "pcie";
  const double latency_s = pcie_scale_up ? n.scale_up.latency_us * units::kUsToS / 2.0 : 0.0;
  const double pcie_Bps = n.pcie_bandwidth_GBps * units::kGBpsToBps;
  const double gpu_Bps = pcie_scale_up ? n.scale_up.bandwidth_GBps * units::kGBpsToBps : pcie_Bps;
  const std::string prefix = "node" + std::to_string(node) + "/";
  const int host = b.cluster.add_device(Device{
      .kind = DeviceKind::host_bridge, .name = prefix + "host", .node = node, .local_index = 0, .forwards = true});
  std::vector<int> sw(static_cast<std::size_t>(switches));
  for (int i = 0; i < switches; ++i) {
    sw[static_cast<std::size_t>(i)] = b.cluster.add_device(Device{.kind = DeviceKind::pcie_switch,
                                                                  .name = prefix + "pcie" + std::to_string(i),
                                                                  .node = node,
                                                                  .local_index = i,
                                                                  .forwards = true});
    b.cluster.add_duplex_link(sw[static_cast<std::size_t>(i)], host, pcie_Bps, latency_s, LinkTechnology::pcie);
  }
  const int base = first_gpu(b.spec, node);
  for (int g = 0; g < n.gpus; ++g) {
    const auto s = static_cast<std::size_t>(static_cast<std::int64_t>(g) * switches / n.gpus);
    b.cluster.add_duplex_link(base + g, sw[s], gpu_Bps, latency_s, LinkTechnology::pcie);
  }
  for (int j = 0; j < n.nics; ++j) {
    const auto s = static_cast<std::size_t>(static_cast<std::int64_t>(j) * switches / n.nics);
    b.cluster.add_duplex_link(layout.nic(node, j), sw[s], pcie_Bps, latency_s, LinkTechnology::pcie);
  }
}

}  // namespace

std::vector<std::string> scale_up_types() {
  return keys_of(std::span<const ScaleUpBuilder>(k_scale_up_builders), &ScaleUpBuilder::type);
}

std::vector<MeshLink> hybrid_cube_mesh_links() {
  return {std::begin(k_hybrid_cube_mesh), std::end(k_hybrid_cube_mesh)};
}

NodeLayout build_nodes(Cluster& cluster, const ClusterSpec& spec) {
  const NodeSpec& n = spec.node;
  const ScaleUpBuilder& scale_up = find_scale_up(spec);
  scale_up.check(spec);
  if (n.pcie_switches > n.gpus)
    throw SpecError(spec.source_file, "/node/pcie_switches",
                    "expected at most node.gpus (" + std::to_string(n.gpus) + ") PCIe switches, got " +
                        std::to_string(n.pcie_switches));
  // All GPUs first: device index == GPU rank.
  const auto nodes = static_cast<std::size_t>(spec.nodes);
  cluster.reserve(nodes * static_cast<std::size_t>(n.gpus), 0);
  for (int node = 0; node < spec.nodes; ++node) {
    for (int g = 0; g < n.gpus; ++g) {
      cluster.add_device(Device{.kind = DeviceKind::gpu,
                                .name = "node" + std::to_string(node) + "/gpu" + std::to_string(g),
                                .node = node,
                                .local_index = g,
                                .forwards = false});
    }
  }
  NodeLayout layout;
  layout.nodes = spec.nodes;
  layout.nics_per_node = n.nics;
  layout.nic_devices.reserve(static_cast<std::size_t>(spec.nodes) * static_cast<std::size_t>(n.nics));
  NodeBuild build{cluster, spec};
  for (int node = 0; node < spec.nodes; ++node) {
    const std::size_t devices_before = cluster.devices().size(), links_before = cluster.links().size();
    scale_up.build(build, node);
    add_nics(build, node, layout);
    if (n.pcie_switches == 0)
      link_nics_directly(build, node, layout);
    else
      build_pcie_tree(build, node, layout);
    if (node == 0) {  // the other nodes are built alike: room for them and, roughly, for the fabric
      const std::size_t devices = cluster.devices().size() - devices_before;
      const std::size_t links = cluster.links().size() - links_before;
      cluster.reserve(devices_before + devices * nodes * 5 / 4, links_before + links * nodes * 5 / 2);
    }
  }
  return layout;
}

}  // namespace clustersim
