#pragma once
// RouteDistances: hop distances over the forwarding devices of a cluster toward a destination's seeds,
// computed over the fabric's switches only. Internal to Cluster's routing (topologies/cluster.cpp).
//
// The forwarding devices are split into the core (fabric switches, and the members of any large
// group of node-owned devices) and small components: the connected groups of node-owned forwarding
// devices (a node's NICs, PCIe switches and host bridge; its NVSwitch) of at most
// k_max_component_size devices. Components touch only the core, never each other, so for a device v
// of a component K and seeds S (offset o_s each), with d_K the distance inside K:
//     dist(v) = min( min_{s in S n K} d_K(v, s) + o_s,  min_{exits r -> c of K} d_K(v, r) + 1 + dist(c) )
// and the core's distances need K only as a transit (c -> K -> c' of 2 + d_K(r, r') hops, dropped
// when the core has a path c -> c' as short) and as an entry toward seeds inside K. The core is
// solved per seed set by a bucketed BFS (Dial: weights are small integers); component devices are
// answered on demand from their exit lists. The result is the plain reverse BFS over every
// forwarding device, for any cluster (tests/cpp/topologies/route_distances_test.cpp checks it).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace clustersim {

class RouteDistances {
 public:
  static constexpr std::uint16_t k_unreached = std::numeric_limits<std::uint16_t>::max();

  struct Seed {
    int forwarding;  // forwarding index of the seed device
    std::uint16_t offset;
  };

  // `in_offsets` / `in_sources`: CSR of the forwarding in-neighbours (forwarding indices, possibly
  // repeated) of each of the `node_of.size()` forwarding devices; `node_of`: the owning node of each
  // (-1 for fabric switches).
  void build(std::span<const int> in_offsets, std::span<const int> in_sources, std::span<const int> node_of);

  // Entries of the per-seed-set array filled by fill() (one per core device).
  std::size_t core_count() const { return core_devices_.size(); }
  // The core index of forwarding device `f` (its entry in fill()'s arrays), or -1.
  int core_of(int f) const { return core_index_[static_cast<std::size_t>(f)]; }
  std::size_t component_count() const { return component_size_.size(); }
  // The component of forwarding device `f`, or -1 for a core device.
  int component_of(int f) const { return component_of_[static_cast<std::size_t>(f)]; }
  // True when every way through a component between two core devices c -> K -> c' is strictly longer
  // than the core's own shortest path c -> c' (true of fat-trees, where nodes hang below their leaves).
  // Then no shortest path from a core device enters a component that holds none of the destination's
  // seeds and funnelled devices: Cluster's walk skips such heads without computing their distance.
  bool transits_strict() const { return transits_strict_; }
  // The core distances toward `seeds` (forwarding indices; offsets added), into `core_dist`.
  void fill(std::span<const Seed> seeds, std::vector<std::uint16_t>& core_dist) const;
  // fill() for up to k_batch seed sets at once, seed_sets[j] into *core_dists[j]: one bit-parallel
  // search (each device carries a mask of the sets that reached it) walks each edge once per distance
  // level instead of once per set. The same distances as fill() one by one.
  static constexpr std::size_t k_batch = 64;
  void fill_batch(std::span<const std::span<const Seed>> seed_sets,
                  std::span<std::vector<std::uint16_t>* const> core_dists) const;
  // The seeds of `seeds` that lie in components (fill() covers the core ones), for distance().
  void component_seeds(std::span<const Seed> seeds, std::vector<Seed>& out) const;
  // Distance from forwarding device `f` toward the seeds whose core array is `core_dist` and whose
  // component seeds are `in_components`; k_unreached if none. `CoreDist` is indexed by core index: the
  // array fill() wrote, or a key's CoreDistanceBlocks::View.
  template <class CoreDist>
  std::uint32_t distance(const CoreDist& core_dist, std::span<const Seed> in_components, int f) const {
    const int c = core_index_[static_cast<std::size_t>(f)];
    if (c >= 0) return core_dist[c];
    std::uint32_t best = exit_distance(core_dist, f);
    if (!in_components.empty()) best = std::min(best, distance_inside(in_components, f));
    return best;
  }
  // distance() of a component device `f` through its exits only: exact when its component holds none
  // of the seeds.
  template <class CoreDist>
  std::uint32_t exit_distance(const CoreDist& core_dist, int f) const {
    std::uint32_t best = k_unreached;
    const auto f_index = static_cast<std::size_t>(f);
    for (int k = exit_offsets_[f_index]; k < exit_offsets_[f_index + 1]; ++k) {
      const Exit& e = exits_[static_cast<std::size_t>(k)];
      const std::uint16_t d = core_dist[e.core];
      if (d != k_unreached) best = std::min<std::uint32_t>(best, d + e.hops);
    }
    return best;
  }

 private:
  struct Exit {
    int core;            // core index of the exit's head
    std::uint16_t hops;  // from the device to that core device
  };
  struct Edge {
    int from;  // core index of the tail
    std::uint16_t weight;
  };
  struct Entry {
    int core;   // core index of the tail of a link into the component
    int local;  // the component member it enters
  };

  std::uint32_t distance_inside(std::span<const Seed> in_components, int f) const;
  std::uint16_t inside(int component, int from_local, int to_local) const;

  std::vector<int> core_index_;      // per forwarding device: core index, or -1
  std::vector<int> core_devices_;    // per core index: forwarding index
  std::vector<int> component_of_;    // per forwarding device: component, or -1 for the core
  std::vector<int> local_index_;     // per forwarding device: index inside its component
  std::vector<int> component_base_;  // per component: offset of its distance matrix in inside_
  std::vector<int> component_size_;
  std::vector<std::uint16_t> inside_;  // per component: size x size distances inside it
  std::vector<int> entry_offsets_;     // per component, CSR into entries_
  std::vector<Entry> entries_;
  std::vector<int> exit_offsets_;  // per forwarding device, CSR into exits_ (empty for the core)
  std::vector<Exit> exits_;
  std::vector<int> edge_offsets_;  // per core device: CSR of its core in-edges (direct and transit)
  std::vector<Edge> edges_;
  bool transits_strict_ = true;
  // fill_batch's scratch: per distance, the (core, mask) pairs reaching it; per core, the masks.
  mutable std::vector<std::vector<std::pair<int, std::uint64_t>>> pending_;
  mutable std::vector<std::uint64_t> reached_, arriving_;
  mutable std::vector<int> touched_;
};

}  // namespace clustersim
