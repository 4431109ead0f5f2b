#pragma once
// A run that must fail with SimulationError (a deadlock, mismatched collectives): its message names
// each of `fragments`.
#include <initializer_list>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"

namespace clustersim::testing {

template <class Body>
void expect_simulation_error(Body&& body, std::initializer_list<std::string_view> fragments) {
  try {
    body();
  } catch (const SimulationError& e) {
    const std::string what = e.what();
    for (const std::string_view f : fragments)
      EXPECT_NE(what.find(f), std::string::npos) << what;
    return;
  }
  ADD_FAILURE() << "expected a SimulationError naming \"" << *fragments.begin() << "\"";
}

}  // namespace clustersim::testing
