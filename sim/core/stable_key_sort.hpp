#pragma once
// stable_sort_by_key: sorts (key, value) pairs by key, equal keys keeping their input order. Large
// inputs take a least-significant-digit radix sort (16-bit digits, over the span max - min of the keys
// only), small ones a comparison sort: the same order either way. Used where the simulator sorts
// hundreds of thousands of integer-keyed items per plan (transfers by GPU pair, transfer ends by
// time, route-distance edges by device).
#include <cstdint>
#include <utility>
#include <vector>

namespace clustersim {

using KeyedItem = std::pair<std::uint64_t, std::uint32_t>;

void stable_sort_by_key(std::vector<KeyedItem>& items);

}  // namespace clustersim
