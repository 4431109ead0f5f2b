// A replica's automatic prefix cache (prefix_cache.hpp): per group, cached or not, its references, and
// the least-recently-released order of the unreferenced ones.
#include "sim/serving/prefix_cache.hpp"

namespace clustersim {

PrefixCache::PrefixCache(std::int64_t groups, std::int32_t shared_blocks, std::int32_t block_size)
    : groups_(static_cast<std::size_t>(groups)), shared_blocks_(shared_blocks), block_size_(block_size) {}

void PrefixCache::pin(std::int32_t group) {
  Group& g = groups_[static_cast<std::size_t>(group)];
  if (g.refs++ == 0) lru_.erase({g.released, group});
}

void PrefixCache::insert(std::int32_t group) {
  Group& g = groups_[static_cast<std::size_t>(group)];
  g.cached = true;
  g.refs = 1;
}

void PrefixCache::unpin(std::int32_t group) {
  Group& g = groups_[static_cast<std::size_t>(group)];
  if (--g.refs > 0) return;
  g.released = ++tick_;
  lru_.insert({g.released, group});
}

std::int64_t PrefixCache::evict_for(std::int64_t need, std::int64_t& free_blocks) {
  std::int64_t freed = 0;
  while (free_blocks < need && !lru_.empty()) {
    const std::int32_t group = lru_.begin()->second;
    lru_.erase(lru_.begin());
    groups_[static_cast<std::size_t>(group)].cached = false;
    free_blocks += shared_blocks_;
    freed += shared_blocks_;
    ++evictions_;
  }
  return freed;
}

}  // namespace clustersim
