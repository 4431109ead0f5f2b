#pragma once
// A report section's keys declared once, as a table of (key, member, how it reads back), driving both
// its JSON writer and its reader: the training report (report.cpp) and the serving report
// (sim/serving/serving_report.cpp). Keys are written in the table's order (nlohmann::ordered_json).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace clustersim {

// How a section's key is read back: always written (required); absent from reports written before
// the key existed (absent_zero: 0, false or ""); null when unknown (null_nan: NaN; absent_zero_null_nan:
// also 0 when absent); absent or null when infinite (infinity: written as null when infinite).
enum class ReadBack { required, absent_zero, null_nan, absent_zero_null_nan, infinity };

// One key of a report section and the member it holds.
template <class S>
struct JsonField {
  const char* key;
  std::variant<double S::*, int S::*, bool S::*, std::int64_t S::*, std::uint64_t S::*, std::string S::*> member;
  ReadBack read_back = ReadBack::required;
};

// How numbers that may be unknown, absent or infinite are read and written.

// A number that may be unknown (null: NaN).
inline double number_or_nan(const nlohmann::ordered_json& j, const char* key) {
  const nlohmann::ordered_json& v = j.at(key);
  return v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>();
}

// An optional number (reports written before a key existed lack it).
inline double number_or_zero(const nlohmann::ordered_json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? 0.0 : it->get<double>();
}

// A figure that may be infinite (no failures: no MTBF, no checkpoint interval) is null in JSON.
inline nlohmann::ordered_json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}
inline double number_or_infinity(const nlohmann::ordered_json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? std::numeric_limits<double>::infinity() : it->get<double>();
}

// The fields' keys in their order, as a JSON object's members.
template <class S, std::size_t N>
void write_fields(nlohmann::ordered_json& j, const S& s, const JsonField<S> (&fields)[N]) {
  for (const JsonField<S>& f : fields)
    std::visit(
        [&](auto m) {
          if constexpr (std::is_same_v<std::remove_cvref_t<decltype(s.*m)>, double>)
            j[f.key] = f.read_back == ReadBack::infinity ? finite_or_null(s.*m) : nlohmann::ordered_json(s.*m);
          else
            j[f.key] = s.*m;
        },
        f.member);
}

template <class S, std::size_t N>
void read_fields(const nlohmann::ordered_json& j, S& s, const JsonField<S> (&fields)[N]) {
  for (const JsonField<S>& f : fields)
    std::visit(
        [&](auto m) {
          using T = std::remove_cvref_t<decltype(s.*m)>;
          if constexpr (std::is_same_v<T, double>) {
            switch (f.read_back) {
              case ReadBack::required:
                s.*m = j.at(f.key).template get<double>();
                break;
              case ReadBack::absent_zero:
                s.*m = number_or_zero(j, f.key);
                break;
              case ReadBack::null_nan:
                s.*m = number_or_nan(j, f.key);
                break;
              case ReadBack::absent_zero_null_nan:
                s.*m = j.contains(f.key) ? number_or_nan(j, f.key) : 0.0;
                break;
              case ReadBack::infinity:
                s.*m = number_or_infinity(j, f.key);
                break;
            }
          } else {
            s.*m = f.read_back == ReadBack::required ? j.at(f.key).template get<T>() : j.value(f.key, T{});
          }
        },
        f.member);
}

// The fields as a JSON object.
template <class S, std::size_t N>
nlohmann::ordered_json fields_json(const S& s, const JsonField<S> (&fields)[N]) {
  nlohmann::ordered_json j;
  write_fields(j, s, fields);
  return j;
}

// A section's list (one object per element, every key required).
template <class S, std::size_t N>
nlohmann::ordered_json rows_json(const std::vector<S>& rows, const JsonField<S> (&fields)[N]) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const S& r : rows)
    out.push_back(fields_json(r, fields));
  return out;
}

template <class S, std::size_t N>
void read_rows(const nlohmann::ordered_json& j, const char* key, std::vector<S>& rows,
               const JsonField<S> (&fields)[N]) {
  if (const auto it = j.find(key); it != j.end())
    for (const auto& e : *it) {
      S r;
      read_fields(e, r, fields);
      rows.push_back(std::move(r));
    }
}

// A list as columns: {key: [the rows' values]} in the fields' order.
template <class S, std::size_t N>
nlohmann::ordered_json columns_json(const std::vector<S>& rows, const JsonField<S> (&fields)[N]) {
  nlohmann::ordered_json out;
  for (const JsonField<S>& f : fields) {
    nlohmann::ordered_json column = nlohmann::ordered_json::array();
    for (const S& r : rows)
      std::visit([&](auto m) { column.push_back(r.*m); }, f.member);
    out[f.key] = std::move(column);
  }
  return out;
}

// A section whose fields are followed by one table (`rows_key`: a list of rows).
template <class S, class Row, std::size_t N, std::size_t M>
nlohmann::ordered_json section_json(const S& s, const JsonField<S> (&fields)[N], const char* rows_key,
                                    std::vector<Row> S::*rows, const JsonField<Row> (&row_fields)[M]) {
  nlohmann::ordered_json j = fields_json(s, fields);
  j[rows_key] = rows_json(s.*rows, row_fields);
  return j;
}

template <class S, class Row, std::size_t N, std::size_t M>
S section_from_json(const nlohmann::ordered_json& j, const JsonField<S> (&fields)[N], const char* rows_key,
                    std::vector<Row> S::*rows, const JsonField<Row> (&row_fields)[M]) {
  S s;
  read_fields(j, s, fields);
  read_rows(j, rows_key, s.*rows, row_fields);
  return s;
}

}  // namespace clustersim
