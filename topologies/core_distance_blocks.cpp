#include "topologies/core_distance_blocks.hpp"

#include <algorithm>
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
  rows_.assign(keys, {});
  clear();
}

void CoreDistanceBlocks::clear() {
  for (auto& row : rows_) {
    row.clear();
    row.shrink_to_fit();
  }
  pool_.clear();
  pool_block_.clear();
  interned_.clear();
  bytes_ = 0;
}

std::size_t CoreDistanceBlocks::bound_bytes(std::size_t keys) const {
  return keys * (places_.size() * sizeof(std::uint16_t) + block_size_.size() * sizeof(const std::uint16_t*));
}

void CoreDistanceBlocks::store(std::uint32_t key, std::span<const std::uint16_t> full) {
  if (full.size() != places_.size()) throw std::logic_error("CoreDistanceBlocks::store: one distance per core device");
  std::vector<const std::uint16_t*>& row = rows_[key];
  row.assign(block_size_.size(), nullptr);
  bytes_ += row.size() * sizeof(const std::uint16_t*);
  for (std::uint32_t b = 0; b < block_size_.size(); ++b) {
    gather_.clear();
    for (const int c : members_[b])
      gather_.push_back(full[static_cast<std::size_t>(c)]);
    std::uint64_t h = splitmix64(b);
    for (const std::uint16_t v : gather_)
      h = splitmix64(h ^ v);
    const std::size_t n = gather_.size();
    const auto [first, last] = interned_.equal_range(h);
    for (auto it = first; it != last && row[b] == nullptr; ++it) {
      const std::uint32_t e = it->second;
      if (pool_block_[e] == b && std::equal(gather_.begin(), gather_.end(), pool_[e].get())) row[b] = pool_[e].get();
    }
    if (row[b] != nullptr) continue;
    auto values = std::make_unique<std::uint16_t[]>(std::max<std::size_t>(n, 1));
    std::copy(gather_.begin(), gather_.end(), values.get());
    row[b] = values.get();
    interned_.emplace(h, static_cast<std::uint32_t>(pool_.size()));
    pool_.push_back(std::move(values));
    pool_block_.push_back(b);
    bytes_ += n * sizeof(std::uint16_t);
  }
}

}  // namespace clustersim
