#pragma once
// The cluster schema's reader and writer (cluster_schema.hpp), for cluster_spec.cpp.
//
// Internal header (uses nlohmann::json and JsonReader); the public API is cluster_spec.hpp.
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/core/json_reader.hpp"
#include "topologies/cluster_spec.hpp"

namespace clustersim {

// Reads the declared fields of `section` ("power", "cost", "cost.prices") into `spec` (defaults for
// the keys left out); nested objects and unknown keys are the caller's.
void read_cluster_fields(JsonReader& r, std::string_view section, ClusterSpec& spec);
// Writes them into `out`, leaving out those not given.
void write_cluster_fields(nlohmann::ordered_json& out, std::string_view section, const ClusterSpec& spec);

}  // namespace clustersim
