// checked_product: products of spec values that fit in 64 bits, or nothing (never a wrapped value).
#include "sim/core/checked_product.hpp"

#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

namespace clustersim {
namespace {

TEST(CheckedProduct, SmallProductsAreExact) {
  EXPECT_EQ(checked_product({8, 4, 2}), 64);
  EXPECT_EQ(checked_product({}), 1);
  EXPECT_EQ(checked_product({2147483647, 2147483647}), std::int64_t{4611686014132420609});  // (2^31-1)^2
}

TEST(CheckedProduct, OverflowIsReportedNotWrapped) {
  // tp = pp = 2^30, cp = 16: 2^64 wrapped to 0 in 64 bits, and a division by it raised SIGFPE.
  EXPECT_FALSE(checked_product({std::int64_t{1} << 30, std::int64_t{1} << 30, 16}).has_value());
  // 2^62 * 2 = 2^63 is one past the largest int64.
  EXPECT_FALSE(checked_product({std::int64_t{1} << 62, 2}).has_value());
  EXPECT_EQ(checked_product({std::int64_t{1} << 62, 1}), std::int64_t{1} << 62);
  EXPECT_EQ(checked_product({std::numeric_limits<std::int64_t>::max(), 1}), std::numeric_limits<std::int64_t>::max());
}

}  // namespace
}  // namespace clustersim
