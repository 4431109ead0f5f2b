#include "topologies/fabric_builder.hpp"

#include "topologies/fat_tree_builder.hpp"
#include "topologies/single_node_builder.hpp"

namespace clustersim {
namespace {

// The registry. A new fabric type is one line here and one *_builder.cpp file.
constexpr FabricBuilder k_fabric_builders[] = {
    {"fat_tree", &build_fat_tree},
    {"single_node", &build_single_node},
};

}  // namespace

std::span<const FabricBuilder> fabric_builders() {
  return k_fabric_builders;
}

const FabricBuilder* find_fabric_builder(std::string_view type) {
  for (const auto& b : k_fabric_builders) {
    if (b.type == type) return &b;
  }
  return nullptr;
}

std::vector<std::string> fabric_types() {
  std::vector<std::string> out;
  for (const auto& b : k_fabric_builders)
    out.emplace_back(b.type);
  return out;
}

}  // namespace clustersim
