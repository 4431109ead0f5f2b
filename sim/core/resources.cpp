#include "sim/core/resources.hpp"

#include <algorithm>

namespace clustersim {

const Resource* find_resource(std::span<const Resource> table, std::string_view name) {
  for (const Resource& r : table) {
    if (name == r.name) return &r;
  }
  return nullptr;
}

std::vector<std::string> resource_names(std::span<const Resource> table) {
  std::vector<std::string> names;
  names.reserve(table.size());
  for (const Resource& r : table) names.emplace_back(r.name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace clustersim
