// sim/core/quantile: linear interpolation between order statistics (numpy's default), by hand.
#include "sim/core/quantile.hpp"

#include <vector>

#include <gtest/gtest.h>

namespace clustersim {
namespace {

TEST(Quantile, InterpolatesBetweenOrderStatistics) {
  // Sorted {1, 2, 3, 4}: position q (n - 1) = 1.5 at the median, between 2 and 3.
  EXPECT_DOUBLE_EQ(quantile({4.0, 1.0, 3.0, 2.0}, 0.5), 2.5);
  // 1..10 at q = 0.9: position 8.1, 9 + 0.1 (10 - 9) = 9.1; at q = 0.5: position 4.5, 5.5.
  const std::vector<double> ten{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_DOUBLE_EQ(quantile(ten, 0.9), 9.1);
  EXPECT_DOUBLE_EQ(quantile(ten, 0.5), 5.5);
  // The ends are the extremes.
  EXPECT_DOUBLE_EQ(quantile(ten, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile(ten, 1.0), 10.0);
}

TEST(Quantile, ClampsQAndGivesZeroForAnEmptySample) {
  EXPECT_DOUBLE_EQ(quantile({}, 0.5), 0.0);
  EXPECT_DOUBLE_EQ(quantile({3.0, 7.0}, -1.0), 3.0);
  EXPECT_DOUBLE_EQ(quantile({3.0, 7.0}, 2.0), 7.0);
  EXPECT_DOUBLE_EQ(quantile({-2.0}, 0.3), -2.0);
}

}  // namespace
}  // namespace clustersim
