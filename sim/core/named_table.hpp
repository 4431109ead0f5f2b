#pragma once
// The two operations of every registry table whose entries carry a `name` (fp8 recipes, memory
// recipes, attention implementations, context-parallel methods, trace formats): the list of names
// (for parsers' "expected one of" messages) and the entry of a name.
#include <algorithm>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/error.hpp"

namespace clustersim {

template <class T>
std::vector<std::string> names_of(std::span<const T> table) {
  std::vector<std::string> names;
  for (const auto& e : table)
    names.emplace_back(e.name);
  return names;
}

// The entry named `name`. Parsers accept only names_of(table), so an unknown name here is a bug of
// ours: SimulationError naming `what` (e.g. "attention implementation") and the name.
template <class T>
const T& find_named(std::span<const T> table, std::string_view name, std::string_view what) {
  const auto it = std::find_if(table.begin(), table.end(), [&](const T& e) { return name == e.name; });
  if (it == table.end()) throw SimulationError("unknown " + std::string(what) + " \"" + std::string(name) + "\"");
  return *it;
}

}  // namespace clustersim
