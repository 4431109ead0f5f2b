#pragma once
// Exports of a built cluster: a SimGrid 3.32 platform file, a GraphViz DOT picture, JSON. Each is
// text; a registry maps the CLI's --format names to them. (The simulator itself builds its SimGrid
// platform in C++ from the same Cluster: sim/network/flow_backend.cpp.)
#include <span>
#include <string>
#include <string_view>

#include "topologies/cluster.hpp"

namespace clustersim {

// A SimGrid platform (XML, DTD version 4.1) loadable with sg4::Engine::load_platform (routes exist once
// the platform is sealed: Engine::seal_platform() or run()): one zone with
// Dijkstra routing; GPUs are hosts of `host_speed_flops`, every other device a router; every ordered
// pair of devices joined by links becomes one SimGrid link (parallel links merged: bandwidths add)
// and a one-hop route. SimGrid then routes along shortest paths in link count, as Cluster::route does,
// but without ECMP (it takes one of the equal-cost paths) and without the rule that GPUs never forward:
// it may relay through a GPU where that is no longer (GPU -> NVSwitch -> GPU -> NIC on a rail-optimized
// fabric, as NCCL's PXN does) or, with nvlink_mesh / nvlink_pairs nodes, shorter.
std::string export_simgrid_xml(const Cluster& cluster, double host_speed_flops = 1e12);
// GraphViz: one box per node (GPUs, scale-up switch, PCIe devices, NICs), fabric switches ranked by
// tier, one edge per cable (duplex pairs and parallel links merged, labelled "2 x 400G").
std::string export_dot(const Cluster& cluster);
// {"spec": ..., "devices": [...], "links": [...]} with SI units (bandwidth_Bps, latency_s).
std::string export_json(const Cluster& cluster);

struct ExportFormat {
  std::string_view name;  // simgrid | dot | json
  std::string_view summary;
  std::string (*write)(const Cluster& cluster);
};

std::span<const ExportFormat> export_formats();
// The format named `name`, or nullptr.
const ExportFormat* find_export_format(std::string_view name);

}  // namespace clustersim
