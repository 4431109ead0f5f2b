#include "sim/core/spec_field.hpp"

#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

namespace clustersim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();

// A number as the docs write it: whole numbers without a fraction (10, 100000), others as JSON does.
std::string format_number(const nlohmann::json& v) {
  if (v.is_number_float() && std::abs(v.get<double>()) < 1e15 && v.get<double>() == std::floor(v.get<double>()))
    return std::to_string(static_cast<std::int64_t>(v.get<double>()));
  return v.dump();
}

std::string type_cell(const SpecField& f) {
  std::string out;
  if (!f.type_doc.empty()) {
    out = std::string(f.type_doc);
  } else {
    switch (f.type) {
      case FieldType::integer:
        out = "integer";
        if (f.max_integer == INT_MAX || f.max_integer == kMaxInt64)
          out += " >= " + std::to_string(f.min_integer);
        else
          out += " " + std::to_string(f.min_integer) + " .. " + std::to_string(f.max_integer);
        break;
      case FieldType::number:
        out = "number";
        if (f.max_number == kInf)
          out += std::string(f.min_exclusive ? " > " : " >= ") + format_number(f.min_number);
        else if (f.min_exclusive)
          out += " > " + format_number(f.min_number) + ", at most " + format_number(f.max_number);
        else
          out += " " + format_number(f.min_number) + " .. " + format_number(f.max_number);
        break;
      case FieldType::boolean:
        out = "boolean";
        break;
      case FieldType::string:
        out = "string";
        break;
      case FieldType::choice:
        for (const auto& c : f.choices())
          out += (out.empty() ? "`" : " \\| `") + c + "`";
        break;
      case FieldType::array:
        out = "array";
        break;
    }
  }
  if (!f.unit.empty()) out += ", " + std::string(f.unit);
  return out;
}

std::string default_cell(const SpecField& f) {
  if (!f.default_doc.empty()) return std::string(f.default_doc);
  if (f.required) return "required";
  const nlohmann::json v = nlohmann::json::parse(f.default_json);
  if (v.is_string()) return v.get<std::string>().empty() ? "\"\"" : "`" + v.get<std::string>() + "`";
  return format_number(v);
}

}  // namespace

const char* to_string(FieldType type) {
  constexpr const char* kNames[] = {"integer", "number", "boolean", "string", "choice", "array"};  // FieldType's order
  return kNames[static_cast<std::size_t>(type)];
}

std::string_view SpecField::key() const {
  const auto dot = path.rfind('.');
  return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

std::string_view SpecField::section() const {
  const auto dot = path.rfind('.');
  return dot == std::string_view::npos ? std::string_view{} : path.substr(0, dot);
}

std::string spec_fields_markdown(std::span<const SpecField> fields) {
  std::string out = "| key | type, unit | default | meaning |\n| --- | --- | --- | --- |\n";
  for (const SpecField& f : fields) {
    out += "| `" + std::string(f.path) + "`" + (f.stable ? " *stable*" : "") + " | " + type_cell(f) + " | " +
           default_cell(f) + " |" + (f.doc.empty() ? std::string(" ") : " " + std::string(f.doc) + " ") + "|\n";
  }
  return out;
}

std::string spec_fields_json(std::span<const SpecField> fields) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const SpecField& f : fields) {
    nlohmann::ordered_json j;
    j["path"] = f.path;
    j["key"] = f.key();
    j["section"] = f.section();
    j["type"] = to_string(f.type);
    j["stable"] = f.stable;
    j["required"] = f.required;
    if (f.type == FieldType::integer) {
      j["min"] = f.min_integer;
      j["max"] = f.max_integer;
    } else if (f.type == FieldType::number) {
      j["min"] = f.min_number;
      j["max"] = f.max_number == kInf ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(f.max_number);
      j["min_exclusive"] = f.min_exclusive;
    }
    j["default"] =
        f.default_json.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json::parse(f.default_json);
    j["default_doc"] = f.default_doc;
    j["unit"] = f.unit;
    j["choices"] = f.choices != nullptr ? f.choices() : std::vector<std::string>{};
    j["doc"] = f.doc;
    out.push_back(std::move(j));
  }
  return out.dump(2);
}

}  // namespace clustersim
