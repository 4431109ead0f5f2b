#include "sim/report/report_schema.hpp"

#include <string>

#include <nlohmann/json.hpp>

#include "sim/report/report.hpp"

namespace clustersim {
namespace {

using Json = nlohmann::ordered_json;

// A report with every optional section present and one default row in every table: its JSON holds
// every key a report can have (but the "unknown" map, written only when a figure is unknown).
Report sample_report() {
  Report r;
  r.step_time_interval = StepTimeInterval{};
  r.communication.emplace_back();
  r.links.emplace_back();
  r.links.back().users.emplace_back();
  r.power = PowerStats{};
  r.power->by_device.emplace_back();
  r.power->gpu_classes.emplace_back();
  r.cost = CostStats{};
  r.cost->bill_of_materials.emplace_back();
  r.time_to_train = TimeToTrainStats{};
  r.time_to_train->causes.emplace_back();
  r.provenance.derived_defaults.push_back({"", "null", ""});
  return r;
}

const char* type_of(const Json& v) {
  if (v.is_object()) return "object";
  if (v.is_array()) return !v.empty() && v.front().is_object() ? "table" : "array";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer()) return "integer";
  if (v.is_number()) return "number";
  return "string";
}

// The fields of the object `o` at `path` into `sections`, then those of its objects and tables.
void add_section(const Json& o, const std::string& path, Json& sections) {
  Json fields = Json::array();
  for (const auto& [key, value] : o.items()) {
    const std::string type = type_of(value);
    Json field{{"key", key}, {"type", type}};
    if (type != "object" && type != "table") field["default"] = value;
    fields.push_back(std::move(field));
  }
  sections[path] = std::move(fields);
  for (const auto& [key, value] : o.items()) {
    const std::string sub = path.empty() ? key : path + "." + key;
    if (value.is_object() && !value.empty()) add_section(value, sub, sections);
    if (value.is_array() && !value.empty() && value.front().is_object()) add_section(value.front(), sub, sections);
  }
}

}  // namespace

std::string report_schema_json() {
  Json sections = Json::object();
  add_section(Json::parse(sample_report().to_json(-1)), "", sections);
  return Json{{"sections", sections}}.dump();
}

}  // namespace clustersim
