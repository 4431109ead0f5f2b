#include "sim/core/json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sim/core/error.hpp"

namespace clustersim {
namespace {

std::string format_number(double v) {
  std::ostringstream os;
  os.precision(12);
  os << v;
  return os.str();
}

// Levenshtein distance, for "did you mean" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::string NumberRange::describe() const {
  const bool has_min = std::isfinite(min);
  const bool has_max = std::isfinite(max);
  if (has_min && has_max && min_exclusive) return "a number > " + format_number(min) + " and <= " + format_number(max);
  if (has_min && has_max) return "a number between " + format_number(min) + " and " + format_number(max);
  if (has_min) return std::string("a number ") + (min_exclusive ? "> " : ">= ") + format_number(min);
  if (has_max) return "a number <= " + format_number(max);
  return "a number";
}

std::string describe_json(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::boolean: return std::string("the boolean ") + (v.get<bool>() ? "true" : "false");
    case nlohmann::json::value_t::string: return "the string " + v.dump();
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float: return "the number " + v.dump();
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::object: return "an object";
    default: return "a value of unexpected type";
  }
}

std::string json_pointer_escape(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

JsonReader::JsonReader(const nlohmann::json& value, std::string file, std::string path)
    : value_(value), file_(std::move(file)), path_(std::move(path)) {
  if (!value_.is_object()) throw SpecError(file_, path_, "expected an object, got " + describe_json(value_));
}

bool JsonReader::has(std::string_view key) const {
  auto it = value_.find(std::string(key));
  return it != value_.end() && !it->is_null();
}

std::string JsonReader::path_of(std::string_view key) const { return path_ + "/" + json_pointer_escape(key); }

const nlohmann::json* JsonReader::find(std::string_view key) {
  read_.emplace(key);
  auto it = value_.find(std::string(key));
  if (it == value_.end() || it->is_null()) return nullptr;
  return &*it;
}

const nlohmann::json& JsonReader::require(std::string_view key) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) fail(key, "required key is missing");
  return *v;
}

void JsonReader::fail(std::string_view key, const std::string& message) const {
  throw SpecError(file_, path_of(key), message);
}

void JsonReader::fail_here(const std::string& message) const { throw SpecError(file_, path_, message); }

double JsonReader::number(std::string_view key, NumberRange range) {
  const nlohmann::json& v = require(key);
  if (!v.is_number()) fail(key, "expected " + range.describe() + ", got " + describe_json(v));
  const double x = v.get<double>();
  const bool below = range.min_exclusive ? !(x > range.min) : !(x >= range.min);
  if (!std::isfinite(x) || below || x > range.max) fail(key, "expected " + range.describe() + ", got " + format_number(x));
  return x;
}

std::optional<double> JsonReader::optional_number(std::string_view key, NumberRange range) {
  if (find(key) == nullptr) return std::nullopt;
  return number(key, range);
}

double JsonReader::number_or(std::string_view key, double fallback, NumberRange range) {
  return optional_number(key, range).value_or(fallback);
}

std::int64_t JsonReader::integer(std::string_view key, std::int64_t min, std::int64_t max) {
  const nlohmann::json& v = require(key);
  std::string expected = "an integer";
  if (min != std::numeric_limits<std::int64_t>::min() && max != std::numeric_limits<std::int64_t>::max())
    expected += " between " + std::to_string(min) + " and " + std::to_string(max);
  else if (min != std::numeric_limits<std::int64_t>::min())
    expected += " >= " + std::to_string(min);
  else if (max != std::numeric_limits<std::int64_t>::max())
    expected += " <= " + std::to_string(max);
  bool integral = v.is_number_integer() || v.is_number_unsigned();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    integral = std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9e15;
  }
  if (!integral) fail(key, "expected " + expected + ", got " + describe_json(v));
  // Beyond 2^63 - 1 (18446744073709551615 was read as -1): named as written.
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max))
    fail(key, "expected " + expected + ", got " + v.dump());
  const auto x = v.is_number_float() ? static_cast<std::int64_t>(v.get<double>()) : v.get<std::int64_t>();
  if (x < min || x > max) fail(key, "expected " + expected + ", got " + std::to_string(x));
  return x;
}

std::optional<std::int64_t> JsonReader::optional_integer(std::string_view key, std::int64_t min, std::int64_t max) {
  if (find(key) == nullptr) return std::nullopt;
  return integer(key, min, max);
}

std::int64_t JsonReader::integer_or(std::string_view key, std::int64_t fallback, std::int64_t min,
                                    std::int64_t max) {
  return optional_integer(key, min, max).value_or(fallback);
}

bool JsonReader::boolean(std::string_view key) {
  const nlohmann::json& v = require(key);
  if (!v.is_boolean()) fail(key, "expected true or false, got " + describe_json(v));
  return v.get<bool>();
}

bool JsonReader::boolean_or(std::string_view key, bool fallback) {
  if (find(key) == nullptr) return fallback;
  return boolean(key);
}

std::string JsonReader::string(std::string_view key) {
  const nlohmann::json& v = require(key);
  if (!v.is_string()) fail(key, "expected a string, got " + describe_json(v));
  return v.get<std::string>();
}

std::optional<std::string> JsonReader::optional_string(std::string_view key) {
  if (find(key) == nullptr) return std::nullopt;
  return string(key);
}

std::string JsonReader::choice(std::string_view key, const std::vector<std::string>& allowed) {
  const std::string s = string(key);
  if (std::find(allowed.begin(), allowed.end(), s) == allowed.end()) {
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    fail(key, "expected one of " + list + ", got \"" + s + "\"");
  }
  return s;
}

std::string JsonReader::choice_or(std::string_view key, const std::vector<std::string>& allowed, std::string fallback) {
  if (find(key) == nullptr) return fallback;
  return choice(key, allowed);
}

JsonReader JsonReader::object(std::string_view key) {
  const nlohmann::json& v = require(key);
  if (!v.is_object()) fail(key, "expected an object, got " + describe_json(v));
  return JsonReader(v, file_, path_of(key));
}

std::optional<JsonReader> JsonReader::optional_object(std::string_view key) {
  if (find(key) == nullptr) return std::nullopt;
  return object(key);
}

const nlohmann::json& JsonReader::array(std::string_view key) {
  const nlohmann::json& v = require(key);
  if (!v.is_array()) fail(key, "expected an array, got " + describe_json(v));
  return v;
}

JsonReader JsonReader::element(std::string_view array_key, std::size_t index) const {
  const nlohmann::json& arr = value_.at(std::string(array_key));
  return JsonReader(arr.at(index), file_, path_of(array_key) + "/" + std::to_string(index));
}

const nlohmann::json& JsonReader::raw(std::string_view key) {
  static const nlohmann::json null_value;  // immutable sentinel
  const nlohmann::json* v = find(key);
  return v == nullptr ? null_value : *v;
}

void JsonReader::accept(std::string_view key) { read_.emplace(key); }

void JsonReader::finish() const {
  for (auto it = value_.begin(); it != value_.end(); ++it) {
    if (read_.count(it.key()) != 0) continue;
    std::string best;
    std::size_t best_distance = 3;  // suggest only close matches
    for (const auto& known : read_) {
      const std::size_t d = edit_distance(it.key(), known);
      if (d < best_distance) {
        best_distance = d;
        best = known;
      }
    }
    std::string msg = "unknown key '" + it.key() + "'";
    if (!best.empty()) msg += " (did you mean '" + best + "'?)";
    throw SpecError(file_, path_of(it.key()), msg);
  }
}

}  // namespace clustersim
