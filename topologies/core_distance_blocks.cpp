#include "topologies/core_distance_blocks.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace clustersim {
namespace {

constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

void CoreDistanceBlocks::build(std::span<const std::uint32_t> block_of_core, std::size_t keys) {
  std::uint32_t blocks = 0;
  for (const std::uint32_t b : block_of_core)
    blocks = std::max(blocks, b + 1);
  block_size_.assign(blocks, 0);
  members_.assign(blocks, {});
  places_.resize(block_of_core.size());
  for (std::size_t c = 0; c < block_of_core.size(); ++c) {
    const std::uint32_t b = block_of_core[c];
    places_[c] = Place{b, block_size_[b]++};
    members_[b].push_back(static_cast<int>(c));
  }
  // A block whose members are consecutive core devices is read in place by store().
  block_first_.assign(blocks, -1);
  for (std::uint32_t b = 0; b < blocks; ++b) {
    const std::vector<int>& m = members_[b];
    if (!m.empty() && m.back() - m.front() + 1 == static_cast<int>(m.size())) block_first_[b] = m.front();
  }
  rows_.assign(keys, {});
  stored_.assign(keys, 0);
  clear();
}

void CoreDistanceBlocks::clear() {
  for (auto& row : rows_) {
    row.clear();
    row.shrink_to_fit();
  }
  std::fill(stored_.begin(), stored_.end(), 0);
  pool_.clear();
  pool_block_.clear();
  interned_.clear();
  bytes_ = 0;
  last_key_ = std::numeric_limits<std::uint32_t>::max();
}

std::size_t CoreDistanceBlocks::bound_bytes(std::size_t keys) const {
  return keys * (places_.size() * sizeof(std::uint16_t) + block_size_.size() * sizeof(const std::uint16_t*));
}

void CoreDistanceBlocks::store(std::uint32_t key, std::span<const std::uint16_t> full) {
  if (full.size() != places_.size()) throw std::logic_error("CoreDistanceBlocks::store: one distance per core device");
  std::vector<const std::uint16_t*>& row = rows_[key];
  row.assign(block_size_.size(), nullptr);
  bytes_ += row.size() * sizeof(const std::uint16_t*);
  // The last key stored usually shares most blocks (keys are stored in order, a pod's leaves one after
  // the other): its values are compared first, and only a block that differs is hashed.
  const std::vector<const std::uint16_t*>* last =
      last_key_ < rows_.size() && stored_[last_key_] != 0 && last_key_ != key ? &rows_[last_key_] : nullptr;
  for (std::uint32_t b = 0; b < block_size_.size(); ++b) {
    const std::size_t n = block_size_[b];
    const std::uint16_t* values = nullptr;  // the block's values in `full`, or gathered
    if (block_first_[b] >= 0) {
      values = full.data() + block_first_[b];
    } else {
      gather_.clear();
      for (const int c : members_[b])
        gather_.push_back(full[static_cast<std::size_t>(c)]);
      values = gather_.data();
    }
    if (last != nullptr && std::equal(values, values + n, (*last)[b])) {
      row[b] = (*last)[b];
      continue;
    }
    std::uint64_t h = splitmix64(b);
    for (const std::uint16_t v : std::span<const std::uint16_t>(values, n))
      h = splitmix64(h ^ v);
    const auto [first, end] = interned_.equal_range(h);
    for (auto it = first; it != end && row[b] == nullptr; ++it) {
      const std::uint32_t e = it->second;
      if (pool_block_[e] == b && std::equal(values, values + n, pool_[e].get())) row[b] = pool_[e].get();
    }
    if (row[b] != nullptr) continue;
    auto stored = std::make_unique<std::uint16_t[]>(std::max<std::size_t>(n, 1));
    std::copy(values, values + n, stored.get());
    row[b] = stored.get();
    interned_.emplace(h, static_cast<std::uint32_t>(pool_.size()));
    pool_.push_back(std::move(stored));
    pool_block_.push_back(b);
    bytes_ += n * sizeof(std::uint16_t);
  }
  stored_[key] = 1;
  last_key_ = key;
}

}  // namespace clustersim
