#include "sim/core/intervals.hpp"

#include <gtest/gtest.h>

namespace clustersim {
namespace {

// Hand-worked: [0,2) [1,3) [5,6) [6,7) [9,10) join into [0,3) [5,7) [9,10), 6 long.
TEST(Intervals, UnionJoinsOverlappingAndTouchingIntervals) {
  const auto u = merge_intervals({{5, 6}, {1, 3}, {9, 10}, {0, 2}, {6, 7}});
  ASSERT_EQ(u, (std::vector<Interval>{{0, 3}, {5, 7}, {9, 10}}));
  EXPECT_DOUBLE_EQ(total_length(u), 6.0);
  EXPECT_DOUBLE_EQ(total_length(merge_intervals({})), 0.0);
}

// [0,3) [5,7) [9,10) against [2,6) [8,9.5): shared 1 + 1 + 0.5 = 2.5, either way round.
TEST(Intervals, SharedLengthOfTwoListsAndOfOneInterval) {
  const std::vector<Interval> a{{0, 3}, {5, 7}, {9, 10}}, b{{2, 6}, {8, 9.5}};
  EXPECT_DOUBLE_EQ(overlap_length(a, b), 2.5);
  EXPECT_DOUBLE_EQ(overlap_length(b, a), 2.5);
  EXPECT_DOUBLE_EQ(overlap_with(2.0, 9.5, a), 1.0 + 2.0 + 0.5);
  EXPECT_DOUBLE_EQ(overlap_with(3.0, 5.0, a), 0.0);  // the gap
  // A whole list's overlap with a window covering it is its length.
  EXPECT_DOUBLE_EQ(overlap_with(-1.0, 11.0, a), total_length(a));
}

}  // namespace
}  // namespace clustersim
