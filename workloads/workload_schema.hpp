#pragma once
// The workload spec's keys, declared once: each field's key, type, range, default, unit and meaning.
// The table drives the reader and the writer of workload_spec.cpp, docs/specs.md's workload table
// (workload_schema_markdown, `clustersim schema workload --markdown`) and the Python package (the
// module's workload_schema()).
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

// docs/specs.md's workload table (a header row, then one row per field), and the schema as JSON (an
// array of objects: path, type, stable, required, min, max, default, default_doc, unit, choices, doc).
std::string workload_schema_markdown();
std::string workload_schema_json();

}  // namespace clustersim
