#pragma once
// The registry of fabric builders, keyed by fabric.type. A fabric builder wires the NICs that
// build_nodes() created into a network of switches (or links the GPUs directly: torus; or leaves them
// alone: single_node). Switched fabrics are built once per plane (fabric.planes): every NIC has one
// port per plane at nic_bandwidth_Gbps / planes, and each plane is an independent copy of the fabric.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/cluster.hpp"
#include "topologies/node_builder.hpp"

namespace clustersim {

// One copy of a switched fabric.
struct FabricPlane {
  int index = 0;
  int count = 1;
  std::string prefix;             // "" for a single plane, "plane<p>/" otherwise (device names)
  double port_bandwidth_Bps = 0;  // each NIC's port on this plane: nic_bandwidth_Gbps / planes
};

using FabricBuildFn = void (*)(Cluster& cluster, const ClusterSpec& spec, const NodeLayout& nodes,
                               const FabricPlane& plane);
// The builder's closed form of the bisection bandwidth (bytes/s, one direction) of the cluster it
// built, or nothing when no closed form covers this instance (metrics then compute it by max-flow).
using FabricBisectionFn = std::optional<double> (*)(const Cluster& cluster);

struct FabricBuilder {
  std::string_view type;     // the fabric.type value that selects it
  std::string_view summary;  // one line for help texts
  FabricBuildFn build;
  bool per_plane;               // built once per plane over the NIC ports
  FabricBisectionFn bisection;  // nullptr: no closed form
};

// The builder for `type`, or nullptr.
const FabricBuilder* find_fabric_builder(std::string_view type);
// The supported types, in registry order ("fat_tree", "rail_optimized", ...).
std::vector<std::string> fabric_types();

// Builds the fabric of `spec` (its builder, once or once per plane). Throws SpecError.
void build_fabric(Cluster& cluster, const ClusterSpec& spec, const NodeLayout& nodes);

// The link technology of fabric.technology. Throws SpecError at /fabric/technology.
LinkTechnology fabric_technology(const ClusterSpec& spec);

}  // namespace clustersim
