#pragma once
// The workload schema's reader and writer (workload_schema.hpp), for workload_spec.cpp.
//
// Internal header (uses nlohmann::json and JsonReader); the public API is workload_spec.hpp.
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/core/json_reader.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

// Reads the fields of `section` ("", "model", "model.moe", "training", "parallelism", "trace") from
// `r` into `spec` in the schema's order: each checked against its type and range (SpecError at its
// JSON path), a key left out takes its default. Nested objects and unknown keys are the caller's.
void read_workload_fields(JsonReader& r, std::string_view section, WorkloadSpec& spec);

// Writes the fields of `section` into `out` in the schema's order, leaving out those that are not
// given (kv_heads 0, an empty description) or do not apply (fp8_recipe without fp8).
void write_workload_fields(nlohmann::ordered_json& out, std::string_view section, const WorkloadSpec& spec);

}  // namespace clustersim
