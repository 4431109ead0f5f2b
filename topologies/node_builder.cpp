// The inside of a node. Equations (units SI after conversion at this boundary):
//   GPU <-> scale-up switch: bandwidth = scale_up.bandwidth_GBps * 1e9 B/s per direction (DESIGN.md:
//   per GPU per direction), latency = scale_up.latency_us / 2 per link, so that GPU -> switch -> GPU
//   costs exactly scale_up.latency_us.
//   GPU <-> NIC: bandwidth = pcie_bandwidth_GBps * 1e9 B/s per direction, latency 0 (the host side of
//   the NIC's latency is part of the fabric's per-hop figure).
#include "topologies/node_builder.hpp"

#include <algorithm>
#include <span>
#include <string_view>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

namespace clustersim {
namespace {

using ScaleUpBuildFn = void (*)(Cluster& cluster, const ClusterSpec& spec, int node);

struct ScaleUpBuilder {
  std::string_view type;
  ScaleUpBuildFn build;
};

// One switch per node joining its GPUs (a non-blocking crossbar: the NVSwitch chips of a DGX, or the
// PCIe switch of a PCIe server), with one duplex link per GPU.
void build_switched_domain(Cluster& cluster, const ClusterSpec& spec, int node, DeviceKind kind,
                           std::string_view suffix, LinkTechnology tech) {
  const ScaleUpSpec& s = spec.node.scale_up;
  const int sw = cluster.add_device(Device{.kind = kind,
                                           .name = "node" + std::to_string(node) + "/" + std::string(suffix),
                                           .node = node,
                                           .local_index = 0,
                                           .forwards = true});
  const double bandwidth_Bps = s.bandwidth_GBps * units::kGBpsToBps;
  const double latency_s = s.latency_us * units::kUsToS / 2.0;
  for (int g = 0; g < spec.node.gpus; ++g) {
    cluster.add_duplex_link(node * spec.node.gpus + g, sw, bandwidth_Bps, latency_s, tech);
  }
}

void build_nvswitch(Cluster& cluster, const ClusterSpec& spec, int node) {
  build_switched_domain(cluster, spec, node, DeviceKind::nvswitch, "nvswitch", LinkTechnology::nvlink);
}

void build_pcie(Cluster& cluster, const ClusterSpec& spec, int node) {
  build_switched_domain(cluster, spec, node, DeviceKind::pcie_switch, "pcie_switch", LinkTechnology::pcie);
}

constexpr ScaleUpBuilder k_scale_up_builders[] = {
    {"nvswitch", &build_nvswitch},
    {"pcie", &build_pcie},
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

// NICs of one node and their PCIe links. Every GPU gets a NIC (GPU g uses NIC g * nics / gpus) and,
// when there are more NICs than GPUs, every NIC gets a GPU (NIC j hangs off GPU j * gpus / nics).
void build_nics(Cluster& cluster, const ClusterSpec& spec, int node, NodeLayout& layout) {
  const NodeSpec& n = spec.node;
  const int first_gpu = node * n.gpus;
  for (int j = 0; j < n.nics; ++j) {
    layout.nic_devices.push_back(
        cluster.add_device(Device{.kind = DeviceKind::nic,
                                  .name = "node" + std::to_string(node) + "/nic" + std::to_string(j),
                                  .node = node,
                                  .local_index = j,
                                  .forwards = true}));
  }
  if (n.nics == 0) return;
  const double bandwidth_Bps = n.pcie_bandwidth_GBps * units::kGBpsToBps;
  const auto nic = [&](int j) { return layout.nic(node, j); };
  if (n.nics <= n.gpus) {
    for (int g = 0; g < n.gpus; ++g) {
      const int j = static_cast<int>(static_cast<std::int64_t>(g) * n.nics / n.gpus);
      cluster.add_duplex_link(first_gpu + g, nic(j), bandwidth_Bps, 0.0, LinkTechnology::pcie);
    }
  } else {
    for (int j = 0; j < n.nics; ++j) {
      const int g = static_cast<int>(static_cast<std::int64_t>(j) * n.gpus / n.nics);
      cluster.add_duplex_link(first_gpu + g, nic(j), bandwidth_Bps, 0.0, LinkTechnology::pcie);
    }
  }
}

}  // namespace

std::vector<std::string> scale_up_types() {
  std::vector<std::string> out;
  for (const auto& b : k_scale_up_builders)
    out.emplace_back(b.type);
  return out;
}

NodeLayout build_nodes(Cluster& cluster, const ClusterSpec& spec) {
  const NodeSpec& n = spec.node;
  const ScaleUpBuilder& scale_up = find_scale_up(spec);
  // All GPUs first: device index == GPU rank.
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
  for (int node = 0; node < spec.nodes; ++node) {
    scale_up.build(cluster, spec, node);
    build_nics(cluster, spec, node, layout);
  }
  return layout;
}

}  // namespace clustersim
