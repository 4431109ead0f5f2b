#include "topologies/fabric_builder.hpp"

#include "sim/core/enum_names.hpp"
#include "sim/core/error.hpp"
#include "sim/core/named_table.hpp"
#include "sim/core/units.hpp"
#include "topologies/dragonfly_builder.hpp"
#include "topologies/fat_tree_builder.hpp"
#include "topologies/graph_builder.hpp"
#include "topologies/single_node_builder.hpp"
#include "topologies/spine_leaf_builder.hpp"
#include "topologies/torus_builder.hpp"

namespace clustersim {
namespace {

// The registry. A new fabric type is one line here and one *_builder.cpp file.
constexpr FabricBuilder k_fabric_builders[] = {
    {"fat_tree",
     "folded Clos of 2 or 3 tiers, any radix and oversubscription (rail_optimized: true puts NIC i on rail i)",
     &build_fat_tree, true, &fat_tree_bisection_Bps},
    {"rail_optimized", "fat-tree whose leaves each hold one rail (NIC i of every node), rails joined above",
     &build_fat_tree, true, &fat_tree_bisection_Bps},
    {"spine_leaf", "Ethernet (RoCE) leaf/spine: chosen spine count and radix, uplinks spread over the spines",
     &build_spine_leaf, true, &fat_tree_bisection_Bps},
    {"dragonfly", "groups of all-to-all routers joined by global links", &build_dragonfly, true,
     &dragonfly_bisection_Bps},
    {"torus", "GPUs linked directly in a 1D/2D/3D... torus with wrap-around", &build_torus, false,
     &torus_bisection_Bps},
    {"single_node", "no fabric (one node)", &build_single_node, false, nullptr},
    {"graph", "explicit devices and links (fabric.devices, fabric.links)", &build_graph, false, nullptr},
};

// The technologies a scale-out fabric may have (fabric.technology).
constexpr EnumName<LinkTechnology> k_fabric_technologies[] = {
    {LinkTechnology::infiniband, "infiniband"},
    {LinkTechnology::ethernet, "ethernet"},
    {LinkTechnology::nvlink, "nvlink"},
};

}  // namespace

const FabricBuilder* find_fabric_builder(std::string_view type) {
  return find_by_key<FabricBuilder>(k_fabric_builders, type, &FabricBuilder::type);
}

std::vector<std::string> fabric_types() {
  return keys_of<FabricBuilder>(k_fabric_builders, &FabricBuilder::type);
}

LinkTechnology fabric_technology(const ClusterSpec& spec) {
  if (const auto t = value_named(k_fabric_technologies, spec.fabric.technology)) return *t;
  throw SpecError(spec.source_file, "/fabric/technology",
                  "expected one of infiniband, ethernet, nvlink, got \"" + spec.fabric.technology + "\"");
}

void build_fabric(Cluster& cluster, const ClusterSpec& spec, const NodeLayout& nodes) {
  const FabricBuilder* fabric = find_fabric_builder(spec.fabric.type);
  if (fabric == nullptr) {
    std::string known;
    for (const auto& t : fabric_types())
      known += (known.empty() ? "" : ", ") + t;
    throw SpecError(spec.source_file, "/fabric/type",
                    "fabric type \"" + spec.fabric.type + "\" is not supported (supported: " + known + ")");
  }
  const int planes = spec.fabric.planes;
  if (planes < 1) throw SpecError(spec.source_file, "/fabric/planes", "expected an integer >= 1");
  if (planes > 1 && !fabric->per_plane)
    throw SpecError(spec.source_file, "/fabric/planes",
                    "fabric type " + spec.fabric.type + " has no planes, got " + std::to_string(planes));
  const double port_Bps = spec.node.nic_bandwidth_Gbps * units::kGbpsToBps / planes;
  for (int p = 0; p < planes; ++p) {
    const FabricPlane plane{p, planes, planes > 1 ? "plane" + std::to_string(p) + "/" : "", port_Bps};
    fabric->build(cluster, spec, nodes, plane);
  }
}

}  // namespace clustersim
