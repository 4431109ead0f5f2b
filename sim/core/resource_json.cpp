#include "sim/core/resource_json.hpp"

#include "sim/core/error.hpp"

namespace clustersim {

nlohmann::json resource_json(std::span<const Resource> table, std::string_view name, const std::string& missing) {
  const Resource* r = find_resource(table, name);
  if (r == nullptr) throw SimulationError(missing);
  return nlohmann::json::parse(r->text);
}

}  // namespace clustersim
