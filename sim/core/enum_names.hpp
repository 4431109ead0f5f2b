#pragma once
// An enum's names as one table (`EnumName<E>` rows, every enumerator once), driving both directions:
// the writer's `name_of` and the reader's `value_named`, and the "expected one of" list (`enum_names`).
// A table per enum replaces a to_string switch plus a second list of the enumerators for the parser.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim {

template <class E>
struct EnumName {
  E value;
  const char* name;
};

// The name of `value`; `fallback` where the table lacks it (a bug of ours when the table is complete).
template <class E, std::size_t N>
const char* name_of(const EnumName<E> (&table)[N], E value, const char* fallback = "?") {
  for (const auto& e : table)
    if (e.value == value) return e.name;
  return fallback;
}

// The value named `name`, or nullopt (the caller names the bad input).
template <class E, std::size_t N>
std::optional<E> value_named(const EnumName<E> (&table)[N], std::string_view name) {
  for (const auto& e : table)
    if (name == e.name) return e.value;
  return std::nullopt;
}

// The names in the table's order.
template <class E, std::size_t N>
std::vector<std::string> enum_names(const EnumName<E> (&table)[N]) {
  std::vector<std::string> names;
  for (const auto& e : table)
    names.emplace_back(e.name);
  return names;
}

}  // namespace clustersim
