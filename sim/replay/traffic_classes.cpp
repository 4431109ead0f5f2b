#include "sim/replay/traffic_classes.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <map>
#include <numeric>
#include <unordered_map>

#include "topologies/cluster.hpp"

namespace clustersim {
namespace {

constexpr std::uint32_t k_none = 0xffffffffU;

// Numbers the items 0..n-1 by their signatures (`signature(i)`: a span of integers), equal signatures
// equal numbers, in the order of their first item (deterministic). A hash finds the candidates (an open
// addressing table of (hash, number), probed linearly, grown at half full); a number is shared only
// after comparing the signatures. Returns the count.
template <class Signature>
std::size_t relabel(std::size_t n, const Signature& signature, std::vector<std::uint64_t>& out) {
  std::vector<std::uint32_t> item_of;  // per number: its first item
  std::size_t mask = std::bit_ceil(std::max<std::size_t>(64, n / 2)) - 1;
  std::vector<std::uint64_t> hashes(mask + 1);
  std::vector<std::uint32_t> numbers(mask + 1, k_none);
  const auto slot_of = [&](std::uint64_t h) {
    return static_cast<std::size_t>((h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL >> 7);
  };
  const auto grow = [&] {
    mask = 2 * mask + 1;
    std::vector<std::uint64_t> old_hashes(mask + 1);
    std::vector<std::uint32_t> old_numbers(mask + 1, k_none);
    old_hashes.swap(hashes);
    old_numbers.swap(numbers);
    for (std::size_t k = 0; k < old_numbers.size(); ++k)
      if (old_numbers[k] != k_none) {
        std::size_t slot = slot_of(old_hashes[k]) & mask;
        while (numbers[slot] != k_none)
          slot = (slot + 1) & mask;
        hashes[slot] = old_hashes[k];
        numbers[slot] = old_numbers[k];
      }
  };
  out.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto sig = signature(i);
    std::uint64_t h = 0x84222325cbf29ce4ULL;
    for (const std::uint64_t v : sig)
      h = (h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2))) * 0x100000001b3ULL;
    std::size_t slot = slot_of(h) & mask;
    std::uint32_t number = k_none;
    for (; numbers[slot] != k_none; slot = (slot + 1) & mask) {
      if (hashes[slot] != h) continue;
      const auto other = signature(item_of[numbers[slot]]);
      if (std::equal(sig.begin(), sig.end(), other.begin(), other.end())) {
        number = numbers[slot];
        break;
      }
    }
    if (number == k_none) {
      number = static_cast<std::uint32_t>(item_of.size());
      item_of.push_back(static_cast<std::uint32_t>(i));
      hashes[slot] = h;
      numbers[slot] = number;
      if (2 * item_of.size() > mask + 1) grow();
    }
    out[i] = number;
  }
  return item_of.size();
}

}  // namespace

TrafficClasses::TrafficClasses(const Cluster& cluster, bool adaptive_checks)
    : cluster_(cluster), load_(cluster.links().size(), 0), record_choices_(adaptive_checks) {}

bool AdaptiveChecks::hold(std::size_t batch, std::span<const int> load) const {
  const auto load_of = [&](int canonical) { return canonical < 0 ? 0 : load[static_cast<std::size_t>(canonical)]; };
  for (std::size_t k = begin[batch]; k < begin[batch + 1];) {
    const auto m = static_cast<std::size_t>(items[k]);
    const int taken = load_of(items[k + 1]) - items[k + 2];  // D of the link taken
    for (std::size_t j = 0; j < m; ++j)
      if (load_of(items[k + 3 + 2 * j]) - items[k + 4 + 2 * j] < taken) return false;
    k += 3 + 2 * m;
  }
  return true;
}

bool TrafficClasses::add_batch(std::span<const Transfer> transfers, bool same_launch,
                               std::span<const std::pair<int, int>> context,
                               std::span<const std::uint32_t> same_transfers) {
  constexpr std::uint64_t k_other_flow = 0x9e3779b97f4a7c15ULL;
  const auto batch = static_cast<std::uint32_t>(batch_begin_.size() - 1);
  launch_start_.push_back(same_launch && batch > 0 ? launch_start_.back() : batch);
  // The transfers of the batch's launch in flight per link, as the backend counts them while it routes
  // the launch (adaptive routing reads them; static routing ignores them).
  const auto clear_load = [&] {
    for (const int l : loaded_)
      load_[static_cast<std::size_t>(l)] = 0;
    loaded_.clear();
  };
  if (!same_launch) clear_load();
  context_of_.push_back(-1);
  shares_of_.push_back(batch);
  const std::size_t transfers_before = transfer_batch_.size(), routes_before = route_links_.size();
  if (!context.empty()) {
    context_of_.back() = static_cast<int>(contexts_.size());
    contexts_.emplace_back(context.begin(), context.end());
    for (const auto& [link, count] : context) {
      const auto l = static_cast<std::size_t>(link);
      if (load_[l] == 0) loaded_.push_back(link);
      load_[l] += count;
    }
  }
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    const Transfer& t = transfers[i];
    transfer_batch_.push_back(batch);
    transfer_bytes_.push_back(t.bytes);
    transfer_pipelined_.push_back(t.pipelined ? 1 : 0);
    if (t.src_gpu != t.dst_gpu && t.bytes > 0.0) {  // the backends route these only
      route_.clear();
      check_route_.clear();
      choices_.clear();
      // A route whose picks read no flow id is every flow's; one that hashed it is routed again for
      // another id, and the batch refused where the two differ.
      bool hashed = false;
      cluster_.route(t.src_gpu, t.dst_gpu, i, route_, load_, t.lane, record_choices_ ? &choices_ : nullptr, &hashed);
      if (hashed) {
        cluster_.route(t.src_gpu, t.dst_gpu, i ^ k_other_flow, check_route_, load_, t.lane);
        if (route_ != check_route_) {
          clear_load();
          return false;
        }
      }
      // Each choice: its site (the set of equal-cost links, numbered by a hash of its links) and the
      // link taken.
      for (std::size_t k = 0; k < choices_.size();) {
        const auto n = static_cast<std::size_t>(choices_[k]);
        const std::span<const int> site(choices_.data() + k + 2, n);
        const int taken = site[static_cast<std::size_t>(choices_[k + 1])];
        k += 2 + n;
        std::uint64_t h = 0x84222325cbf29ce4ULL;
        for (const int l : site)
          h = (h ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(l))) * 0x100000001b3ULL;
        const auto fresh = static_cast<std::uint32_t>(site_begin_.size() - 1);
        auto [it, inserted] = site_of_hash_.try_emplace(h, fresh);
        std::uint32_t s = it->second;
        if (!inserted) {
          while (true) {
            const std::span<const int> other(site_links_.data() + site_begin_[s], site_begin_[s + 1] - site_begin_[s]);
            if (std::equal(site.begin(), site.end(), other.begin(), other.end())) break;
            if (site_next_[s] == k_none) {
              site_next_[s] = fresh;
              s = fresh;
              inserted = true;
              break;
            }
            s = site_next_[s];
          }
        }
        if (inserted) {
          site_links_.insert(site_links_.end(), site.begin(), site.end());
          site_begin_.push_back(site_links_.size());
          site_next_.push_back(k_none);
        }
        entries_.emplace_back(s, taken);
      }
      for (const int l : route_)
        if (load_[static_cast<std::size_t>(l)]++ == 0) loaded_.push_back(l);
      route_links_.insert(route_links_.end(), route_.begin(), route_.end());
    }
    route_begin_.push_back(route_links_.size());
  }
  // A variant whose routes are those of an earlier batch of the same transfers shares that batch's
  // transfers (and so its classes and representatives): only its choices (entries_) are its own, read
  // against its own context by its checks (refine). Equal routes visit the same switches, so the sites
  // of its choices are that batch's too.
  if (!context.empty())
    for (const std::uint32_t e : same_transfers) {
      if (shares_of_[e] != e) continue;
      const std::size_t first = batch_begin_[e], count = batch_begin_[e + 1] - first;
      if (count != transfers.size()) continue;
      const auto routes_of = [&](std::size_t from, std::size_t k) {
        return std::span<const int>(route_links_)
            .subspan(route_begin_[from], route_begin_[from + k] - route_begin_[from]);
      };
      const auto mine = routes_of(transfers_before, count), theirs = routes_of(first, count);
      if (!std::equal(mine.begin(), mine.end(), theirs.begin(), theirs.end()) ||
          !std::equal(route_begin_.begin() + static_cast<std::ptrdiff_t>(transfers_before),
                      route_begin_.begin() + static_cast<std::ptrdiff_t>(transfers_before + count + 1),
                      route_begin_.begin() + static_cast<std::ptrdiff_t>(first),
                      [&](std::size_t a, std::size_t b) { return a - routes_before == b - route_begin_[first]; }))
        continue;
      shares_of_.back() = e;
      transfer_batch_.resize(transfers_before);
      transfer_bytes_.resize(transfers_before);
      transfer_pipelined_.resize(transfers_before);
      route_begin_.resize(transfers_before + 1);
      route_links_.resize(routes_before);
      break;
    }
  batch_begin_.push_back(transfer_batch_.size());
  {  // the batch's distinct (site, link taken)
    const auto first = entries_.begin() + static_cast<std::ptrdiff_t>(entry_begin_.back());
    std::sort(first, entries_.end());
    entries_.erase(std::unique(first, entries_.end()), entries_.end());
    entry_begin_.push_back(entries_.size());
  }
  return true;
}

bool TrafficClasses::refine() {
  const std::size_t n = transfer_batch_.size();
  const auto links = cluster_.links();
  const std::size_t link_count = links.size();
  const auto route = [&](std::size_t i) {
    return std::span<const int>(route_links_).subspan(route_begin_[i], route_begin_[i + 1] - route_begin_[i]);
  };
  // The links the routes take, and the transfers crossing each (CSR, in transfer order).
  std::vector<std::size_t> cross_begin(link_count + 1, 0);
  for (const int l : route_links_)
    ++cross_begin[static_cast<std::size_t>(l) + 1];
  for (std::size_t l = 0; l < link_count; ++l)
    cross_begin[l + 1] += cross_begin[l];
  std::vector<std::uint32_t> crossing(route_links_.size());
  {
    std::vector<std::size_t> fill(cross_begin.begin(), cross_begin.end() - 1);
    for (std::size_t i = 0; i < n; ++i)
      for (const int l : route(i))
        crossing[fill[static_cast<std::size_t>(l)]++] = static_cast<std::uint32_t>(i);
  }
  std::vector<int> used;  // links crossed by some transfer
  for (std::size_t l = 0; l < link_count; ++l)
    if (cross_begin[l + 1] != cross_begin[l]) used.push_back(static_cast<int>(l));

  // Initial colours.
  std::vector<std::uint64_t> t_colour, l_colour(link_count, 0), used_colour;
  std::vector<std::uint64_t> scratch;
  std::vector<std::size_t> sig_begin;
  const auto flat = [&](std::size_t i) {
    return std::span<const std::uint64_t>(scratch).subspan(sig_begin[i], sig_begin[i + 1] - sig_begin[i]);
  };
  const auto build = [&](std::size_t count, const auto& fill) {
    scratch.clear();
    sig_begin.assign(1, 0);
    for (std::size_t i = 0; i < count; ++i) {
      fill(i);
      sig_begin.push_back(scratch.size());
    }
  };
  build(n, [&](std::size_t i) {
    scratch.push_back(transfer_batch_[i]);
    scratch.push_back(std::bit_cast<std::uint64_t>(transfer_bytes_[i]));
    scratch.push_back(static_cast<std::uint64_t>(transfer_pipelined_[i]));
  });
  std::size_t t_count = relabel(n, flat, t_colour);
  build(used.size(), [&](std::size_t k) {
    const Link& l = links[static_cast<std::size_t>(used[k])];
    scratch.push_back(std::bit_cast<std::uint64_t>(l.bandwidth_Bps));
    scratch.push_back(std::bit_cast<std::uint64_t>(l.latency_s));
    scratch.push_back(static_cast<std::uint64_t>(l.technology));
  });
  std::size_t l_count = relabel(used.size(), flat, used_colour);
  for (std::size_t k = 0; k < used.size(); ++k)
    l_colour[static_cast<std::size_t>(used[k])] = used_colour[k];

  // Links by the transfers crossing them: (batch, bytes, pipelined) of each. Then transfers by the
  // classes of their links; then links by the classes of the transfers crossing them.
  std::vector<std::uint64_t> part;
  const auto refine_links = [&] {
    build(used.size(), [&](std::size_t k) {
      const auto l = static_cast<std::size_t>(used[k]);
      scratch.push_back(l_colour[l]);
      part.clear();
      for (std::size_t c = cross_begin[l]; c < cross_begin[l + 1]; ++c)
        part.push_back(t_colour[crossing[c]]);
      std::sort(part.begin(), part.end());
      scratch.insert(scratch.end(), part.begin(), part.end());
    });
    l_count = relabel(used.size(), flat, used_colour);
    for (std::size_t k = 0; k < used.size(); ++k)
      l_colour[static_cast<std::size_t>(used[k])] = used_colour[k];
  };
  refine_links();
  std::vector<std::uint64_t> next_t;
  build(n, [&](std::size_t i) {
    scratch.push_back(t_colour[i]);
    part.clear();
    for (const int l : route(i))
      part.push_back(l_colour[static_cast<std::size_t>(l)]);
    std::sort(part.begin(), part.end());
    scratch.insert(scratch.end(), part.begin(), part.end());
  });
  t_count = relabel(n, flat, next_t);
  t_colour.swap(next_t);
  refine_links();
  // Whether every member of each transfer class crosses every link class of its class route: what
  // makes the flow backend's max-min shares provably those of the exhaustive system (header).
  // Checked, not enforced: refining until it holds takes a pass per hop of a ring's distance to a
  // leaf boundary (8 more passes at 16,384 GPUs did not reach it and multiplied the classes by 5).
  {
    std::vector<std::uint32_t> first_of(t_count, k_none);  // per transfer class: its first member
    std::vector<std::uint64_t> first;                      // per transfer: its route's link classes
    members_cross_class_routes_ = true;
    const auto link_classes_of = [&](std::size_t i, std::vector<std::uint64_t>& out) {
      out.clear();
      for (const int l : route(i))
        out.push_back(l_colour[static_cast<std::size_t>(l)]);
      std::sort(out.begin(), out.end());
      out.erase(std::unique(out.begin(), out.end()), out.end());
    };
    for (std::size_t i = 0; i < n && members_cross_class_routes_; ++i) {
      std::uint32_t& f = first_of[t_colour[i]];
      if (f == k_none) {
        f = static_cast<std::uint32_t>(i);
        continue;
      }
      link_classes_of(i, part);
      link_classes_of(f, first);
      members_cross_class_routes_ = part == first;
    }
  }
  link_class_count_ = l_count;

  // Canonical links: the smallest of each class.
  std::vector<int> first_link(l_count, -1);
  classes_.canonical.assign(link_count, -1);
  for (const int l : used) {
    int& f = first_link[l_colour[static_cast<std::size_t>(l)]];
    if (f < 0) f = l;
    classes_.canonical[static_cast<std::size_t>(l)] = f;
  }
  // The checks of the adaptive choices: per batch, its distinct (classes of a site's links, class of
  // the link taken), each class with the load P the batch was routed against there (the transfers of
  // its launch's earlier batches crossing the class's links: the same on each, header).
  checks_ = AdaptiveChecks{};
  if (record_choices_) {
    const auto canonical = [&](int l) { return classes_.canonical[static_cast<std::size_t>(l)]; };
    // Per site, its links' classes (sorted, distinct), numbered.
    std::vector<std::uint32_t> site_classes(site_begin_.size() - 1);
    std::map<std::vector<int>, std::uint32_t> class_set_of;
    std::vector<const std::vector<int>*> class_sets;
    std::vector<int> set;
    for (std::size_t s = 0; s + 1 < site_begin_.size(); ++s) {
      set.clear();
      for (std::size_t k = site_begin_[s]; k < site_begin_[s + 1]; ++k)
        set.push_back(canonical(site_links_[k]));
      std::sort(set.begin(), set.end());
      set.erase(std::unique(set.begin(), set.end()), set.end());
      const auto [it, inserted] = class_set_of.try_emplace(set, static_cast<std::uint32_t>(class_sets.size()));
      if (inserted) class_sets.push_back(&it->first);
      site_classes[s] = it->second;
    }
    std::vector<std::pair<std::uint32_t, int>> records;  // (class set, class of the link taken)
    std::vector<int> dense(link_count, 0);
    for (std::size_t b = 0; b + 1 < batch_begin_.size(); ++b) {
      records.clear();
      for (std::size_t e = entry_begin_[b]; e < entry_begin_[b + 1]; ++e)
        records.emplace_back(site_classes[entries_[e].first], canonical(entries_[e].second));
      std::sort(records.begin(), records.end());
      records.erase(std::unique(records.begin(), records.end()), records.end());
      // P on canonical link c: the launch's transfers before batch b crossing it (crossing lists are in
      // transfer order).
      const std::size_t from = batch_begin_[launch_start_[b]], to = batch_begin_[b];
      const int context = context_of_[b];
      // The context, if any, scattered on `dense` (cleared after the batch): its count on link l.
      if (context >= 0)
        for (const auto& [link, count] : contexts_[static_cast<std::size_t>(context)])
          dense[static_cast<std::size_t>(link)] = count;
      const auto context_load = [&](int l) { return dense[static_cast<std::size_t>(l)]; };
      const auto load_before = [&](int c) {
        if (c >= 0 && context >= 0) return context_load(c);
        if (c < 0 || from == to) return 0;
        const auto l = static_cast<std::size_t>(c);
        const auto first = crossing.begin() + static_cast<std::ptrdiff_t>(cross_begin[l]);
        const auto last = crossing.begin() + static_cast<std::ptrdiff_t>(cross_begin[l + 1]);
        return static_cast<int>(std::lower_bound(first, last, static_cast<std::uint32_t>(to)) -
                                std::lower_bound(first, last, static_cast<std::uint32_t>(from)));
      };
      // A context is the load on every link of its launch's time; the records read it on canonical links,
      // so it must be the same on every link of each class a choice of the batch meets (it is when it was
      // the exhaustive replay's load, header; a context taken from an inexact replay may not be): where
      // not, the batch gets a record that never holds (D 1 on the link taken, 0 on another).
      bool uniform = true;
      if (context >= 0) {
        for (std::size_t e = entry_begin_[b]; e < entry_begin_[b + 1] && uniform; ++e) {
          const std::uint32_t s = entries_[e].first;
          for (std::size_t k = site_begin_[s]; k < site_begin_[s + 1] && uniform; ++k) {
            const int c = canonical(site_links_[k]);
            uniform = context_load(site_links_[k]) == (c < 0 ? 0 : context_load(c));
          }
        }
      }
      const auto clear_context = [&] {
        if (context >= 0)
          for (const auto& [link, count] : contexts_[static_cast<std::size_t>(context)])
            dense[static_cast<std::size_t>(link)] = 0;
      };
      if (!uniform) {
        clear_context();
        checks_.items.insert(checks_.items.end(), {1, -1, -1, -1, 0});
        checks_.begin.push_back(checks_.items.size());
        continue;
      }
      for (const auto& [cs, taken] : records) {
        const std::vector<int>& classes = *class_sets[cs];
        checks_.items.push_back(static_cast<int>(classes.size()));
        checks_.items.push_back(taken);
        checks_.items.push_back(load_before(taken));
        for (const int c : classes) {
          checks_.items.push_back(c);
          checks_.items.push_back(load_before(c));
        }
      }
      clear_context();
      checks_.begin.push_back(checks_.items.size());
    }
  }

  // One representative per transfer class (its first transfer) and its class route: each class of
  // links that a transfer of the class crosses, as its canonical link repeated c(T, L) times, the
  // transfers of the class on each link of L (the incidences of the class on L over L's size). The
  // representative's own links may be of other classes than another member's (colours of equal
  // bandwidth share and load, split further by which transfer classes cross them): its rate, the
  // least over its links, is the same over either (the loads of the first refinement are equal).
  std::vector<std::uint64_t> class_size(l_count, 0);
  for (const int l : used)
    ++class_size[l_colour[static_cast<std::size_t>(l)]];
  // The incidences of each transfer class on each link class (its members' routes, counted per link
  // class; the link classes of a transfer class in increasing order).
  std::vector<std::size_t> member_begin(t_count + 1, 0);
  for (std::size_t i = 0; i < n; ++i)
    ++member_begin[t_colour[i] + 1];
  for (std::size_t t = 0; t < t_count; ++t)
    member_begin[t + 1] += member_begin[t];
  std::vector<std::uint32_t> members(n);
  {
    std::vector<std::size_t> fill(member_begin.begin(), member_begin.end() - 1);
    for (std::size_t i = 0; i < n; ++i)
      members[fill[t_colour[i]]++] = static_cast<std::uint32_t>(i);
  }
  std::vector<std::size_t> colour_begin(t_count + 1, 0);  // (link class, c) of each transfer class
  std::vector<std::pair<std::uint64_t, std::size_t>> loads;
  std::vector<std::uint64_t> incidences(l_count, 0), touched;
  for (std::size_t t = 0; t < t_count; ++t) {
    touched.clear();
    for (std::size_t m = member_begin[t]; m < member_begin[t + 1]; ++m)
      for (const int l : route(members[m]))
        if (incidences[l_colour[static_cast<std::size_t>(l)]]++ == 0)
          touched.push_back(l_colour[static_cast<std::size_t>(l)]);
    std::sort(touched.begin(), touched.end());
    for (const std::uint64_t l : touched) {
      const std::uint64_t c = incidences[l];
      incidences[l] = 0;
      if (c % class_size[l] != 0) return false;  // c(T, L) not whole: refused
      loads.emplace_back(l, c / class_size[l]);
      ++colour_begin[t + 1];
    }
  }
  for (std::size_t t = 0; t < t_count; ++t)
    colour_begin[t + 1] += colour_begin[t];
  std::vector<int> route_of_colour(t_count, -1);
  class_route_of_.assign(n, -1);
  classes_.route_begin.assign(1, 0);
  classes_.links.clear();
  for (std::size_t i = 0; i < n; ++i) {
    int& k = route_of_colour[t_colour[i]];
    if (k >= 0) continue;
    k = static_cast<int>(classes_.route_begin.size() - 1);
    class_route_of_[i] = k;
    for (std::size_t x = colour_begin[t_colour[i]]; x < colour_begin[t_colour[i] + 1]; ++x)
      classes_.links.insert(classes_.links.end(), loads[x].second, first_link[loads[x].first]);
    classes_.route_begin.push_back(classes_.links.size());
  }
  return true;
}

std::vector<std::pair<std::size_t, int>> TrafficClasses::representatives(std::size_t batch) const {
  batch = shares_of_[batch];
  std::vector<std::pair<std::size_t, int>> reps;
  for (std::size_t i = batch_begin_[batch]; i < batch_begin_[batch + 1]; ++i)
    if (class_route_of_[i] >= 0) reps.emplace_back(i - batch_begin_[batch], class_route_of_[i]);
  return reps;
}

}  // namespace clustersim
