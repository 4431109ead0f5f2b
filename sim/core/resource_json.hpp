#pragma once
// A catalogue compiled into the library as one JSON document (the price list, the network devices'
// power): found by name and parsed once by its owner.
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/core/resources.hpp"

namespace clustersim {

// The JSON of the entry called `name`; SimulationError(`missing`) when the library lacks it (a build
// defect: the owner's CMake list names the file).
nlohmann::json resource_json(std::span<const Resource> table, std::string_view name, const std::string& missing);

}  // namespace clustersim
