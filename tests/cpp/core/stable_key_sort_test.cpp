// stable_sort_by_key: the same order as std::stable_sort by key, on the comparison path (small inputs)
// and the radix path (large ones), for narrow and full 64-bit key spans and many equal keys.
#include "sim/core/stable_key_sort.hpp"

#include <algorithm>
#include <bit>
#include <random>

#include <gtest/gtest.h>

namespace clustersim {
namespace {

std::vector<KeyedItem> reference(std::vector<KeyedItem> items) {
  std::stable_sort(items.begin(), items.end(),
                   [](const KeyedItem& a, const KeyedItem& b) { return a.first < b.first; });
  return items;
}

TEST(StableKeySort, MatchesAStableComparisonSort) {
  std::mt19937_64 rng(11);
  for (const std::size_t n : {0u, 1u, 2u, 100u, 4095u, 4096u, 50000u}) {
    for (const std::uint64_t span : {std::uint64_t{7}, std::uint64_t{1} << 20, ~std::uint64_t{0}}) {
      std::vector<KeyedItem> items(n);
      const std::uint64_t base = span == ~std::uint64_t{0} ? 0 : rng() >> 8;
      for (std::size_t i = 0; i < n; ++i)
        items[i] = {base + (span == ~std::uint64_t{0} ? rng() : rng() % (span + 1)), static_cast<std::uint32_t>(i)};
      const auto expected = reference(items);
      stable_sort_by_key(items);
      EXPECT_EQ(items, expected) << n << " items, span " << span;
    }
  }
}

TEST(StableKeySort, OrdersNonNegativeDoublesByTheirBits) {
  // The analytical backend sorts transfer end times by their IEEE-754 bits.
  std::vector<double> times{0.0, 1e-9, 3.5, 2.0, 1e-9, 1e300, 5e-324, 2.0};
  std::vector<KeyedItem> items;
  for (std::size_t i = 0; i < times.size(); ++i)
    items.emplace_back(std::bit_cast<std::uint64_t>(times[i]), static_cast<std::uint32_t>(i));
  stable_sort_by_key(items);
  std::vector<std::uint32_t> order;
  for (const auto& item : items)
    order.push_back(item.second);
  EXPECT_EQ(order, (std::vector<std::uint32_t>{0, 6, 1, 4, 3, 7, 2, 5}));
}

}  // namespace
}  // namespace clustersim
