#pragma once
// The workload spec's keys, declared once: each field's key, type, range, default, unit and meaning.
// The table drives the reader and the writer of workload_spec.cpp, docs/specs.md's workload table
// (workload_schema_markdown, `clustersim schema workload --markdown`) and the Python package (the
// module's workload_schema()).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim {

enum class FieldType : std::uint8_t { integer, number, boolean, string, choice };
const char* to_string(FieldType type);

struct WorkloadField {
  std::string_view path;  // dotted, from the document's root: "training.micro_batch", "model.moe.experts"
  FieldType type = FieldType::string;
  bool stable = false;    // relied upon by users and tests: never renamed
  bool required = false;  // no default: the spec must give it
  // integer: the accepted range; number: the same as doubles, min_exclusive for "> min".
  std::int64_t min_integer = 0;
  std::int64_t max_integer = 0;
  double min_number = 0;
  double max_number = 0;
  bool min_exclusive = false;
  // The value when the key is left out, as JSON text ("1", "\"bf16\"", "true"); empty when required
  // or when the value is derived from other keys (default_doc says how; the struct holds 0 or "").
  std::string_view default_json;
  std::string_view default_doc;                     // the docs' default column where default_json does not say it
  std::string_view unit;                            // "sequences", "us", ""
  std::string_view type_doc;                        // the docs' type column where the type and range do not say it
  std::vector<std::string> (*choices)() = nullptr;  // FieldType::choice: the accepted values
  std::string_view doc;                             // the docs' meaning column

  // The last key of the path ("micro_batch") and the section before it ("training", "model.moe", "").
  std::string_view key() const;
  std::string_view section() const;
};

// Every field, in the order the writer writes them.
std::span<const WorkloadField> workload_schema();
// The field at `path`, or nullptr.
const WorkloadField* find_workload_field(std::string_view path);

// docs/specs.md's workload table (a header row, then one row per field), and the schema as JSON (an
// array of objects: path, type, stable, required, min, max, default, default_doc, unit, choices, doc).
std::string workload_schema_markdown();
std::string workload_schema_json();

}  // namespace clustersim
