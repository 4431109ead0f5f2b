#pragma once
// How many ops of a generated step bear a name, for the tests that count the generator's ops by hand.
#include <cstddef>
#include <initializer_list>
#include <string_view>
#include <utility>

#include <gtest/gtest.h>

#include "workloads/execution_graph.hpp"

namespace clustersim::testing {

// The ops of `ops` named `name`.
inline std::size_t count(const OpTable& ops, std::string_view name) {
  std::size_t n = 0;
  for (OpId i = 0; i < ops.size(); ++i)
    n += ops.name(i) == name ? 1 : 0;
  return n;
}

// Each {name, count} of `counts` against the ops of `ops`.
inline void expect_counts(const OpTable& ops, std::initializer_list<std::pair<std::string_view, std::size_t>> counts) {
  for (const auto& [name, n] : counts)
    EXPECT_EQ(count(ops, name), n) << name;
}

}  // namespace clustersim::testing
