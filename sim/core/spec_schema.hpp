#pragma once
// A spec's schema as rows: each SpecField (sim/core/spec_field.hpp) with the struct member it fills,
// and the reader and the writer every row shares. A spec declares its rows once
// (workloads/workload_schema.cpp, topologies/cluster_schema.cpp); its parser then reads a section with
// read_schema_fields and its writer writes it with write_schema_fields.
//
// Internal header (uses nlohmann::json and JsonReader).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/json_reader.hpp"
#include "sim/core/spec_field.hpp"

namespace clustersim {

// A member's value as JSON and back. Specialize for an enum (its name).
template <typename T>
struct FieldCodec {
  static nlohmann::json encode(const T& v) { return nlohmann::json(v); }
  static void decode(const nlohmann::json& v, T& out) { out = v.get<T>(); }
};

// An optional member: null when not given.
template <typename T>
struct FieldCodec<std::optional<T>> {
  static nlohmann::json encode(const std::optional<T>& v) { return v ? FieldCodec<T>::encode(*v) : nullptr; }
  static void decode(const nlohmann::json& v, std::optional<T>& out) {
    T value{};
    FieldCodec<T>::decode(v, value);
    out = std::move(value);
  }
};

// The member reached from the spec through a chain of member pointers (&WorkloadSpec::model,
// &ModelSpec::moe, &MoeSpec::experts).
template <auto First, auto... Rest, typename S>
auto& schema_member(S& s) {
  if constexpr (sizeof...(Rest) == 0)
    return s.*First;
  else
    return schema_member<Rest...>(s.*First);
}

template <typename Spec>
struct SchemaRow {
  using Getter = nlohmann::json (*)(const Spec&);
  using Setter = void (*)(Spec&, const nlohmann::json&);
  // Reads the field itself when it needs more than its type and range (a file relative to the spec).
  using Reader = void (*)(JsonReader&, const SpecField&, Spec&);
  // Why the field does not apply to this spec ("" when it does): given anyway, it is refused with
  // "<key> <why>"; when writing, it is left out.
  using Applicability = std::string (*)(const Spec&);

  SpecField field;
  Getter get = nullptr;
  Setter set = nullptr;
  std::string_view omitted_when = {};  // JSON text: the writer leaves the key out at this value
  Reader read = nullptr;
  Applicability applies = nullptr;
};

template <typename Spec, auto... Members>
nlohmann::json get_schema_member(const Spec& s) {
  using T = std::remove_cvref_t<decltype(schema_member<Members...>(s))>;
  return FieldCodec<T>::encode(schema_member<Members...>(s));
}

template <typename Spec, auto... Members>
void set_schema_member(Spec& s, const nlohmann::json& v) {
  using T = std::remove_cvref_t<decltype(schema_member<Members...>(s))>;
  FieldCodec<T>::decode(v, schema_member<Members...>(s));
}

// A row for the member at the end of `Members` (from Spec).
template <typename Spec, auto... Members>
SchemaRow<Spec> schema_row(SpecField field, std::string_view omitted_when = {}) {
  return SchemaRow<Spec>{std::move(field), &get_schema_member<Spec, Members...>, &set_schema_member<Spec, Members...>,
                         omitted_when};
}

// The value of `f` in `r`, checked against its type and range (SpecError at its path); null when the
// key is left out and not required.
nlohmann::json read_field_value(JsonReader& r, const SpecField& f);

// Reads the fields of `section` ("", "model", "cost.prices", ...) from `r` into `spec`, in the rows'
// order; a key left out takes its default (a field without one keeps the struct's "not given").
// Nested objects and unknown keys are the caller's.
template <typename Spec>
void read_schema_fields(std::span<const SchemaRow<Spec>> rows, JsonReader& r, std::string_view section, Spec& spec) {
  for (const SchemaRow<Spec>& row : rows) {
    const SpecField& f = row.field;
    if (f.section() != section) continue;
    if (row.applies != nullptr && r.has(f.key())) {
      const std::string why = row.applies(spec);
      if (!why.empty()) r.fail(f.key(), std::string(f.key()) + " " + why);
    }
    if (row.read != nullptr) {
      row.read(r, f, spec);
      continue;
    }
    nlohmann::json v = read_field_value(r, f);
    if (v.is_null()) {
      if (f.default_json.empty()) continue;
      v = nlohmann::json::parse(f.default_json);
    }
    row.set(spec, v);
  }
}

// Writes the fields of `section` into `out` in the rows' order, leaving out those that are not given
// (null, or the row's omitted_when value) or do not apply.
template <typename Spec>
void write_schema_fields(std::span<const SchemaRow<Spec>> rows, nlohmann::ordered_json& out, std::string_view section,
                         const Spec& spec) {
  for (const SchemaRow<Spec>& row : rows) {
    const SpecField& f = row.field;
    if (f.section() != section) continue;
    if (row.applies != nullptr && !row.applies(spec).empty()) continue;
    const nlohmann::json v = row.get(spec);
    if (v.is_null() || (!row.omitted_when.empty() && v == nlohmann::json::parse(row.omitted_when))) continue;
    out[std::string(f.key())] = nlohmann::ordered_json::parse(v.dump());
  }
}

// The fields of `rows`, for the schema's public list.
template <typename Spec>
std::vector<SpecField> schema_fields(std::span<const SchemaRow<Spec>> rows) {
  std::vector<SpecField> out;
  for (const SchemaRow<Spec>& r : rows)
    out.push_back(r.field);
  return out;
}

// Builders of a field: its path, type, whether it is stable, its default (JSON text) or, for a
// value derived from other keys, the docs' words for it (neither: required), and its meaning; then
// its range, unit, values and the docs' type column.
SpecField spec_field(std::string_view path, FieldType type, bool stable, std::string_view default_json,
                     std::string_view default_doc, std::string_view doc);
SpecField integer_field(std::string_view path, bool stable, std::int64_t min, std::int64_t max,
                        std::string_view default_json, std::string_view default_doc, std::string_view doc);
SpecField number_field(std::string_view path, bool stable, NumberRange range, std::string_view default_json,
                       std::string_view default_doc, std::string_view unit, std::string_view doc);
SpecField with_unit(SpecField f, std::string_view unit);
SpecField with_known_values(SpecField f, std::vector<std::string> (*choices)());
SpecField with_type_doc(SpecField f, std::string_view type_doc);

}  // namespace clustersim
