#pragma once
// CoreDistanceBlocks: the routing keys' distance arrays over the core devices (RouteDistances::fill's
// output, one array per key), stored per block of core devices and shared between keys. Internal to
// Cluster's routing (topologies/cluster.cpp).
//
// The core devices are split into blocks (Cluster: the fabric switches of one kind and one pod or
// group; a fat-tree's leaves of pod p, its aggregation switches of pod p, its cores). A key's array is
// kept as one pointer per block to that block's values, and equal values of one block are stored once:
// on a 3-tier fat-tree the key of a leaf in pod p has its own values only on the leaves of pod p; the
// aggregation switches of pod p (all 1), of every other pod (all 3), the other pods' leaves (all 4) and
// the cores (all 2) are shared by every key of pod p or every key. Memory is O(keys x (blocks + the
// largest block)) instead of O(keys x core devices), and a route's lookups stay in a few hot blocks.
// The values are the full arrays', so every answer is unchanged.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

namespace clustersim {

class CoreDistanceBlocks {
 public:
  struct Place {
    std::uint32_t block;
    std::uint32_t pos;  // index among the block's members (in core order)
  };
  // One key's distances: view[c] is the distance of core device c.
  class View {
   public:
    View() = default;
    View(const std::uint16_t* const* blocks, const Place* places) : blocks_(blocks), places_(places) {}
    std::uint16_t operator[](int core) const {
      const Place& p = places_[static_cast<std::size_t>(core)];
      return blocks_[p.block][p.pos];
    }
    // The values of block b: equal pointers of one block hold equal values.
    const std::uint16_t* block(std::uint32_t b) const { return blocks_[b]; }

   private:
    const std::uint16_t* const* blocks_ = nullptr;
    const Place* places_ = nullptr;
  };

  // block_of_core[c] in 0 .. blocks - 1 for each core device c; `keys` keys, none stored.
  void build(std::span<const std::uint32_t> block_of_core, std::size_t keys);
  std::size_t block_count() const { return block_size_.size(); }
  std::uint32_t block_of(int core) const { return places_[static_cast<std::size_t>(core)].block; }
  bool has(std::uint32_t key) const { return stored_[key] != 0; }
  // Valid until clear().
  View view(std::uint32_t key) const { return View(rows_[key].data(), places_.data()); }
  // Stores `full` (one distance per core device) as key's distances.
  void store(std::uint32_t key, std::span<const std::uint16_t> full);
  // The bytes that storing `keys` more keys may take at most.
  std::size_t bound_bytes(std::size_t keys) const;
  std::size_t bytes() const { return bytes_; }
  // Forgets every key (their views are invalidated).
  void clear();

 private:
  std::vector<Place> places_;
  std::vector<std::uint32_t> block_size_;
  std::vector<std::vector<const std::uint16_t*>> rows_;  // per key: per block, its values (empty: not stored)
  std::vector<std::unique_ptr<std::uint16_t[]>> pool_;   // the distinct values of each block
  std::vector<std::uint32_t> pool_block_;                // the block of each pool entry
  std::unordered_multimap<std::uint64_t, std::uint32_t> interned_;  // hash of (block, values) -> pool entry
  std::vector<std::uint16_t> gather_;                               // store()'s scratch: one block's values
  std::vector<std::vector<int>> members_;                           // per block, its core devices in order
  std::vector<char> stored_;      // per key: stored (a cluster without core devices has empty rows)
  std::vector<int> block_first_;  // per block: its first core device when its members are consecutive, else -1
  std::uint32_t last_key_ = 0;    // the key store() stored last (compared first)
  std::size_t bytes_ = 0;
};

}  // namespace clustersim
