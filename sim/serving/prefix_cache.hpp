#pragma once
// Automatic prefix caching of one replica (vLLM's automatic prefix caching, SGLang's RadixAttention):
// requests of one prefix group share the KV blocks of their common prefix. Only full blocks are shared
// (a block's hash covers its tokens and every token before it: the block holding the end of the prefix
// also holds the request's own tokens), so a group of prefix P tokens shares floor(P / block_size) blocks.
//
// A group's blocks are cached whole or not at all. The first request of the group to compute its prefix
// gives its first blocks to the cache; a request routed to the replica while they are cached references
// them (they are pinned until it finishes), skips their prefill (computed starts at their tokens, at most
// its prompt - 1: the last prompt token is always computed, as vLLM does) and allocates only the rest.
// Cached blocks nobody references stay in the replica's KV pool until a block allocation finds too few
// free: then the least recently used unreferenced groups are evicted first (before any preemption).
// (vLLM looks a request's prefix up when it is admitted; here when it joins the replica's queue, and a
// replica that would stall with nothing running lets queued requests drop their references, from the
// back of the queue: serving_engine.cpp.)
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

namespace clustersim {

struct PrefixCacheStats {
  std::int64_t lookups = 0;               // requests of a prefix group routed to a replica
  std::int64_t hits = 0;                  // ... that found their group's blocks cached
  std::int64_t saved_prefill_tokens = 0;  // prompt tokens the hits did not prefill
  std::int64_t lookup_prompt_tokens = 0;  // prompt tokens of the lookups
  std::int64_t evictions = 0;             // groups evicted to make room
  std::int64_t dropped_references = 0;    // queued requests that let go of a cached prefix (stall)
};

class PrefixCache {
 public:
  // `groups` prefix groups (ids 0 .. groups - 1), each sharing `shared_blocks` blocks of `block_size`
  // tokens when cached.
  PrefixCache(std::int64_t groups, std::int32_t shared_blocks, std::int32_t block_size);

  std::int32_t shared_blocks() const { return shared_blocks_; }
  std::int32_t block_size() const { return block_size_; }
  bool cached(std::int32_t group) const { return groups_[static_cast<std::size_t>(group)].cached; }
  // A request of `group` references its cached blocks (they must be cached).
  void pin(std::int32_t group);
  // A request that computed its group's prefix gives its first blocks to the cache (not cached yet),
  // referenced by it.
  void insert(std::int32_t group);
  // A request that referenced the group's blocks let go of them: with no reference left they become
  // evictable (least recently released first).
  void unpin(std::int32_t group);
  // Evicts unreferenced groups, least recently released first, until `free_blocks` >= `need` or none is
  // left; returns the blocks freed (added to free_blocks).
  std::int64_t evict_for(std::int64_t need, std::int64_t& free_blocks);
  // Blocks cached and referenced by nobody (evictable).
  std::int64_t evictable_blocks() const { return static_cast<std::int64_t>(lru_.size()) * shared_blocks_; }
  std::int64_t evictions() const { return evictions_; }

 private:
  struct Group {
    bool cached = false;
    std::int32_t refs = 0;
    std::uint64_t released = 0;  // the tick of its last release, its key in lru_ while unreferenced
  };
  std::vector<Group> groups_;
  std::set<std::pair<std::uint64_t, std::int32_t>> lru_;  // (release tick, group) of unreferenced groups
  std::int32_t shared_blocks_;
  std::int32_t block_size_;
  std::uint64_t tick_ = 0;
  std::int64_t evictions_ = 0;
};

}  // namespace clustersim
