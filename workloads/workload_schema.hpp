#pragma once
// The workload spec's keys, declared once: each field's key, type, range, default, unit and meaning.
// The table drives the reader and the writer of workload_spec.cpp, docs/specs.md's workload table
// (spec_fields_markdown of it, `clustersim schema workload --markdown`) and the Python package (the
// module's workload_schema(): spec_fields_json of it).
#include <span>
#include <string>
#include <string_view>

#include "sim/core/spec_field.hpp"

namespace clustersim {

using WorkloadField = SpecField;

// Every field, in the order the writer writes them.
std::span<const WorkloadField> workload_schema();
// The field at `path`, or nullptr.
const WorkloadField* find_workload_field(std::string_view path);

}  // namespace clustersim
