#pragma once
// The SpecError a piece of code throws, for tests that check its file, JSON path and message.
#include <functional>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"

namespace clustersim::testing {

inline SpecError spec_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const SpecError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a SpecError";
  return SpecError("", "", "");
}

}  // namespace clustersim::testing
