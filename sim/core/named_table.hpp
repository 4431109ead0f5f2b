#pragma once
// The operations of every registry table whose entries carry a key (a `name`: fp8 recipes, memory
// recipes, attention implementations, context-parallel methods, trace formats, validation metrics,
// export formats; an `id` or a `type`: scale-up generations, fabric transports, fabric builders): the
// list of keys (for parsers' "expected one of" messages) and the entry of a key.
#include <algorithm>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/error.hpp"

namespace clustersim {

// The keys of the table's entries in their order; `key` names the member (e.g. &FabricBuilder::type).
template <class T, class K>
std::vector<std::string> keys_of(std::span<const T> table, K T::*key) {
  std::vector<std::string> keys;
  for (const auto& e : table)
    keys.emplace_back(e.*key);
  return keys;
}

template <class T>
std::vector<std::string> names_of(std::span<const T> table) {
  return keys_of(table, &T::name);
}

// The entry whose member `key` is `value`, or nullptr (for user input: the caller names the error).
template <class T, class K>
const T* find_by_key(std::span<const T> table, std::string_view value, K T::*key) {
  const auto it = std::find_if(table.begin(), table.end(), [&](const T& e) { return value == e.*key; });
  return it == table.end() ? nullptr : &*it;
}

template <class T>
const T* find_by_name(std::span<const T> table, std::string_view name) {
  return find_by_key(table, name, &T::name);
}

// The entry named `name`. Parsers accept only names_of(table), so an unknown name here is a bug of
// ours: SimulationError naming `what` (e.g. "attention implementation") and the name.
template <class T>
const T& find_named(std::span<const T> table, std::string_view name, std::string_view what) {
  const T* e = find_by_name(table, name);
  if (e == nullptr) throw SimulationError("unknown " + std::string(what) + " \"" + std::string(name) + "\"");
  return *e;
}

}  // namespace clustersim
