#include "sim/core/spec_schema.hpp"

namespace clustersim {

nlohmann::json read_field_value(JsonReader& r, const SpecField& f) {
  const std::string_view key = f.key();
  const NumberRange range{f.min_number, f.max_number, f.min_exclusive};
  if (!f.required && !r.has(key)) return nullptr;
  switch (f.type) {
    case FieldType::integer:
      return r.integer(key, f.min_integer, f.max_integer);
    case FieldType::number:
      return r.number(key, range);
    case FieldType::boolean:
      return r.boolean(key);
    case FieldType::string:
      return r.string(key);
    case FieldType::choice:
      return r.choice(key, f.choices());
    case FieldType::array:
      return r.array(key);
  }
  return nullptr;  // unreachable: every type is handled
}

SpecField spec_field(std::string_view path, FieldType type, bool stable, std::string_view default_json,
                     std::string_view default_doc, std::string_view doc) {
  SpecField f;
  f.path = path;
  f.type = type;
  f.stable = stable;
  f.required = default_json.empty() && default_doc.empty();
  f.default_json = default_json;
  f.default_doc = default_doc;
  f.doc = doc;
  return f;
}

SpecField integer_field(std::string_view path, bool stable, std::int64_t min, std::int64_t max,
                        std::string_view default_json, std::string_view default_doc, std::string_view doc) {
  SpecField f = spec_field(path, FieldType::integer, stable, default_json, default_doc, doc);
  f.min_integer = min;
  f.max_integer = max;
  return f;
}

SpecField number_field(std::string_view path, bool stable, NumberRange range, std::string_view default_json,
                       std::string_view default_doc, std::string_view unit, std::string_view doc) {
  SpecField f = with_unit(spec_field(path, FieldType::number, stable, default_json, default_doc, doc), unit);
  f.min_number = range.min;
  f.max_number = range.max;
  f.min_exclusive = range.min_exclusive;
  return f;
}

SpecField with_unit(SpecField f, std::string_view unit) {
  f.unit = unit;
  return f;
}

SpecField with_known_values(SpecField f, std::vector<std::string> (*choices)()) {
  f.choices = choices;
  return f;
}

SpecField with_type_doc(SpecField f, std::string_view type_doc) {
  f.type_doc = type_doc;
  return f;
}

}  // namespace clustersim
