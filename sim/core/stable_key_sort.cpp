#include "sim/core/stable_key_sort.hpp"

#include <algorithm>
#include <cstddef>

namespace clustersim {

void stable_sort_by_key(std::vector<KeyedItem>& items) {
  constexpr std::size_t k_radix_from = 4096;
  const std::size_t n = items.size();
  if (n < 2) return;
  if (n < k_radix_from) {
    std::stable_sort(items.begin(), items.end(),
                     [](const KeyedItem& a, const KeyedItem& b) { return a.first < b.first; });
    return;
  }
  std::uint64_t lowest = items.front().first, highest = lowest;
  for (const KeyedItem& item : items) {
    lowest = std::min(lowest, item.first);
    highest = std::max(highest, item.first);
  }
  const std::uint64_t span = highest - lowest;
  constexpr int k_digit_bits = 16;
  constexpr std::size_t k_buckets = std::size_t{1} << k_digit_bits;
  std::vector<KeyedItem> scratch(n);
  std::vector<std::size_t> start(k_buckets + 1);
  for (int shift = 0; shift < 64 && (span >> shift) != 0; shift += k_digit_bits) {
    const auto digit = [&](const KeyedItem& item) {
      return static_cast<std::size_t>(((item.first - lowest) >> shift) & (k_buckets - 1));
    };
    std::fill(start.begin(), start.end(), 0);
    for (const KeyedItem& item : items)
      ++start[digit(item) + 1];
    for (std::size_t b = 0; b < k_buckets; ++b)
      start[b + 1] += start[b];
    for (const KeyedItem& item : items)
      scratch[start[digit(item)]++] = item;
    items.swap(scratch);
  }
}

}  // namespace clustersim
