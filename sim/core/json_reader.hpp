#pragma once
// JsonReader: typed, validated access to one JSON object of a spec, remembering where it is.
//
// Every spec parser in clustersim reads through this class so that every bad value is reported the
// same way: the file, the JSON pointer of the value, and what was expected, e.g.
//   cluster.json: /fabric/oversubscription: expected a number >= 1, got -2
// Keys that were never read are typos or unsupported options: finish() refuses them, suggesting the
// closest known key ("unknown key 'oversubscripton' (did you mean 'oversubscription'?)").
//
// Internal header (uses nlohmann::json); public APIs take and return clustersim's own types.
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace clustersim {

// Bounds for a number. Defaults accept any finite value.
struct NumberRange {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;  // true: value must be > min (e.g. bandwidths)

  static NumberRange positive() { return {0.0, std::numeric_limits<double>::infinity(), true}; }
  static NumberRange non_negative() { return {0.0, std::numeric_limits<double>::infinity(), false}; }
  static NumberRange at_least(double v) { return {v, std::numeric_limits<double>::infinity(), false}; }
  static NumberRange between(double lo, double hi) { return {lo, hi, false}; }
  std::string describe() const;  // "a number > 0", "a number between 0 and 1"
};

class JsonReader {
public:
  // `value` must outlive the reader. `path` is the JSON pointer of `value` ("" for the document).
  JsonReader(const nlohmann::json& value, std::string file, std::string path = "");

  bool has(std::string_view key) const;
  std::string path_of(std::string_view key) const;
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }

  double number(std::string_view key, NumberRange range = {});
  std::optional<double> optional_number(std::string_view key, NumberRange range = {});
  double number_or(std::string_view key, double fallback, NumberRange range = {});

  std::int64_t integer(std::string_view key, std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                       std::int64_t max = std::numeric_limits<std::int64_t>::max());
  std::optional<std::int64_t> optional_integer(std::string_view key,
                                               std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                                               std::int64_t max = std::numeric_limits<std::int64_t>::max());
  std::int64_t integer_or(std::string_view key, std::int64_t fallback,
                          std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                          std::int64_t max = std::numeric_limits<std::int64_t>::max());

  bool boolean(std::string_view key);
  bool boolean_or(std::string_view key, bool fallback);

  std::string string(std::string_view key);
  std::optional<std::string> optional_string(std::string_view key);
  // One of `allowed` (listed in the error message when the value is not).
  std::string choice(std::string_view key, const std::vector<std::string>& allowed);
  std::string choice_or(std::string_view key, const std::vector<std::string>& allowed, std::string fallback);

  // A nested object. The returned reader refers into the same document.
  JsonReader object(std::string_view key);
  std::optional<JsonReader> optional_object(std::string_view key);
  // An array of values; use element() to read each.
  const nlohmann::json& array(std::string_view key);
  JsonReader element(std::string_view array_key, std::size_t index) const;

  // The raw value (marked as read). Null if absent.
  const nlohmann::json& raw(std::string_view key);
  // Mark a key as known without reading it (handled elsewhere).
  void accept(std::string_view key);

  // Refuses keys that were never read. Call after reading everything.
  void finish() const;

  [[noreturn]] void fail(std::string_view key, const std::string& message) const;
  [[noreturn]] void fail_here(const std::string& message) const;

private:
  const nlohmann::json& require(std::string_view key);
  const nlohmann::json* find(std::string_view key);

  const nlohmann::json& value_;
  std::string file_;
  std::string path_;
  std::set<std::string, std::less<>> read_;
};

// A short description of a JSON value for error messages: 'the string "abc"', 'the number -2'.
std::string describe_json(const nlohmann::json& v);
// Escapes a key for a JSON pointer (RFC 6901: ~ -> ~0, / -> ~1).
std::string json_pointer_escape(std::string_view key);

}  // namespace clustersim
