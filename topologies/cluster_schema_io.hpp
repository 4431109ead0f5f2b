#pragma once
// The cluster schema's reader and writer (cluster_schema.hpp), for cluster_spec.cpp.
//
// Internal header (uses nlohmann::json and JsonReader); the public API is cluster_spec.hpp.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/core/json_reader.hpp"
#include "topologies/cluster_spec.hpp"

namespace clustersim {

// Plausibility bounds of the spec's figures. They are not model figures: they refuse unit mistakes
// and values so large that the step's power, energy or time would overflow to infinity (a report
// cannot hold it) or so small that a transfer would take longer than the age of the universe.
inline constexpr double kMinLinkGbps = 1e-3;    // 1 Mb/s
inline constexpr double kMaxLinkGbps = 1e6;     // 1 Pb/s per NIC or link
inline constexpr double kMinPcieGBps = 1e-3;    // 1 MB/s
inline constexpr double kMaxPcieGBps = 1e5;     // 100 TB/s per PCIe link
inline constexpr double kMaxScaleUpGBps = 1e5;  // 100 TB/s per GPU (NVLink 5: 900 GB/s)
inline constexpr double kMaxLatencyUs = 1e6;    // one second per hop
inline constexpr int kMaxPlanes = 64;           // fabric.planes: NIC ports per NIC

// An optional integer >= min that must fit in an int; `fallback` when left out.
int read_int(JsonReader& r, std::string_view key, int fallback, int min);

// The catalogue id a GPU is (or starts from: an inline object's "base"); "" when unknown.
std::string gpu_catalogue_id(const ClusterSpec& spec);

// Reads the declared fields of `section` ("node", "node.scale_up", "fabric", "power", "cost",
// "cost.prices") into `spec` (defaults for the keys left out, derived defaults listed in
// spec.derived_defaults); nested objects and unknown keys are the caller's. The node is read before
// the fabric (whose planes and links use it).
void read_cluster_fields(JsonReader& r, std::string_view section, ClusterSpec& spec);
// Writes them into `out`, leaving out those not given.
void write_cluster_fields(nlohmann::ordered_json& out, std::string_view section, const ClusterSpec& spec);

}  // namespace clustersim
