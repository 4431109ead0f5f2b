#include "topologies/route_distances.hpp"

#include <algorithm>
#include <bit>
#include <numeric>
#include <stdexcept>

#include "sim/core/stable_key_sort.hpp"

namespace clustersim {
namespace {

// Larger groups of node-owned forwarding devices (a torus of forwarding GPUs) join the core.
constexpr int k_max_component_size = 64;

int find_root(std::vector<int>& parent, int x) {
  while (parent[static_cast<std::size_t>(x)] != x) {
    parent[static_cast<std::size_t>(x)] = parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(x)])];
    x = parent[static_cast<std::size_t>(x)];
  }
  return x;
}

// A candidate core in-edge: from -> to (core indices) of `weight` hops.
struct Candidate {
  int from, to;
  std::uint16_t weight;
};

// Sorts by (to, from, weight) and keeps the first of each (from, to): the lightest.
void sort_and_dedupe(std::vector<Candidate>& candidates, std::size_t cores) {
  const std::uint64_t core_count = std::max<std::uint64_t>(cores, 1);
  if (core_count >= (std::uint64_t{1} << 24)) throw std::length_error("RouteDistances: more than 2^24 core devices");
  std::vector<KeyedItem> order(candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    const std::uint64_t pair = static_cast<std::uint64_t>(c.to) * core_count + static_cast<std::uint64_t>(c.from);
    order[i] = {(pair << 16) | c.weight, static_cast<std::uint32_t>(i)};
  }
  stable_sort_by_key(order);
  std::vector<Candidate> sorted;
  sorted.reserve(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (k > 0 && (order[k].first >> 16) == (order[k - 1].first >> 16)) continue;
    sorted.push_back(candidates[order[k].second]);
  }
  candidates = std::move(sorted);
}

}  // namespace

std::uint16_t RouteDistances::inside(int component, int from_local, int to_local) const {
  const auto c = static_cast<std::size_t>(component);
  return inside_[static_cast<std::size_t>(component_base_[c] + from_local * component_size_[c] + to_local)];
}

void RouteDistances::build(std::span<const int> in_offsets, std::span<const int> in_sources,
                           std::span<const int> node_of) {
  const std::size_t n = node_of.size();
  const auto in_of = [&](std::size_t v) {
    return in_sources.subspan(static_cast<std::size_t>(in_offsets[v]),
                              static_cast<std::size_t>(in_offsets[v + 1] - in_offsets[v]));
  };
  const auto owned = [&](int f) { return node_of[static_cast<std::size_t>(f)] >= 0; };

  // Components of node-owned devices (links in either direction).
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  for (std::size_t v = 0; v < n; ++v) {
    if (!owned(static_cast<int>(v))) continue;
    for (const int u : in_of(v)) {
      if (!owned(u)) continue;
      const int a = find_root(parent, u);
      const int b = find_root(parent, static_cast<int>(v));
      if (a != b) parent[static_cast<std::size_t>(std::max(a, b))] = std::min(a, b);
    }
  }
  std::vector<int> root_size(n, 0);
  for (std::size_t v = 0; v < n; ++v)
    if (owned(static_cast<int>(v))) ++root_size[static_cast<std::size_t>(find_root(parent, static_cast<int>(v)))];

  core_index_.assign(n, -1);
  component_of_.assign(n, -1);
  local_index_.assign(n, -1);
  core_devices_.clear();
  component_size_.clear();
  std::vector<int> component_of_root(n, -1);
  std::vector<std::vector<int>> members;
  for (std::size_t v = 0; v < n; ++v) {
    const int root = owned(static_cast<int>(v)) ? find_root(parent, static_cast<int>(v)) : -1;
    if (root < 0 || root_size[static_cast<std::size_t>(root)] > k_max_component_size) {
      core_index_[v] = static_cast<int>(core_devices_.size());
      core_devices_.push_back(static_cast<int>(v));
      continue;
    }
    int& k = component_of_root[static_cast<std::size_t>(root)];
    if (k < 0) {
      k = static_cast<int>(members.size());
      members.emplace_back();
    }
    component_of_[v] = k;
    local_index_[v] = static_cast<int>(members[static_cast<std::size_t>(k)].size());
    members[static_cast<std::size_t>(k)].push_back(static_cast<int>(v));
  }

  // Distances inside each component: a reverse BFS toward each member over its in-neighbours.
  const std::size_t components = members.size();
  component_base_.assign(components, 0);
  component_size_.assign(components, 0);
  int total = 0;
  for (std::size_t k = 0; k < components; ++k) {
    const int size = static_cast<int>(members[k].size());
    component_base_[k] = total;
    component_size_[k] = size;
    total += size * size;
  }
  inside_.assign(static_cast<std::size_t>(total), k_unreached);
  std::vector<int> queue;
  for (std::size_t k = 0; k < components; ++k) {
    const int size = component_size_[k];
    for (int to = 0; to < size; ++to) {
      const auto at = [&](int from) -> std::uint16_t& {
        return inside_[static_cast<std::size_t>(component_base_[k] + from * size + to)];
      };
      at(to) = 0;
      queue.assign(1, members[k][static_cast<std::size_t>(to)]);
      for (std::size_t q = 0; q < queue.size(); ++q) {
        const int v = queue[q];
        const std::uint16_t d = at(local_index_[static_cast<std::size_t>(v)]);
        for (const int u : in_of(static_cast<std::size_t>(v))) {
          if (component_of_[static_cast<std::size_t>(u)] != static_cast<int>(k)) continue;
          std::uint16_t& du = at(local_index_[static_cast<std::size_t>(u)]);
          if (du != k_unreached) continue;
          du = static_cast<std::uint16_t>(d + 1);
          queue.push_back(u);
        }
      }
    }
  }

  // Links into components (entries) and out of them (exits), and the core's direct in-edges.
  struct RawExit {
    int component, local, core;
  };
  std::vector<std::vector<Entry>> entries(components);
  std::vector<RawExit> raw_exits;
  std::vector<Candidate> direct;
  for (std::size_t v = 0; v < n; ++v) {
    for (const int u : in_of(v)) {
      const int cu = core_index_[static_cast<std::size_t>(u)];
      const int cv = core_index_[v];
      if (cu >= 0 && cv >= 0) {
        direct.push_back(Candidate{cu, cv, 1});
      } else if (cu >= 0) {
        entries[static_cast<std::size_t>(component_of_[v])].push_back(Entry{cu, local_index_[v]});
      } else if (cv >= 0) {
        raw_exits.push_back(
            RawExit{component_of_[static_cast<std::size_t>(u)], local_index_[static_cast<std::size_t>(u)], cv});
      }
    }
  }
  sort_and_dedupe(direct, core_devices_.size());
  entry_offsets_.assign(components + 1, 0);
  entries_.clear();
  for (std::size_t k = 0; k < components; ++k) {
    entries_.insert(entries_.end(), entries[k].begin(), entries[k].end());
    entry_offsets_[k + 1] = static_cast<int>(entries_.size());
  }
  std::stable_sort(raw_exits.begin(), raw_exits.end(),
                   [](const RawExit& a, const RawExit& b) { return a.component < b.component; });
  std::vector<int> exits_of_component(components + 1, 0);
  for (const RawExit& e : raw_exits)
    ++exits_of_component[static_cast<std::size_t>(e.component) + 1];
  std::partial_sum(exits_of_component.begin(), exits_of_component.end(), exits_of_component.begin());

  // Exit lists of the component devices: the nearest way to each core device they can leave to.
  exit_offsets_.assign(n + 1, 0);
  exits_.clear();
  std::vector<Exit> mine;
  for (std::size_t v = 0; v < n; ++v) {
    const int k = component_of_[v];
    if (k >= 0) {
      mine.clear();
      for (int x = exits_of_component[static_cast<std::size_t>(k)];
           x < exits_of_component[static_cast<std::size_t>(k) + 1]; ++x) {
        const RawExit& e = raw_exits[static_cast<std::size_t>(x)];
        const std::uint16_t d = inside(k, local_index_[v], e.local);
        if (d == k_unreached) continue;
        const auto hops = static_cast<std::uint16_t>(d + 1);
        const auto it = std::find_if(mine.begin(), mine.end(), [&](const Exit& m) { return m.core == e.core; });
        if (it == mine.end())
          mine.push_back(Exit{e.core, hops});
        else
          it->hops = std::min(it->hops, hops);
      }
      exits_.insert(exits_.end(), mine.begin(), mine.end());
    }
    exit_offsets_[v + 1] = static_cast<int>(exits_.size());
  }

  // Transits c -> K -> c', kept only when the core has no path from c to c' as short.
  std::vector<Candidate> transit;
  for (std::size_t k = 0; k < components; ++k) {
    for (int a = entry_offsets_[k]; a < entry_offsets_[k + 1]; ++a) {
      const Entry& in = entries_[static_cast<std::size_t>(a)];
      for (int x = exits_of_component[k]; x < exits_of_component[k + 1]; ++x) {
        const RawExit& out = raw_exits[static_cast<std::size_t>(x)];
        if (out.core == in.core) continue;
        const std::uint16_t d = inside(static_cast<int>(k), in.local, out.local);
        if (d == k_unreached) continue;
        transit.push_back(Candidate{in.core, out.core, static_cast<std::uint16_t>(d + 2)});
      }
    }
  }
  sort_and_dedupe(transit, core_devices_.size());
  const std::size_t cores = core_devices_.size();
  std::vector<int> direct_offsets(cores + 1, 0);
  for (const Candidate& e : direct)
    ++direct_offsets[static_cast<std::size_t>(e.to) + 1];
  std::partial_sum(direct_offsets.begin(), direct_offsets.end(), direct_offsets.begin());
  std::vector<Candidate> kept;
  transits_strict_ = true;
  if (!transit.empty()) {
    // Per target c': a reverse BFS over direct core links, as deep as its heaviest transit.
    std::vector<std::uint16_t> reach(cores, k_unreached);
    std::vector<int> seen;
    for (std::size_t i = 0; i < transit.size();) {
      std::size_t j = i;
      std::uint16_t depth = 0;
      while (j < transit.size() && transit[j].to == transit[i].to)
        depth = std::max(depth, transit[j++].weight);
      seen.assign(1, transit[i].to);
      reach[static_cast<std::size_t>(transit[i].to)] = 0;
      for (std::size_t q = 0; q < seen.size(); ++q) {
        const int v = seen[q];
        const std::uint16_t d = reach[static_cast<std::size_t>(v)];
        if (d >= depth) continue;
        for (int e = direct_offsets[static_cast<std::size_t>(v)]; e < direct_offsets[static_cast<std::size_t>(v) + 1];
             ++e) {
          const int u = direct[static_cast<std::size_t>(e)].from;
          if (reach[static_cast<std::size_t>(u)] != k_unreached) continue;
          reach[static_cast<std::size_t>(u)] = static_cast<std::uint16_t>(d + 1);
          seen.push_back(u);
        }
      }
      for (; i < j; ++i) {
        const std::uint16_t core_hops = reach[static_cast<std::size_t>(transit[i].from)];
        if (core_hops >= transit[i].weight) transits_strict_ = false;
        if (core_hops > transit[i].weight) kept.push_back(transit[i]);
      }
      for (const int v : seen)
        reach[static_cast<std::size_t>(v)] = k_unreached;
    }
  }

  // The core's in-edges: direct links (weight 1) and the transits kept.
  direct.insert(direct.end(), kept.begin(), kept.end());
  sort_and_dedupe(direct, core_devices_.size());
  edge_offsets_.assign(cores + 1, 0);
  edges_.clear();
  edges_.reserve(direct.size());
  for (const Candidate& e : direct) {
    ++edge_offsets_[static_cast<std::size_t>(e.to) + 1];
    edges_.push_back(Edge{e.from, e.weight});
  }
  std::partial_sum(edge_offsets_.begin(), edge_offsets_.end(), edge_offsets_.begin());
}

void RouteDistances::fill(std::span<const Seed> seeds, std::vector<std::uint16_t>& core_dist) const {
  const std::span<const Seed> sets[1] = {seeds};
  std::vector<std::uint16_t>* const outs[1] = {&core_dist};
  fill_batch(sets, outs);
}

// Dial's algorithm over distance levels, bit-parallel over the seed sets: pending_[d] holds (core,
// mask) pairs, "the sets in mask reach core at distance d"; at level d each core keeps the bits that
// had not reached it before, which fixes its distance for those sets, and passes them on along its
// in-edges to pending_[d + weight].
void RouteDistances::fill_batch(std::span<const std::span<const Seed>> seed_sets,
                                std::span<std::vector<std::uint16_t>* const> core_dists) const {
  if (seed_sets.size() != core_dists.size() || seed_sets.size() > k_batch)
    throw std::logic_error("RouteDistances::fill_batch: one output per seed set, at most 64");
  const std::size_t cores = core_devices_.size();
  for (std::vector<std::uint16_t>* out : core_dists)
    out->assign(cores, k_unreached);
  reached_.assign(cores, 0);
  arriving_.assign(cores, 0);
  std::size_t top = 0;  // pending_[0..top) may hold pairs
  const auto push = [&](int core, std::uint32_t d, std::uint64_t mask) {
    if (d >= k_unreached) throw std::length_error("Cluster::route: path longer than 65534 hops");
    if (pending_.size() <= d) pending_.resize(d + 1);
    pending_[d].emplace_back(core, mask);
    top = std::max<std::size_t>(top, d + 1);
  };
  for (std::size_t j = 0; j < seed_sets.size(); ++j) {
    const std::uint64_t bit = std::uint64_t{1} << j;
    for (const Seed& s : seed_sets[j]) {
      const auto f = static_cast<std::size_t>(s.forwarding);
      if (core_index_[f] >= 0) {
        push(core_index_[f], s.offset, bit);
        continue;
      }
      const int k = component_of_[f];
      for (int a = entry_offsets_[static_cast<std::size_t>(k)]; a < entry_offsets_[static_cast<std::size_t>(k) + 1];
           ++a) {
        const Entry& e = entries_[static_cast<std::size_t>(a)];
        const std::uint16_t d = inside(k, e.local, local_index_[f]);
        if (d != k_unreached) push(e.core, std::uint32_t{1} + d + s.offset, bit);
      }
    }
  }
  for (std::size_t d = 0; d < top; ++d) {
    touched_.clear();
    for (const auto& [core, mask] : pending_[d]) {
      const auto c = static_cast<std::size_t>(core);
      const std::uint64_t fresh = mask & ~reached_[c];
      if (fresh == 0) continue;
      if (arriving_[c] == 0) touched_.push_back(core);
      arriving_[c] |= fresh;
    }
    pending_[d].clear();
    for (const int core : touched_) {
      const auto c = static_cast<std::size_t>(core);
      const std::uint64_t fresh = arriving_[c];
      arriving_[c] = 0;
      reached_[c] |= fresh;
      for (std::uint64_t m = fresh; m != 0; m &= m - 1)
        (*core_dists[static_cast<std::size_t>(std::countr_zero(m))])[c] = static_cast<std::uint16_t>(d);
      for (int e = edge_offsets_[c]; e < edge_offsets_[c + 1]; ++e) {
        const Edge& edge = edges_[static_cast<std::size_t>(e)];
        const std::uint64_t onward = fresh & ~reached_[static_cast<std::size_t>(edge.from)];
        if (onward != 0) push(edge.from, static_cast<std::uint32_t>(d) + edge.weight, onward);
      }
    }
  }
}

void RouteDistances::component_seeds(std::span<const Seed> seeds, std::vector<Seed>& out) const {
  out.clear();
  for (const Seed& s : seeds)
    if (core_index_[static_cast<std::size_t>(s.forwarding)] < 0) out.push_back(s);
}

std::uint32_t RouteDistances::distance_inside(std::span<const Seed> in_components, int f) const {
  const int k = component_of_[static_cast<std::size_t>(f)];
  std::uint32_t best = k_unreached;
  for (const Seed& s : in_components) {
    if (component_of_[static_cast<std::size_t>(s.forwarding)] != k) continue;
    const std::uint16_t d =
        inside(k, local_index_[static_cast<std::size_t>(f)], local_index_[static_cast<std::size_t>(s.forwarding)]);
    if (d != k_unreached) best = std::min<std::uint32_t>(best, std::uint32_t{d} + s.offset);
  }
  return best;
}

}  // namespace clustersim
