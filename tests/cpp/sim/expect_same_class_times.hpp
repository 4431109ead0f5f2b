#pragma once
// Two replays that must agree to the last bit, class by class (a replay against one sharing a memo,
// an exact replay against a reduced one): the ClassTimes members `fields` of every class.
#include <cstddef>
#include <initializer_list>

#include <gtest/gtest.h>

#include "sim/replay/replay_engine.hpp"

namespace clustersim::testing {

inline void expect_same_class_times(const ReplayResult& a, const ReplayResult& b,
                                    std::initializer_list<double ClassTimes::*> fields) {
  ASSERT_EQ(a.classes.size(), b.classes.size());
  for (std::size_t c = 0; c < a.classes.size(); ++c) {
    std::size_t f = 0;
    for (double ClassTimes::*field : fields)
      EXPECT_EQ(a.classes[c].*field, b.classes[c].*field) << "class " << c << ", field " << f++;
  }
}

}  // namespace clustersim::testing
