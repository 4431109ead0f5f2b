#pragma once
// The report's schema (docs/architecture.md, "Report"): every section's keys in the report's order,
// with their JSON type and the value a section holds when its model leaves the key at its default.
// Derived from the writer (Report::to_json) itself, so the schema cannot drift from the reports; the
// Python package builds its dataclasses and DataFrame columns from it (bindings/python/clustersim/report.py).
#include <string>

namespace clustersim {

// {"sections": {PATH: [{"key", "type", "default"}, ...]}}. PATH is "" for the top level, then the
// dotted path of each object ("memory", "run.parallelism") and of each table: a list of objects
// ("communication", "power.by_device"), whose entry lists a row's columns. "type" is integer, number,
// boolean, string, array (of scalars), object (its keys under its own PATH; a map when it has none)
// or table. "default" is the value's JSON for scalars and arrays; absent for objects and tables.
std::string report_schema_json();

}  // namespace clustersim
