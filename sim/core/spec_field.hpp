#pragma once
// One key of a spec, declared once (key, type, range, default, unit, meaning): a spec's schema is a
// list of these (workloads/workload_schema.hpp, topologies/cluster_schema.hpp). It drives the
// spec's reader and writer (sim/core/spec_schema.hpp), docs/specs.md's tables and the Python side.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim {

// array: a JSON array, whose elements its row reads (type_doc says what they are).
enum class FieldType : std::uint8_t { integer, number, boolean, string, choice, array };
const char* to_string(FieldType type);

struct SpecField {
  std::string_view path;  // dotted, from the document's root: "training.micro_batch", "power.pue"
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

// docs/specs.md's table of `fields` (a header row, then one row per field), and the fields as JSON
// (an array of objects: path, key, section, type, stable, required, min, max, default, default_doc,
// unit, choices, doc).
std::string spec_fields_markdown(std::span<const SpecField> fields);
std::string spec_fields_json(std::span<const SpecField> fields);

}  // namespace clustersim
