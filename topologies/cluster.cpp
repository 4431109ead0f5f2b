// The cluster graph: storage, construction API, connectivity check (Boost.Graph) and routing.
//
// Routing. A route from GPU s to GPU t is a shortest path in hop count whose intermediate devices all
// forward (switches and NICs; GPUs only in a torus). It is a greedy walk from s: at each device, among
// the out-links whose head is one hop closer to t, one is picked. Fabric switches pick by
// fabric.routing: d_mod_k takes the next mixed-radix digit of t's destination number (its NIC's
// position, NICs ordered by their switch), adaptive (and spray: EFA) the least loaded link from that
// digit on (the load the backends pass: transfers in flight), ecmp a 64-bit hash (splitmix64) of (s, t, flow_id,
// current device), which spreads flows evenly and independently at every hop. Devices inside nodes
// hash, unless the transfer has a lane (a GPU striping over its several NICs): then the lane picks the
// GPU's own NIC of that rail, and the switch delivering to the destination's NICs the peer's. The same flow on the same
// load always takes the same path. At the source, among equally short first hops, NVLink is preferred to PCIe, and
// turning around at a NIC (GPU -> NIC -> GPU between GPUs sharing it) comes last. From a fabric switch, the walk skips
// without computing their distance the heads inside nodes other than the destination's when no node is a shortcut
// between two switches (RouteDistances::transits_strict): at a leaf, the NICs of the other nodes.
//
// Distances. dist_t(v), for every forwarding v, is the minimum over t's forwarding in-neighbours u of
// 1 + d(v, u), d the forwarding-only distance. Any u can be "funnelled" into its own forwarding
// in-neighbours W: every path into u comes from W, so 1 + d(v, u) = 2 + min_{w in W} d(v, w) for
// v != u. Funnelling devices with at most k_max_funnel in-neighbours (NICs into their leaves, a PCIe
// switch into its NIC and host bridge, an NVSwitch into nothing: only GPUs enter it) turns each
// destination into (seeds: hub devices with offsets, exceptions: the funnelled devices with their
// exact distances), and destinations with the same normalised seeds share one distance array: the
// 16,384 GPUs of a DGX fat-tree share one array per leaf. An array holds the distances of the core
// devices only (fabric switches; RouteDistances in route_distances.hpp answers the node-owned ones from
// their exits into the core, exactly), is filled lazily by a multi-source reverse BFS over the core
// (uint16), and cached within k_route_cache_budget_bytes, evicted round-robin.
#include "topologies/cluster.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <future>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>

#include "sim/core/enum_names.hpp"
#include "sim/core/error.hpp"
#include "topologies/core_distance_blocks.hpp"
#include "topologies/fabric_builder.hpp"
#include "topologies/node_builder.hpp"
#include "topologies/route_distances.hpp"

namespace clustersim {
namespace {

constexpr std::uint16_t k_unreached = std::numeric_limits<std::uint16_t>::max();
constexpr std::size_t k_route_cache_budget_bytes = std::size_t{256} << 20;
constexpr std::size_t k_head_mask_budget_bytes = std::size_t{256} << 20;
constexpr std::size_t k_mask_bits = 64;
// Out-link masks span up to this many 64-bit words (devices of up to 256 out-links: switches of radix
// up to 256); larger devices are scanned link by link.
constexpr std::size_t k_max_mask_words = 4;
constexpr std::uint32_t k_no_slot = std::numeric_limits<std::uint32_t>::max();
constexpr std::size_t k_max_funnel = 4;  // funnel devices with at most this many forwarding in-neighbours
constexpr int k_max_funnel_depth = 4;

constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

using BoostGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

// The preconditions of a route query (`what`: the function): a finalized cluster, both GPUs in range.
void check_route_query(bool finalized, int gpu_count, int src_gpu, int dst_gpu, const std::string& what) {
  if (!finalized) throw std::logic_error(what + " before finalize()");
  if (src_gpu < 0 || src_gpu >= gpu_count || dst_gpu < 0 || dst_gpu >= gpu_count)
    throw std::out_of_range(what + ": GPU " + std::to_string(src_gpu) + " -> " + std::to_string(dst_gpu) +
                            " outside 0.." + std::to_string(gpu_count - 1));
}

constexpr EnumName<DeviceKind> kDeviceKindNames[] = {
    {DeviceKind::gpu, "gpu"},
    {DeviceKind::nvswitch, "nvswitch"},
    {DeviceKind::nic, "nic"},
    {DeviceKind::pcie_switch, "pcie_switch"},
    {DeviceKind::host_bridge, "host_bridge"},
    {DeviceKind::leaf_switch, "leaf_switch"},
    {DeviceKind::spine_switch, "spine_switch"},
    {DeviceKind::core_switch, "core_switch"},
};

constexpr EnumName<LinkTechnology> kLinkTechnologyNames[] = {
    {LinkTechnology::nvlink, "nvlink"},
    {LinkTechnology::pcie, "pcie"},
    {LinkTechnology::infiniband, "infiniband"},
    {LinkTechnology::ethernet, "ethernet"},
};

}  // namespace

const char* to_string(DeviceKind kind) {
  return name_of(kDeviceKindNames, kind, "unknown");
}

const char* to_string(LinkTechnology tech) {
  return name_of(kLinkTechnologyNames, tech, "unknown");
}

std::optional<DeviceKind> device_kind_named(std::string_view name) {
  return value_named(kDeviceKindNames, name);
}

std::optional<LinkTechnology> link_technology_named(std::string_view name) {
  return value_named(kLinkTechnologyNames, name);
}

struct Cluster::Impl {
  ClusterSpec spec;
  std::vector<Device> devices;
  std::vector<Link> links;
  bool finalized = false;

  // Adjacency after finalize(): CSR (offsets into link ids, in link order per device).
  std::vector<int> out_offsets, out_ids;
  // Aligned with out_ids, what the walk reads of an out-link, side by side (one cache miss per link on
  // a large fabric, where five arrays cost up to five): the link; its head device and the head's
  // forwarding index; the head's core index when its distance is its key's array entry plus the shift
  // (a core device, not a GPU, never an exception), else -1: the walk's fast path; the head's component
  // (RouteDistances) when it is a forwarding device outside the core, else -1 (the walk may skip
  // foreign ones where RouteDistances::transits_strict()).
  struct OutLink {
    int id;
    int head;
    int head_forwarding;
    int head_core;
    int head_component;
  };
  std::vector<OutLink> out_links;
  // Per device, what the walk asks of the device it is at (a byte, where a Device with its name spans
  // a cache line): k_fabric_device (owned by no node), k_gpu_device.
  static constexpr std::uint8_t k_fabric_device = 1, k_gpu_device = 2;
  std::vector<std::uint8_t> walk_flags;
  mutable std::vector<std::uint32_t> component_stamp;  // per component: the last walk that marked it
  mutable std::uint32_t walk_stamp = 0;
  std::vector<int> in_offsets, in_ids;

  // Routing: dense index of each forwarding device (-1 for the others).
  std::vector<int> forwarding_index;
  int forwarding_count = 0;
  // Per destination GPU: its seed set (key), the offset added to the key's distances, and its
  // exceptions (funnelled devices with exact distances) in CSR form.
  struct Seed {
    int device;
    std::uint16_t offset;
    bool operator<(const Seed& o) const { return device != o.device ? device < o.device : offset < o.offset; }
    bool operator==(const Seed& o) const = default;
  };
  struct Exception {
    int device;
    std::uint16_t distance;
  };
  std::vector<std::uint32_t> key_of_gpu;
  std::vector<std::uint16_t> shift_of_gpu;
  std::vector<int> exception_offsets;
  std::vector<Exception> exceptions;
  std::vector<char> has_exception;  // per device: an exception of some destination (skip the scan if not)
  // route_bound(): over every link, and over the links between node-owned devices, which are the only
  // ones of routes shorter than fabric_route_min_hops (from a GPU to a fabric switch and on to a GPU).
  RouteBound any_route, owned_route;
  int fabric_route_min_hops = 0;
  void build_route_bounds();
  std::vector<std::vector<Seed>> key_seeds;  // normalised seeds of each key (min offset 0)
  // The same seeds as forwarding indices, and those of them outside the core, per key.
  std::vector<std::vector<RouteDistances::Seed>> key_forwarding_seeds;
  std::vector<std::vector<RouteDistances::Seed>> key_component_seeds;
  RouteDistances route_distances;
  // The keys' distance arrays, filled on demand, stored per block of core devices (fabric switches of
  // one kind and pod), equal blocks shared (core_distance_blocks.hpp); within k_route_cache_budget_bytes
  // (past it every key is dropped and refilled on demand).
  mutable CoreDistanceBlocks key_distances;
  mutable std::vector<std::vector<std::uint16_t>> fill_scratch;  // one full array per key of a batch
  mutable std::vector<int> walk_choices;                         // CSR positions of the eligible out-links at one step
  // The walk's cache of a core device's eligible core heads toward a key (they depend on the key's
  // distances only, not on the destination's shift), per switch class: the core devices whose own
  // block and their core heads' blocks are the same list of blocks (a fat-tree's cores; the
  // aggregation switches of one pod; the leaves of one pod). A key's mask at a device depends only on
  // the values of those blocks, so the keys whose blocks of the class are the same (the signature:
  // the blocks' stored values, shared between keys) share one mask per member: per class and
  // signature, a mask over each member's out-links (mask_words words each: devices of at most 64 x
  // mask_words) and a bitset of the masks known. Filled on demand within k_head_mask_budget_bytes; the
  // masks follow from the distances, so a full cache changes nothing. Memory: per class, its members x
  // its signatures (on a 3-tier fat-tree: the cores x the pods, a pod's switches x its leaves + 1),
  // not keys x switches.
  std::vector<std::uint32_t> class_of_core, member_of_core;  // per core device
  std::vector<std::vector<std::uint32_t>> class_blocks;      // per class: its blocks, sorted
  std::vector<std::uint32_t> class_members;                  // per class: its number of members
  struct ClassMasks {
    std::map<std::vector<const std::uint16_t*>, std::uint32_t> signatures;
    std::vector<std::vector<std::uint64_t>> masks, known;  // per signature (empty: past the budget)
  };
  mutable std::vector<ClassMasks> class_masks;
  mutable std::vector<std::vector<std::uint32_t>> key_signature;  // per key (lazily): per class, or k_no_slot
  mutable std::size_t head_mask_bytes = 0;
  void build_switch_classes();
  void clear_key_caches() const;
  // Words per out-link mask: enough for the core device with the most out-links, at most
  // k_max_mask_words (a fat-tree switch of radix 128 has 128 out-links: 2 words).
  std::size_t mask_words = 1;
  // Per device of at most 64 x mask_words out-links (mask_words words each): the masks of those whose
  // head is not a core device, inside a component (component_heads) or not (other_heads: GPUs,
  // funnelled switches).
  std::vector<std::uint64_t> other_heads, component_heads;
  // Per component, CSR of the out-links into it from core devices: (tail device, CSR position).
  std::vector<int> component_entry_offsets;
  std::vector<std::pair<int, int>> component_entries;
  mutable std::vector<int> own_components;  // the components mark_own_components() marked
  // The walks of route() replayed from a cache, per (src, dst, lane): the links up to the first choice
  // that reads the load or the flow (adaptive routing at a fabric switch, the hash), the walk's state
  // there (the device, its distance to go, the destination's digits not yet used) and its choices
  // there, to resume from; the whole route when it makes no such choice. What the cache holds is what
  // the walk computed from the same inputs, so a route is the same with it or without it. Bounded:
  // k_walk_slots walks per source GPU (a pipeline stage sends to two peers, a ring to one), the slots
  // allocated at the first route. 4: the GPT-3 step as fast as with 8, the 405B-class step at 65,536
  // GPUs 11 MiB less (313 against 324 MiB peak; 296 without the cache).
  struct CachedWalk {
    std::uint32_t begin = 0, length = 0;  // the links: walk_cache_links[begin, begin + length)
    int resume_device = -1;               // -1: the route is complete; else where the walk goes on
    std::uint32_t resume_want = 0, resume_destination = 0;
    std::uint32_t choices_begin = 0, choices_length = 0;  // walk_cache_choices: the choices there
  };
  struct WalkSlot {
    std::uint32_t dst_plus_one = 0;  // 0: empty (and so are the source's later slots)
    int lane = -1;
    std::uint32_t walk = 0;  // walk_cache index
  };
  static constexpr std::size_t k_walk_slots = 4;
  mutable std::vector<WalkSlot> walk_slots;  // k_walk_slots per source GPU
  mutable std::vector<CachedWalk> walk_cache;
  mutable std::vector<int> walk_cache_links, walk_cache_choices;
  // Per device, the walk_cache_choices offset of the choices last recorded there (UINT32_MAX: none):
  // a switch's walks to many destinations share one copy of equal choices (its uplinks).
  mutable std::vector<std::uint32_t> walk_device_choices;
  // Destination-based routing (fabric.routing d_mod_k, adaptive): each GPU's number as a destination,
  // its NIC's position when the NICs are ordered by the fabric switch they attach to.
  bool destination_routing = false;
  bool adaptive_routing = false;
  std::vector<std::uint32_t> destination_number;

  void build_destination_numbers();

  explicit Impl(ClusterSpec s) : spec(std::move(s)) {}

  std::span<const int> out_of(int device) const {
    const auto d = static_cast<std::size_t>(device);
    return {out_ids.data() + out_offsets[d], static_cast<std::size_t>(out_offsets[d + 1] - out_offsets[d])};
  }
  std::span<const int> in_of(int device) const {
    const auto d = static_cast<std::size_t>(device);
    return {in_ids.data() + in_offsets[d], static_cast<std::size_t>(in_offsets[d + 1] - in_offsets[d])};
  }

  void build_csr();
  void check_connectivity() const;
  void build_route_keys();
  CoreDistanceBlocks::View distances_of_key(std::uint32_t key) const;
  struct ForwardingGraph {
    std::vector<int> in_offsets, in_sources, node_of;
  };
  ForwardingGraph forwarding_graph() const;
  void build_key_forwarding_seeds();

  // Hops from forwarding device (or the destination itself) `device` to GPU `dst`; k_unreached if none.
  struct Target {
    int gpu;
    std::uint32_t key;
    CoreDistanceBlocks::View dist;  // core distances of the key
    std::span<const RouteDistances::Seed> component_seeds;
    std::uint32_t shift;
    std::span<const Exception> exceptions;
  };
  Target target(int dst_gpu) const {
    const auto g = static_cast<std::size_t>(dst_gpu);
    const std::uint32_t key = key_of_gpu[g];
    return Target{
        dst_gpu,
        key,
        distances_of_key(key),
        key_component_seeds[key],
        shift_of_gpu[g],
        std::span<const Exception>(exceptions.data() + exception_offsets[g],
                                   static_cast<std::size_t>(exception_offsets[g + 1] - exception_offsets[g]))};
  }
  std::uint32_t distance(const Target& t, int device) const {
    return distance(t, device, forwarding_index[static_cast<std::size_t>(device)]);
  }
  // mask_words words: the cached mask, or `scratch` filled when the cache is full.
  const std::uint64_t* core_head_mask(const Target& t, int current, int current_core, std::uint64_t* scratch) const;
  // Marks the components that hold t's component seeds and funnelled devices (its own components)
  // with a new stamp; the others are foreign to t until the next call.
  void mark_own_components(const Target& t) const {
    if (++walk_stamp == 0) {  // wrapped: clear the old stamps
      std::fill(component_stamp.begin(), component_stamp.end(), 0);
      walk_stamp = 1;
    }
    own_components.clear();
    const auto mark = [&](int f) {
      const int c = f < 0 ? -1 : route_distances.component_of(f);
      if (c < 0 || component_stamp[static_cast<std::size_t>(c)] == walk_stamp) return;
      component_stamp[static_cast<std::size_t>(c)] = walk_stamp;
      own_components.push_back(c);
    };
    mark(forwarding_index[static_cast<std::size_t>(t.gpu)]);  // a forwarding GPU (a torus)
    for (const Exception& e : t.exceptions)
      mark(forwarding_index[static_cast<std::size_t>(e.device)]);
    for (const RouteDistances::Seed& seed : t.component_seeds)
      mark(seed.forwarding);
  }
  bool foreign(int component) const {
    return component >= 0 && component_stamp[static_cast<std::size_t>(component)] != walk_stamp;
  }
  // The distance of the head of out-link slot k (a CSR position), after mark_own_components(t): core
  // heads read their key's array, heads in foreign components need only their exits (none of t's
  // seeds and funnelled devices is in their component).
  std::uint32_t head_distance(const Target& t, std::size_t k) const {
    const int core = out_links[k].head_core;
    if (core >= 0) {
      const std::uint16_t d = t.dist[core];
      return d == k_unreached ? k_unreached : std::uint32_t{d} + t.shift;
    }
    return other_head_distance(t, k);
  }
  // head_distance() of a head that is not a core device (out_links[k].head_core < 0).
  std::uint32_t other_head_distance(const Target& t, std::size_t k) const {
    if (foreign(out_links[k].head_component)) {
      const std::uint32_t d = route_distances.exit_distance(t.dist, out_links[k].head_forwarding);
      return d >= k_unreached ? k_unreached : d + t.shift;
    }
    return distance(t, out_links[k].head, out_links[k].head_forwarding);
  }
  // `f` is forwarding_index[device].
  std::uint32_t distance(const Target& t, int device, int f) const {
    if (device == t.gpu) return 0;
    if (f < 0) return k_unreached;
    const std::uint32_t d = route_distances.distance(t.dist, t.component_seeds, f);
    std::uint32_t best = d >= k_unreached ? k_unreached : d + t.shift;
    if (!has_exception[static_cast<std::size_t>(device)]) return best;
    for (const Exception& e : t.exceptions) {
      if (e.device == device) best = std::min<std::uint32_t>(best, e.distance);
    }
    return best;
  }
};

void Cluster::Impl::build_csr() {
  const std::size_t n = devices.size();
  out_offsets.assign(n + 1, 0);
  in_offsets.assign(n + 1, 0);
  for (const Link& l : links) {
    ++out_offsets[static_cast<std::size_t>(l.src) + 1];
    ++in_offsets[static_cast<std::size_t>(l.dst) + 1];
  }
  for (std::size_t i = 0; i < n; ++i) {
    out_offsets[i + 1] += out_offsets[i];
    in_offsets[i + 1] += in_offsets[i];
  }
  out_ids.resize(links.size());
  in_ids.resize(links.size());
  std::vector<int> out_fill(out_offsets.begin(), out_offsets.end() - 1);
  std::vector<int> in_fill(in_offsets.begin(), in_offsets.end() - 1);
  for (std::size_t i = 0; i < links.size(); ++i) {
    const Link& l = links[i];
    out_ids[static_cast<std::size_t>(out_fill[static_cast<std::size_t>(l.src)]++)] = static_cast<int>(i);
    in_ids[static_cast<std::size_t>(in_fill[static_cast<std::size_t>(l.dst)]++)] = static_cast<int>(i);
  }
}

// Every GPU must reach every other GPU through forwarding devices only.
// Fast sufficient test: the forwarding devices' subgraph has one strongly connected component K
// (found by a forward and a backward search from a forwarding neighbour of GPU 0) that every GPU can
// enter and leave in one hop. Otherwise an exact
// check: a BFS from each GPU over a graph where each GPU is split into a source copy (its out-links)
// and a sink copy (its in-links), so that no path passes through a GPU.
void Cluster::Impl::check_connectivity() const {
  const int gpu_count = spec.gpu_count();
  if (gpu_count <= 1) return;
  const auto n = devices.size();

  // Quick check: the strongly connected component of the forwarding devices that holds a forwarding
  // neighbour h of GPU 0 (the devices h reaches and that reach h, moving through forwarding devices
  // only, on the CSR arrays) is entered and left by every GPU: then every GPU reaches every other.
  std::vector<char> ahead(n), behind(n);
  std::vector<int> queue;
  const auto search = [&](int from, bool forward, std::vector<char>& seen) {
    std::fill(seen.begin(), seen.end(), 0);
    queue.assign(1, from);
    seen[static_cast<std::size_t>(from)] = 1;
    for (std::size_t q = 0; q < queue.size(); ++q) {
      for (const int id : forward ? out_of(queue[q]) : in_of(queue[q])) {
        const Link& l = links[static_cast<std::size_t>(id)];
        const int next = forward ? l.dst : l.src;
        if (!devices[static_cast<std::size_t>(next)].forwards || seen[static_cast<std::size_t>(next)]) continue;
        seen[static_cast<std::size_t>(next)] = 1;
        queue.push_back(next);
      }
    }
  };
  for (const int first : out_of(0)) {
    const int head = links[static_cast<std::size_t>(first)].dst;
    if (!devices[static_cast<std::size_t>(head)].forwards) continue;
    search(head, true, ahead);
    search(head, false, behind);
    const auto in_component = [&](int d) {
      return ahead[static_cast<std::size_t>(d)] != 0 && behind[static_cast<std::size_t>(d)] != 0;
    };
    bool all = true;
    for (int g = 0; g < gpu_count && all; ++g) {
      const auto touches = [&](std::span<const int> ids, bool head_side) {
        for (const int id : ids) {
          const Link& l = links[static_cast<std::size_t>(id)];
          if (in_component(head_side ? l.dst : l.src)) return true;
        }
        return false;
      };
      all = touches(out_of(g), true) && touches(in_of(g), false);
    }
    if (all) return;
  }

  // Exact check. Vertex v is device v (for GPUs: the sink copy); vertex n + g is GPU g's source copy.
  BoostGraph split(n + static_cast<std::size_t>(gpu_count));
  for (const Link& l : links) {
    const auto src = static_cast<std::size_t>(l.src);
    const Device& from = devices[src];
    if (from.forwards)
      boost::add_edge(src, static_cast<std::size_t>(l.dst), split);
    else if (l.src < gpu_count)
      boost::add_edge(n + src, static_cast<std::size_t>(l.dst), split);
  }
  std::vector<boost::default_color_type> colors(boost::num_vertices(split));
  const auto color_map = boost::make_iterator_property_map(colors.begin(), boost::get(boost::vertex_index, split));
  for (int a = 0; a < gpu_count; ++a) {
    std::fill(colors.begin(), colors.end(), boost::white_color);
    boost::breadth_first_visit(split, n + static_cast<std::size_t>(a), boost::color_map(color_map));
    for (int b = 0; b < gpu_count; ++b) {
      if (b == a || colors[static_cast<std::size_t>(b)] != boost::white_color) continue;
      const Device& da = devices[static_cast<std::size_t>(a)];
      const Device& db = devices[static_cast<std::size_t>(b)];
      throw SpecError(spec.source_file, "/fabric",
                      "the built cluster is not connected: GPU " + std::to_string(a) + " (" + da.name +
                          ") cannot reach GPU " + std::to_string(b) + " (" + db.name + ")");
    }
  }
}

// Seeds and exceptions of every destination GPU (see the top of this file), keys interned.
void Cluster::Impl::build_route_keys() {
  const int gpu_count = spec.gpu_count();
  key_of_gpu.assign(static_cast<std::size_t>(gpu_count), 0);
  shift_of_gpu.assign(static_cast<std::size_t>(gpu_count), 0);
  exception_offsets.assign(static_cast<std::size_t>(gpu_count) + 1, 0);
  exceptions.clear();
  key_seeds.clear();
  std::map<std::vector<Seed>, std::uint32_t> key_ids;

  // Distinct forwarding in-neighbours of a device other than `excluded`, in link order; stops once
  // there are more than `limit` (a hub is not funnelled: its list is not needed).
  std::vector<int> in_nbrs;
  const auto forwarding_in = [&](int device, int excluded, std::size_t limit) {
    in_nbrs.clear();
    for (const int id : in_of(device)) {
      const int src = links[static_cast<std::size_t>(id)].src;
      if (src != excluded && devices[static_cast<std::size_t>(src)].forwards &&
          std::find(in_nbrs.begin(), in_nbrs.end(), src) == in_nbrs.end()) {
        in_nbrs.push_back(src);
        if (in_nbrs.size() > limit) return;
      }
    }
  };

  struct Item {
    int device;
    int distance;
    int depth;
  };
  std::vector<Item> work;
  std::vector<Seed> seeds;
  std::vector<Exception> local_exceptions;
  std::vector<int> initial;
  for (int t = 0; t < gpu_count; ++t) {
    work.clear();
    seeds.clear();
    local_exceptions.clear();
    forwarding_in(t, -1, std::numeric_limits<std::size_t>::max());
    initial = in_nbrs;
    for (const int u : initial)
      work.push_back(Item{u, 1, 0});
    // best[device] over seeds and exceptions so far: a pushed item that does not improve is dropped.
    const auto known = [&](int device) {
      int best = std::numeric_limits<int>::max();
      for (const Seed& s : seeds)
        if (s.device == device) best = std::min<int>(best, s.offset);
      for (const Exception& e : local_exceptions)
        if (e.device == device) best = std::min<int>(best, e.distance);
      return best;
    };
    for (std::size_t i = 0; i < work.size(); ++i) {
      const Item item = work[i];
      if (item.device == t || known(item.device) <= item.distance) continue;
      if (item.distance + 1 >= k_unreached) throw std::length_error("Cluster: path longer than 65534 hops");
      if (item.depth < k_max_funnel_depth) forwarding_in(item.device, t, k_max_funnel);
      if (item.depth < k_max_funnel_depth && in_nbrs.size() <= k_max_funnel) {
        local_exceptions.push_back(Exception{item.device, static_cast<std::uint16_t>(item.distance)});
        for (const int w : in_nbrs)
          work.push_back(Item{w, item.distance + 1, item.depth + 1});
      } else {
        seeds.push_back(Seed{item.device, static_cast<std::uint16_t>(item.distance)});
      }
    }
    // Normalise: one seed per device (smallest offset), sorted, offsets relative to the smallest.
    std::sort(seeds.begin(), seeds.end());
    seeds.erase(
        std::unique(seeds.begin(), seeds.end(), [](const Seed& a, const Seed& b) { return a.device == b.device; }),
        seeds.end());
    std::uint16_t shift = 0;
    if (!seeds.empty()) {
      shift = std::min_element(seeds.begin(), seeds.end(), [](const Seed& a, const Seed& b) {
                return a.offset < b.offset;
              })->offset;
      for (Seed& s : seeds)
        s.offset = static_cast<std::uint16_t>(s.offset - shift);
    }
    const auto [it, inserted] = key_ids.try_emplace(seeds, static_cast<std::uint32_t>(key_seeds.size()));
    if (inserted) key_seeds.push_back(seeds);
    key_of_gpu[static_cast<std::size_t>(t)] = it->second;
    shift_of_gpu[static_cast<std::size_t>(t)] = shift;
    exceptions.insert(exceptions.end(), local_exceptions.begin(), local_exceptions.end());
    exception_offsets[static_cast<std::size_t>(t) + 1] = static_cast<int>(exceptions.size());
  }
  has_exception.assign(devices.size(), 0);
  for (const Exception& e : exceptions)
    has_exception[static_cast<std::size_t>(e.device)] = 1;
}

// RouteDistances' input: the forwarding in-neighbours of every forwarding device (CSR, forwarding
// indices) and the node owning each.
Cluster::Impl::ForwardingGraph Cluster::Impl::forwarding_graph() const {
  ForwardingGraph g;
  g.in_offsets.reserve(static_cast<std::size_t>(forwarding_count) + 1);
  g.in_offsets.push_back(0);
  g.node_of.reserve(static_cast<std::size_t>(forwarding_count));
  for (std::size_t v = 0; v < devices.size(); ++v) {
    if (forwarding_index[v] < 0) continue;
    for (const int id : in_of(static_cast<int>(v))) {
      const int f = forwarding_index[static_cast<std::size_t>(links[static_cast<std::size_t>(id)].src)];
      if (f >= 0) g.in_sources.push_back(f);
    }
    g.in_offsets.push_back(static_cast<int>(g.in_sources.size()));
    g.node_of.push_back(devices[v].node);
  }
  return g;
}

// Each key's seeds as forwarding indices, and those of them outside the core (after
// route_distances.build).
void Cluster::Impl::build_key_forwarding_seeds() {
  key_forwarding_seeds.assign(key_seeds.size(), {});
  key_component_seeds.assign(key_seeds.size(), {});
  for (std::size_t k = 0; k < key_seeds.size(); ++k) {
    for (const Seed& s : key_seeds[k])
      key_forwarding_seeds[k].push_back(
          RouteDistances::Seed{forwarding_index[static_cast<std::size_t>(s.device)], s.offset});
    route_distances.component_seeds(key_forwarding_seeds[k], key_component_seeds[k]);
  }
}

CoreDistanceBlocks::View Cluster::Impl::distances_of_key(std::uint32_t key) const {
  if (key_distances.has(key)) return key_distances.view(key);
  // Keys are filled k_batch at a time: this one and the next keys not stored (a collective over many
  // GPUs needs most of them).
  std::vector<std::uint32_t> batch{key};
  for (std::uint32_t k = key + 1; k < key_seeds.size() && batch.size() < RouteDistances::k_batch; ++k)
    if (!key_distances.has(k)) batch.push_back(k);
  if (key_distances.bytes() + key_distances.bound_bytes(batch.size()) > k_route_cache_budget_bytes) clear_key_caches();
  std::vector<std::span<const RouteDistances::Seed>> sets;
  if (fill_scratch.size() < batch.size()) fill_scratch.resize(batch.size());
  std::vector<std::vector<std::uint16_t>*> outs;
  for (std::size_t j = 0; j < batch.size(); ++j) {
    sets.emplace_back(key_forwarding_seeds[batch[j]]);
    outs.push_back(&fill_scratch[j]);
  }
  route_distances.fill_batch(sets, outs);
  for (std::size_t j = 0; j < batch.size(); ++j)
    key_distances.store(batch[j], fill_scratch[j]);
  return key_distances.view(key);
}

// Drops every key's distances and what was derived from them (the signatures name stored blocks).
void Cluster::Impl::clear_key_caches() const {
  key_distances.clear();
  for (ClassMasks& c : class_masks)
    c = ClassMasks{};
  for (auto& row : key_signature)
    row.clear();
  head_mask_bytes = 0;
}

// Blocks of core devices (CoreDistanceBlocks): the fabric switches of one (kind, group: pod), and the
// node-owned core devices (a torus's GPUs) of one kind. Switch classes: the core devices with the same
// sorted list of their own block and their core heads' blocks (the head masks' cache, above).
void Cluster::Impl::build_switch_classes() {
  const std::size_t cores = route_distances.core_count();
  std::vector<int> device_of_core(cores, -1);
  for (std::size_t d = 0; d < devices.size(); ++d) {
    const int f = forwarding_index[d];
    if (f >= 0 && route_distances.core_of(f) >= 0)
      device_of_core[static_cast<std::size_t>(route_distances.core_of(f))] = static_cast<int>(d);
  }
  std::map<std::pair<int, int>, std::uint32_t> block_ids;
  std::vector<std::uint32_t> block_of_core(cores, 0);
  for (std::size_t c = 0; c < cores; ++c) {
    const Device& dev = devices[static_cast<std::size_t>(device_of_core[c])];
    const std::pair<int, int> id{static_cast<int>(dev.kind), dev.node < 0 ? dev.group : -2};
    block_of_core[c] = block_ids.try_emplace(id, static_cast<std::uint32_t>(block_ids.size())).first->second;
  }
  key_distances.build(block_of_core, key_seeds.size());
  std::map<std::vector<std::uint32_t>, std::uint32_t> class_ids;
  class_of_core.assign(cores, 0);
  member_of_core.assign(cores, 0);
  class_blocks.clear();
  class_members.clear();
  std::vector<std::uint32_t> blocks;
  for (std::size_t c = 0; c < cores; ++c) {
    const auto d = static_cast<std::size_t>(device_of_core[c]);
    blocks.assign(1, block_of_core[c]);
    for (int k = out_offsets[d]; k < out_offsets[d + 1]; ++k) {
      const int head = out_links[static_cast<std::size_t>(k)].head_core;
      if (head >= 0) blocks.push_back(block_of_core[static_cast<std::size_t>(head)]);
    }
    std::sort(blocks.begin(), blocks.end());
    blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
    const auto [it, inserted] = class_ids.try_emplace(blocks, static_cast<std::uint32_t>(class_blocks.size()));
    if (inserted) {
      class_blocks.push_back(blocks);
      class_members.push_back(0);
    }
    class_of_core[c] = it->second;
    member_of_core[c] = class_members[it->second]++;
  }
  class_masks.assign(class_blocks.size(), ClassMasks{});
  key_signature.assign(key_seeds.size(), {});
  head_mask_bytes = 0;
}

// The out-links of core device `current` (core index `current_core`, at most 64 x mask_words
// out-links) whose head is a core device one hop closer to t's key: their key entry is current's minus 1.
const std::uint64_t* Cluster::Impl::core_head_mask(const Target& t, int current, int current_core,
                                                   std::uint64_t* scratch) const {
  const auto cc = static_cast<std::size_t>(current_core);
  const std::uint32_t cls = class_of_core[cc];
  std::vector<std::uint32_t>& signatures = key_signature[t.key];
  if (signatures.empty()) signatures.assign(class_blocks.size(), k_no_slot);
  ClassMasks& class_cache = class_masks[cls];
  std::uint32_t& signature = signatures[cls];
  if (signature == k_no_slot) {
    std::vector<const std::uint16_t*> values;
    for (const std::uint32_t b : class_blocks[cls])
      values.push_back(t.dist.block(b));
    const auto [it, inserted] =
        class_cache.signatures.try_emplace(std::move(values), static_cast<std::uint32_t>(class_cache.masks.size()));
    if (inserted) {
      const std::size_t members = class_members[cls];
      const std::size_t bytes =
          members * mask_words * sizeof(std::uint64_t) + (members / 64 + 1) * sizeof(std::uint64_t);
      class_cache.masks.emplace_back();
      class_cache.known.emplace_back();
      if (head_mask_bytes + bytes <= k_head_mask_budget_bytes) {
        head_mask_bytes += bytes;
        class_cache.masks.back().assign(members * mask_words, 0);
        class_cache.known.back().assign(members / 64 + 1, 0);
      }
    }
    signature = it->second;
  }
  std::vector<std::uint64_t>& masks = class_cache.masks[signature];
  std::vector<std::uint64_t>& known = class_cache.known[signature];
  const std::size_t m = member_of_core[cc];
  const bool cached = !masks.empty();
  std::uint64_t* mask = cached ? masks.data() + m * mask_words : scratch;
  if (cached && ((known[m / 64] >> (m % 64)) & 1u) != 0) return mask;
  std::fill(mask, mask + mask_words, 0);
  const std::uint16_t here = t.dist[current_core];
  if (here != k_unreached && here > 0) {
    const auto begin = static_cast<std::size_t>(out_offsets[static_cast<std::size_t>(current)]);
    const auto end = static_cast<std::size_t>(out_offsets[static_cast<std::size_t>(current) + 1]);
    for (std::size_t k = begin; k < end; ++k) {
      const int core = out_links[k].head_core;
      if (core >= 0 && t.dist[core] == here - 1) mask[(k - begin) / 64] |= std::uint64_t{1} << ((k - begin) % 64);
    }
  }
  if (cached) known[m / 64] |= std::uint64_t{1} << (m % 64);
  return mask;
}

Cluster::Cluster(ClusterSpec spec) : impl_(std::make_unique<Impl>(std::move(spec))) {}
Cluster::Cluster(Cluster&&) noexcept = default;
Cluster& Cluster::operator=(Cluster&&) noexcept = default;
Cluster::~Cluster() = default;

Cluster Cluster::build(const ClusterSpec& spec) {
  Cluster cluster(spec);
  const NodeLayout nodes = build_nodes(cluster, spec);
  build_fabric(cluster, spec, nodes);
  cluster.finalize();
  return cluster;
}

const ClusterSpec& Cluster::spec() const {
  return impl_->spec;
}
int Cluster::gpu_count() const {
  return impl_->spec.gpu_count();
}
int Cluster::gpus_per_node() const {
  return impl_->spec.node.gpus;
}
bool Cluster::routes_by_load() const {
  // Spraying (EFA's SRD) balances equal flows as adaptive routing does: each transfer takes the least
  // loaded equal-cost link when it starts (a flow model cannot split one flow's packets over paths).
  const std::string routing = impl_->spec.fabric.routing_in_effect();
  return routing == "adaptive" || routing == "spray";
}
int Cluster::node_of_gpu(int gpu) const {
  return gpu / impl_->spec.node.gpus;
}
std::span<const Device> Cluster::devices() const {
  return impl_->devices;
}
std::span<const Link> Cluster::links() const {
  return impl_->links;
}

std::span<const int> Cluster::out_links(int device) const {
  if (device < 0 || static_cast<std::size_t>(device) >= impl_->devices.size())
    throw std::out_of_range("Cluster::out_links: no device " + std::to_string(device));
  if (!impl_->finalized) throw std::logic_error("Cluster::out_links before finalize()");
  return impl_->out_of(device);
}

void Cluster::reserve(std::size_t devices, std::size_t links) {
  impl_->devices.reserve(devices);
  impl_->links.reserve(links);
}

int Cluster::add_device(Device device) {
  if (impl_->finalized) throw std::logic_error("Cluster::add_device after finalize()");
  impl_->devices.push_back(std::move(device));
  return static_cast<int>(impl_->devices.size() - 1);
}

int Cluster::add_link(Link link) {
  if (impl_->finalized) throw std::logic_error("Cluster::add_link after finalize()");
  const auto n = static_cast<int>(impl_->devices.size());
  if (link.src < 0 || link.src >= n || link.dst < 0 || link.dst >= n || link.src == link.dst)
    throw std::out_of_range("Cluster::add_link: bad endpoints " + std::to_string(link.src) + " -> " +
                            std::to_string(link.dst));
  const int id = static_cast<int>(impl_->links.size());
  impl_->links.push_back(link);
  return id;
}

int Cluster::add_duplex_link(int a, int b, double bandwidth_Bps, double latency_s, LinkTechnology tech) {
  const int first = add_link(Link{a, b, bandwidth_Bps, latency_s, tech});
  add_link(Link{b, a, bandwidth_Bps, latency_s, tech});
  return first;
}

void Cluster::set_forwarding(int device, bool forwards) {
  if (impl_->finalized) throw std::logic_error("Cluster::set_forwarding after finalize()");
  if (device < 0 || static_cast<std::size_t>(device) >= impl_->devices.size())
    throw std::out_of_range("Cluster::set_forwarding: no device " + std::to_string(device));
  impl_->devices[static_cast<std::size_t>(device)].forwards = forwards;
}

// The NIC of GPU g is NIC g * nics / gpus of its node (node_builder's rule). NICs are numbered in the
// order (fabric switch they attach to, device index): the NICs under one leaf are consecutive and the
// leaves follow each other as built (pod by pod), so digit 0 of the number is the port on the leaf
// and the next digits name the leaf, as in D-mod-K routing of fat-trees (Zahavi, "D-Mod-K Routing
// Providing Non-Blocking Traffic for Shift Permutations on Real Life Fat Trees", 2010; OpenSM ftree).
void Cluster::Impl::build_destination_numbers() {
  const int gpu_count = spec.gpu_count();
  destination_number.resize(static_cast<std::size_t>(gpu_count));
  for (int g = 0; g < gpu_count; ++g)
    destination_number[static_cast<std::size_t>(g)] = static_cast<std::uint32_t>(g);
  const int gpus = spec.node.gpus;
  const int nics = spec.node.nics;
  if (nics <= 0 || gpus <= 0) return;
  std::vector<int> nic_device(static_cast<std::size_t>(spec.nodes) * static_cast<std::size_t>(nics), -1);
  std::vector<std::pair<int, int>> order;  // (fabric switch, device) per NIC
  for (std::size_t d = 0; d < devices.size(); ++d) {
    if (devices[d].kind != DeviceKind::nic) continue;
    const std::size_t slot = static_cast<std::size_t>(devices[d].node) * static_cast<std::size_t>(nics) +
                             static_cast<std::size_t>(devices[d].local_index);
    if (devices[d].node >= 0 && devices[d].local_index < nics && slot < nic_device.size())
      nic_device[slot] = static_cast<int>(d);
    int attach = std::numeric_limits<int>::max();
    for (int k = out_offsets[d]; k < out_offsets[d + 1]; ++k) {
      const int head = out_links[static_cast<std::size_t>(k)].head;
      if (devices[static_cast<std::size_t>(head)].node < 0) attach = std::min(attach, head);
    }
    order.emplace_back(attach, static_cast<int>(d));
  }
  std::sort(order.begin(), order.end());
  std::vector<std::uint32_t> number_of_device(devices.size(), 0);
  for (std::size_t i = 0; i < order.size(); ++i)
    number_of_device[static_cast<std::size_t>(order[i].second)] = static_cast<std::uint32_t>(i);
  for (int g = 0; g < gpu_count; ++g) {
    const int local_nic = static_cast<int>(static_cast<std::int64_t>(g % gpus) * nics / gpus);
    const int nic = nic_device[static_cast<std::size_t>(g / gpus) * static_cast<std::size_t>(nics) +
                               static_cast<std::size_t>(local_nic)];
    if (nic >= 0) destination_number[static_cast<std::size_t>(g)] = number_of_device[static_cast<std::size_t>(nic)];
  }
}

void Cluster::Impl::build_route_bounds() {
  any_route = owned_route = RouteBound{};
  for (const Link& l : links) {
    const unsigned bit = 1u << static_cast<unsigned>(l.technology);
    any_route.link_latency_s = std::max(any_route.link_latency_s, l.latency_s);
    any_route.technologies |= bit;
    if (devices[static_cast<std::size_t>(l.src)].node >= 0 && devices[static_cast<std::size_t>(l.dst)].node >= 0) {
      owned_route.link_latency_s = std::max(owned_route.link_latency_s, l.latency_s);
      owned_route.technologies |= bit;
    }
  }
  // Hops from the nearest GPU to the nearest fabric switch (forward) and back (over in-links): a route
  // through a fabric switch has at least their sum. A search from every GPU at once, over every link.
  const int gpu_count = spec.gpu_count();
  const auto nearest_fabric = [&](bool forward) {
    std::vector<int> dist(devices.size(), -1), queue;
    for (int g = 0; g < gpu_count; ++g) {
      dist[static_cast<std::size_t>(g)] = 0;
      queue.push_back(g);
    }
    for (std::size_t q = 0; q < queue.size(); ++q) {  // GPUs are never fabric switches
      const int v = queue[q];
      for (const int id : forward ? out_of(v) : in_of(v)) {
        const Link& l = links[static_cast<std::size_t>(id)];
        const int next = forward ? l.dst : l.src;
        if (dist[static_cast<std::size_t>(next)] >= 0) continue;
        dist[static_cast<std::size_t>(next)] = dist[static_cast<std::size_t>(v)] + 1;
        if (devices[static_cast<std::size_t>(next)].node < 0) return dist[static_cast<std::size_t>(next)];
        queue.push_back(next);
      }
    }
    return -1;  // no fabric switch
  };
  const int out = nearest_fabric(true), in = nearest_fabric(false);
  fabric_route_min_hops = out < 0 || in < 0 ? std::numeric_limits<int>::max() : out + in;
}

void Cluster::finalize() {
  Impl& m = *impl_;
  if (m.finalized) return;
  const int gpu_count = m.spec.gpu_count();
  if (static_cast<int>(m.devices.size()) < gpu_count)
    throw std::logic_error("Cluster::finalize: fewer devices than GPUs");
  for (int g = 0; g < gpu_count; ++g) {
    if (m.devices[static_cast<std::size_t>(g)].kind != DeviceKind::gpu)
      throw std::logic_error("Cluster::finalize: device " + std::to_string(g) + " should be a GPU");
  }
  m.build_csr();
  m.forwarding_index.assign(m.devices.size(), -1);
  m.forwarding_count = 0;
  for (std::size_t i = 0; i < m.devices.size(); ++i) {
    if (m.devices[i].forwards) m.forwarding_index[i] = m.forwarding_count++;
  }
  // The fabric's distance structure is built on a second thread while this one checks the graph and
  // derives the destinations' keys: they read the graph only, and neither needs the other.
  const Impl::ForwardingGraph forwarding = m.forwarding_graph();
  auto distances_built = std::async(std::launch::async, [&m, &forwarding] {
    m.route_distances.build(forwarding.in_offsets, forwarding.in_sources, forwarding.node_of);
  });
  m.build_route_bounds();
  m.check_connectivity();

  m.out_links.assign(m.out_ids.size(), Impl::OutLink{-1, -1, -1, -1, -1});
  m.walk_flags.assign(m.devices.size(), 0);
  for (std::size_t d = 0; d < m.devices.size(); ++d)
    m.walk_flags[d] = static_cast<std::uint8_t>((m.devices[d].node < 0 ? Impl::k_fabric_device : 0) |
                                                (m.devices[d].kind == DeviceKind::gpu ? Impl::k_gpu_device : 0));
  std::size_t max_degree = 0;
  for (std::size_t k = 0; k < m.out_ids.size(); ++k) {
    const int head = m.links[static_cast<std::size_t>(m.out_ids[k])].dst;
    m.out_links[k].id = m.out_ids[k];
    m.out_links[k].head = head;
    m.out_links[k].head_forwarding = m.forwarding_index[static_cast<std::size_t>(head)];
  }
  for (std::size_t d = 0; d < m.devices.size(); ++d)
    max_degree = std::max(max_degree, static_cast<std::size_t>(m.out_offsets[d + 1] - m.out_offsets[d]));
  m.walk_choices.reserve(max_degree);
  m.adaptive_routing = routes_by_load();
  m.destination_routing = m.adaptive_routing || m.spec.fabric.routing_in_effect() == "d_mod_k";
  m.build_destination_numbers();
  m.build_route_keys();
  distances_built.get();  // rethrows what the build threw
  m.build_key_forwarding_seeds();
  for (std::size_t k = 0; k < m.out_ids.size(); ++k) {
    const int head = m.out_links[k].head, f = m.out_links[k].head_forwarding;
    if (f < 0) continue;
    m.out_links[k].head_component = m.route_distances.component_of(f);
    if (m.devices[static_cast<std::size_t>(head)].kind == DeviceKind::gpu ||
        m.has_exception[static_cast<std::size_t>(head)])
      continue;
    m.out_links[k].head_core = m.route_distances.core_of(f);
  }
  std::size_t widest_core = 0;  // the most out-links of a core device
  for (std::size_t d = 0; d < m.devices.size(); ++d)
    if (m.forwarding_index[d] >= 0 && m.route_distances.core_of(m.forwarding_index[d]) >= 0)
      widest_core = std::max(widest_core, static_cast<std::size_t>(m.out_offsets[d + 1] - m.out_offsets[d]));
  m.mask_words = std::clamp<std::size_t>((widest_core + k_mask_bits - 1) / k_mask_bits, 1, k_max_mask_words);
  const std::size_t mask_bits = m.mask_words * k_mask_bits;
  m.other_heads.assign(m.devices.size() * m.mask_words, 0);
  m.component_heads.assign(m.devices.size() * m.mask_words, 0);
  m.component_entry_offsets.assign(m.route_distances.component_count() + 1, 0);
  for (std::size_t d = 0; d < m.devices.size(); ++d) {
    const auto begin = static_cast<std::size_t>(m.out_offsets[d]), end = static_cast<std::size_t>(m.out_offsets[d + 1]);
    const bool core_tail = m.forwarding_index[d] >= 0 && m.route_distances.core_of(m.forwarding_index[d]) >= 0;
    for (std::size_t k = begin; k < end; ++k) {
      const int component = m.out_links[k].head_component;
      if (core_tail && component >= 0) ++m.component_entry_offsets[static_cast<std::size_t>(component) + 1];
      if (end - begin > mask_bits || m.out_links[k].head_core >= 0) continue;
      (component >= 0 ? m.component_heads : m.other_heads)[d * m.mask_words + (k - begin) / k_mask_bits] |=
          std::uint64_t{1} << ((k - begin) % k_mask_bits);
    }
  }
  std::partial_sum(m.component_entry_offsets.begin(), m.component_entry_offsets.end(),
                   m.component_entry_offsets.begin());
  m.component_entries.assign(static_cast<std::size_t>(m.component_entry_offsets.back()), {});
  std::vector<int> entry_fill(m.component_entry_offsets.begin(), m.component_entry_offsets.end() - 1);
  for (std::size_t d = 0; d < m.devices.size(); ++d) {
    if (m.forwarding_index[d] < 0 || m.route_distances.core_of(m.forwarding_index[d]) < 0) continue;
    for (int k = m.out_offsets[d]; k < m.out_offsets[d + 1]; ++k) {
      const int component = m.out_links[static_cast<std::size_t>(k)].head_component;
      if (component < 0) continue;
      m.component_entries[static_cast<std::size_t>(entry_fill[static_cast<std::size_t>(component)]++)] = {
          static_cast<int>(d), k};
    }
  }
  m.build_switch_classes();
  m.component_stamp.assign(m.route_distances.component_count(), 0);
  m.finalized = true;
}

void Cluster::route(int src_gpu, int dst_gpu, std::uint64_t flow_id, std::vector<int>& links_out,
                    std::span<const int> link_load, int lane, std::vector<int>* adaptive_choices,
                    bool* flow_hashed) const {
  const Impl& m = *impl_;
  check_route_query(m.finalized, m.spec.gpu_count(), src_gpu, dst_gpu, "Cluster::route");
  if (src_gpu == dst_gpu) return;

  // The cached walk of (src, dst, lane), or the empty slot to record it in.
  if (m.walk_slots.empty()) m.walk_slots.resize(static_cast<std::size_t>(m.spec.gpu_count()) * Impl::k_walk_slots);
  Impl::WalkSlot* const slots = m.walk_slots.data() + static_cast<std::size_t>(src_gpu) * Impl::k_walk_slots;
  const auto dst_plus_one = static_cast<std::uint32_t>(dst_gpu) + 1;
  const Impl::CachedWalk* cached = nullptr;
  Impl::WalkSlot* free_slot = nullptr;
  for (std::size_t i = 0; i < Impl::k_walk_slots; ++i) {
    if (slots[i].dst_plus_one == 0) {
      free_slot = slots + i;
      break;
    }
    if (slots[i].dst_plus_one == dst_plus_one && slots[i].lane == lane) {
      cached = &m.walk_cache[slots[i].walk];
      break;
    }
  }
  if (cached != nullptr) {
    links_out.insert(links_out.end(), m.walk_cache_links.begin() + cached->begin,
                     m.walk_cache_links.begin() + cached->begin + cached->length);
    if (cached->resume_device < 0) return;
  }
  // Recording a walk: the links it has added so far (all its choices were the inputs' until then).
  const std::size_t walk_start = links_out.size();
  bool recording = free_slot != nullptr;
  std::vector<int>& choices = m.walk_choices;
  const auto record = [&](int resume_device, std::uint32_t resume_want, std::uint32_t resume_destination) {
    recording = false;
    if (links_out.size() == walk_start) return;  // a choice at the source: nothing to replay
    Impl::CachedWalk w;
    w.begin = static_cast<std::uint32_t>(m.walk_cache_links.size());
    w.length = static_cast<std::uint32_t>(links_out.size() - walk_start);
    w.resume_device = resume_device;
    w.resume_want = resume_want;
    w.resume_destination = resume_destination;
    m.walk_cache_links.insert(m.walk_cache_links.end(), links_out.begin() + static_cast<std::ptrdiff_t>(walk_start),
                              links_out.end());
    if (resume_device >= 0) {
      if (m.walk_device_choices.empty())
        m.walk_device_choices.assign(m.devices.size(), std::numeric_limits<std::uint32_t>::max());
      std::uint32_t& last = m.walk_device_choices[static_cast<std::size_t>(resume_device)];
      w.choices_length = static_cast<std::uint32_t>(choices.size());
      if (last != std::numeric_limits<std::uint32_t>::max() && last + choices.size() <= m.walk_cache_choices.size() &&
          std::equal(choices.begin(), choices.end(), m.walk_cache_choices.begin() + last)) {
        w.choices_begin = last;
      } else {
        w.choices_begin = last = static_cast<std::uint32_t>(m.walk_cache_choices.size());
        m.walk_cache_choices.insert(m.walk_cache_choices.end(), choices.begin(), choices.end());
      }
    }
    *free_slot = Impl::WalkSlot{dst_plus_one, lane, static_cast<std::uint32_t>(m.walk_cache.size())};
    m.walk_cache.push_back(w);
  };

  const Impl::Target target = m.target(dst_gpu);
  m.mark_own_components(target);
  const std::uint64_t pair_key =
      splitmix64(flow_id ^ splitmix64((static_cast<std::uint64_t>(static_cast<std::uint32_t>(src_gpu)) << 32) |
                                      static_cast<std::uint32_t>(dst_gpu)));
  const auto link_of = [&](int id) -> const Link& { return m.links[static_cast<std::size_t>(id)]; };

  // First hop: the closest heads; among them NVLink first, then other links, a NIC turn last.
  const auto first_hop_rank = [&](int id, std::uint32_t d) {
    const Link& l = link_of(id);
    if (d == 1 && m.devices[static_cast<std::size_t>(l.dst)].kind == DeviceKind::nic) return 2;
    return l.technology == LinkTechnology::nvlink ? 0 : 1;
  };
  std::uint32_t want = k_unreached;
  int best_rank = 3;
  const auto src = static_cast<std::size_t>(src_gpu);
  for (auto k = static_cast<std::size_t>(m.out_offsets[src]);
       cached == nullptr && k < static_cast<std::size_t>(m.out_offsets[src + 1]); ++k) {
    const std::uint32_t d = m.head_distance(target, k);
    if (d > want || d == k_unreached) continue;
    const int rank = first_hop_rank(m.out_links[k].id, d);
    if (d < want || rank < best_rank) {
      want = d;
      best_rank = rank;
    }
  }
  if (cached != nullptr) want = cached->resume_want;
  if (want == k_unreached) throw std::logic_error("Cluster::route: no route (finalize() should have caught it)");

  // Walk: at each device, pick among the out-links whose head is at distance `want`: at a fabric switch
  // under destination routing, the next digit of the destination's number (mixed radix, the digit's
  // base the number of choices), or under adaptive routing the first least loaded link from that
  // digit on; elsewhere uniformly by hash.
  const bool adaptive = m.adaptive_routing && !link_load.empty();
  // 32 bits: destination numbers are below 2^32, and a 32-bit division is the cheaper one per hop.
  std::uint32_t destination =
      cached != nullptr ? cached->resume_destination : m.destination_number[static_cast<std::size_t>(dst_gpu)];
  int current = cached != nullptr ? cached->resume_device : src_gpu;
  while (true) {
    const std::uint32_t hop_want = want, hop_destination = destination;  // the walk's state at this hop
    const auto begin = static_cast<std::size_t>(m.out_offsets[static_cast<std::size_t>(current)]);
    const auto end = static_cast<std::size_t>(m.out_offsets[static_cast<std::size_t>(current) + 1]);
    const bool at_source = current == src_gpu;
    const int current_f = m.forwarding_index[static_cast<std::size_t>(current)];
    const bool skip_here =
        m.route_distances.transits_strict() && current_f >= 0 && m.route_distances.core_of(current_f) >= 0;
    choices.clear();
    const int current_core = current_f >= 0 ? m.route_distances.core_of(current_f) : -1;
    const std::size_t words = m.mask_words;
    if (cached != nullptr && current == cached->resume_device) {  // the cached walk's choices there
      choices.assign(m.walk_cache_choices.begin() + cached->choices_begin,
                     m.walk_cache_choices.begin() + cached->choices_begin + cached->choices_length);
    } else if (current_core >= 0 && !at_source && end - begin <= words * k_mask_bits &&
               (m.walk_flags[static_cast<std::size_t>(current)] & Impl::k_gpu_device) == 0 &&
               !m.has_exception[static_cast<std::size_t>(current)]) {
      // A core device at its key's distance: its core heads one hop closer from the cache, the other
      // heads by their distance; the out-links in CSR order.
      std::array<std::uint64_t, k_max_mask_words> scratch, mask{};  // the core heads' mask, the others'
      const std::uint64_t* core_heads = m.core_head_mask(target, current, current_core, scratch.data());
      const auto consider = [&](std::size_t k) {
        if (m.other_head_distance(target, k) == want)
          mask[(k - begin) / k_mask_bits] |= std::uint64_t{1} << ((k - begin) % k_mask_bits);
      };
      // The links of a device's mask words (`heads`: words words per device), in CSR order.
      const auto each_bit = [&](const std::uint64_t* heads, const auto& fn) {
        for (std::size_t w = 0; w < words; ++w)
          for (std::uint64_t rest = heads[w]; rest != 0; rest &= rest - 1)
            fn(begin + w * k_mask_bits + static_cast<std::size_t>(std::countr_zero(rest)));
      };
      const auto current_index = static_cast<std::size_t>(current);
      each_bit(m.other_heads.data() + current_index * words, consider);
      if (skip_here) {  // heads inside components: only the destination's own can be closer
        for (const int c : m.own_components) {
          const auto c_index = static_cast<std::size_t>(c);
          for (int e = m.component_entry_offsets[c_index]; e < m.component_entry_offsets[c_index + 1]; ++e) {
            const auto& [tail, k] = m.component_entries[static_cast<std::size_t>(e)];
            if (tail == current) consider(static_cast<std::size_t>(k));
          }
        }
      } else {
        each_bit(m.component_heads.data() + current_index * words, consider);
      }
      for (std::size_t w = 0; w < words; ++w)
        mask[w] |= core_heads[w];
      each_bit(mask.data(), [&](std::size_t k) { choices.push_back(static_cast<int>(k)); });
    } else {
      for (std::size_t k = begin; k < end; ++k) {
        if (m.out_links[k].head_core < 0 && skip_here && m.foreign(m.out_links[k].head_component)) continue;
        if (m.head_distance(target, k) != want) continue;
        if (at_source && first_hop_rank(m.out_links[k].id, want) != best_rank) continue;
        choices.push_back(static_cast<int>(k));
      }
    }
    std::size_t pick = 0;
    // A lane picks the NIC: the source GPU's NIC of that rail (GPU g owns NICs g k .. g k + k - 1) when
    // it is among the choices, else the destination GPU's; else, inside a node or where every choice is a
    // NIC of the destination's node, lane mod the choices.
    std::optional<std::size_t> lane_pick;
    if (lane >= 0 && choices.size() > 1) {
      const auto head_of = [&](std::size_t c) -> const Device& {
        return m.devices[static_cast<std::size_t>(m.out_links[static_cast<std::size_t>(choices[c])].head)];
      };
      for (const int gpu : {src_gpu, dst_gpu}) {
        const Device& g = m.devices[static_cast<std::size_t>(gpu)];
        const int own_nic = m.spec.node.nic_of_gpu(g.local_index, lane);
        for (std::size_t c = 0; c < choices.size() && !lane_pick; ++c) {
          const Device& h = head_of(c);
          if (h.kind == DeviceKind::nic && h.node == g.node && h.local_index == own_nic) lane_pick = c;
        }
      }
      bool to_destination_nics = true;
      for (std::size_t c = 0; c < choices.size(); ++c) {
        const Device& h = head_of(c);
        to_destination_nics = to_destination_nics && h.kind == DeviceKind::nic &&
                              h.node == m.devices[static_cast<std::size_t>(dst_gpu)].node;
      }
      if (!lane_pick && (m.devices[static_cast<std::size_t>(current)].node >= 0 || to_destination_nics))
        lane_pick = static_cast<std::size_t>(lane) % choices.size();
    }
    if (choices.size() > 1) {
      if (lane_pick) {
        pick = *lane_pick;
      } else if (m.destination_routing &&
                 (m.walk_flags[static_cast<std::size_t>(current)] & Impl::k_fabric_device) != 0) {
        // Adaptive routing reads the load here (or may, on a later call): the cached walk stops before.
        if (recording && m.adaptive_routing) record(current, hop_want, hop_destination);
        const auto base = static_cast<std::uint32_t>(choices.size());
        pick = destination % base;
        destination /= base;
        if (adaptive) {
          const auto load = [&](std::size_t c) {
            return link_load[static_cast<std::size_t>(m.out_links[static_cast<std::size_t>(choices[c])].id)];
          };
          // From the digit on, wrapping around (no division per step). Loads are counts of transfers
          // (>= 0): once an idle link is found none can be less, so the scan stops there (the same pick;
          // on a fabric with idle uplinks it reads a few of a switch's 64 instead of all).
          const std::size_t digit = pick;
          int least = load(pick);
          for (std::size_t c = digit + 1 == choices.size() ? 0 : digit + 1; c != digit && least > 0;
               c = c + 1 == choices.size() ? 0 : c + 1) {
            const int l = load(c);
            if (l < least) {
              least = l;
              pick = c;
            }
          }
          if (adaptive_choices != nullptr) {
            adaptive_choices->push_back(static_cast<int>(choices.size()));
            adaptive_choices->push_back(static_cast<int>(pick));
            for (const int c : choices)
              adaptive_choices->push_back(m.out_links[static_cast<std::size_t>(c)].id);
          }
        }
      } else {
        if (recording) record(current, hop_want, hop_destination);  // the flow's hash
        if (flow_hashed != nullptr) *flow_hashed = true;
        pick = static_cast<std::size_t>(
            splitmix64(pair_key ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(current))) % choices.size());
      }
    }
    const auto k = static_cast<std::size_t>(choices[pick]);
    links_out.push_back(m.out_links[k].id);
    current = m.out_links[k].head;
    if (current == dst_gpu) {
      if (recording) record(-1, 0, 0);
      return;
    }
    --want;
  }
}

int Cluster::route_hops(int src_gpu, int dst_gpu) const {
  const Impl& m = *impl_;
  check_route_query(m.finalized, m.spec.gpu_count(), src_gpu, dst_gpu, "Cluster::route_hops");
  if (src_gpu == dst_gpu) return 0;
  const Impl::Target target = m.target(dst_gpu);
  m.mark_own_components(target);
  std::uint32_t best = k_unreached;
  const auto src = static_cast<std::size_t>(src_gpu);
  for (auto k = static_cast<std::size_t>(m.out_offsets[src]); k < static_cast<std::size_t>(m.out_offsets[src + 1]); ++k)
    best = std::min(best, m.head_distance(target, k));
  if (best == k_unreached) throw std::logic_error("Cluster::route_hops: no route");
  return static_cast<int>(best) + 1;
}

Cluster::RouteBound Cluster::route_bound(int hops) const {
  return hops < impl_->fabric_route_min_hops ? impl_->owned_route : impl_->any_route;
}

double Cluster::route_latency_s(std::span<const int> route_links) const {
  double total = 0.0;
  for (const int id : route_links)
    total += impl_->links[static_cast<std::size_t>(id)].latency_s;
  return total;
}

}  // namespace clustersim
