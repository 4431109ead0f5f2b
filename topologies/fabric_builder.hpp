#pragma once
// The registry of fabric builders, keyed by fabric.type. A fabric builder wires the NICs that
// build_nodes() created into a network of switches (or leaves them alone: single_node).
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/cluster.hpp"
#include "topologies/node_builder.hpp"

namespace clustersim {

using FabricBuildFn = void (*)(Cluster& cluster, const ClusterSpec& spec, const NodeLayout& nodes);

struct FabricBuilder {
  std::string_view type;  // the fabric.type value that selects it
  FabricBuildFn build;
};

std::span<const FabricBuilder> fabric_builders();
// The builder for `type`, or nullptr.
const FabricBuilder* find_fabric_builder(std::string_view type);
// The supported types, in registry order ("fat_tree", "single_node").
std::vector<std::string> fabric_types();

}  // namespace clustersim
