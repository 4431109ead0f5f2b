// The cluster graph: storage, construction API, connectivity check (Boost.Graph) and ECMP routing.
//
// Routing. A route from GPU s to GPU t is a shortest path in hop count whose intermediate devices all
// forward (switches and NICs; GPUs never do). Per destination t, a reverse BFS from t over the
// forwarding devices gives dist_t(v) for every forwarding v (uint16, computed lazily, cached). A route
// is then a greedy walk from s: at each device, among the out-links whose head is one hop closer to t,
// pick one by a 64-bit hash (splitmix64) of (s, t, flow_id, current device): flows spread evenly and
// independently at every hop, and the same flow always takes the same path. Two refinements:
//   - a route never turns around at a NIC (GPU -> NIC -> GPU between GPUs sharing a NIC): such a hop
//     is skipped at the source in favour of the scale-up domain, which is always as short;
//   - distance arrays only cover forwarding devices (the destination is recognised by index), which
//     halves the cache, and the cache is bounded (k_route_cache_budget_bytes), evicting round-robin.
#include "topologies/cluster.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/strong_components.hpp>

#include "sim/core/error.hpp"
#include "topologies/fabric_builder.hpp"
#include "topologies/node_builder.hpp"

namespace clustersim {
namespace {

constexpr std::uint16_t k_unreached = std::numeric_limits<std::uint16_t>::max();
constexpr std::size_t k_route_cache_budget_bytes = std::size_t{256} << 20;
constexpr std::uint32_t k_no_slot = std::numeric_limits<std::uint32_t>::max();

constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

using BoostGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

}  // namespace

const char* to_string(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::gpu:
      return "gpu";
    case DeviceKind::nvswitch:
      return "nvswitch";
    case DeviceKind::nic:
      return "nic";
    case DeviceKind::pcie_switch:
      return "pcie_switch";
    case DeviceKind::leaf_switch:
      return "leaf_switch";
    case DeviceKind::spine_switch:
      return "spine_switch";
    case DeviceKind::core_switch:
      return "core_switch";
  }
  return "unknown";
}

const char* to_string(LinkTechnology tech) {
  switch (tech) {
    case LinkTechnology::nvlink:
      return "nvlink";
    case LinkTechnology::pcie:
      return "pcie";
    case LinkTechnology::infiniband:
      return "infiniband";
    case LinkTechnology::ethernet:
      return "ethernet";
  }
  return "unknown";
}

struct Cluster::Impl {
  ClusterSpec spec;
  std::vector<Device> devices;
  std::vector<Link> links;
  bool finalized = false;

  // Adjacency. While building: per-device lists; after finalize(): CSR (offsets into link ids).
  std::vector<std::vector<int>> building_out;
  std::vector<int> out_offsets, out_ids;
  std::vector<int> in_offsets, in_ids;

  // Routing: dense index of each forwarding device (-1 for the others), and the distance cache.
  std::vector<int> forwarding_index;
  int forwarding_count = 0;
  mutable std::vector<std::uint32_t> slot_of_gpu;         // cache slot of each destination GPU
  mutable std::vector<std::vector<std::uint16_t>> slots;  // distance arrays over forwarding devices
  mutable std::vector<int> slot_owner;                    // destination GPU of each slot
  mutable std::size_t max_slots = 0;
  mutable std::size_t next_victim = 0;
  mutable std::vector<int> bfs_queue;

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
  const std::uint16_t* distances_to(int dst_gpu) const;
  void fill_distances(int dst_gpu, std::vector<std::uint16_t>& dist) const;
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
  building_out.clear();
  building_out.shrink_to_fit();
}

// Every GPU must reach every other GPU through forwarding devices only.
// Fast sufficient test: the forwarding devices' subgraph has one strongly connected component K
// (Boost.Graph strong_components) that every GPU can enter and leave in one hop. Otherwise an exact
// check: a BFS from each GPU over a graph where each GPU is split into a source copy (its out-links)
// and a sink copy (its in-links), so that no path passes through a GPU.
void Cluster::Impl::check_connectivity() const {
  const int gpu_count = spec.gpu_count();
  if (gpu_count <= 1) return;
  const auto n = devices.size();

  BoostGraph forwarding(n);
  for (const Link& l : links) {
    if (devices[static_cast<std::size_t>(l.src)].forwards && devices[static_cast<std::size_t>(l.dst)].forwards)
      boost::add_edge(static_cast<std::size_t>(l.src), static_cast<std::size_t>(l.dst), forwarding);
  }
  std::vector<int> component(n);
  boost::strong_components(
      forwarding, boost::make_iterator_property_map(component.begin(), boost::get(boost::vertex_index, forwarding)));
  std::vector<int> candidates;
  for (const int id : out_of(0)) {
    const int head = links[static_cast<std::size_t>(id)].dst;
    if (devices[static_cast<std::size_t>(head)].forwards)
      candidates.push_back(component[static_cast<std::size_t>(head)]);
  }
  for (const int k : candidates) {
    bool all = true;
    for (int g = 0; g < gpu_count && all; ++g) {
      const auto touches = [&](std::span<const int> ids, bool head) {
        for (const int id : ids) {
          const Link& l = links[static_cast<std::size_t>(id)];
          const int other = head ? l.dst : l.src;
          if (devices[static_cast<std::size_t>(other)].forwards && component[static_cast<std::size_t>(other)] == k)
            return true;
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

void Cluster::Impl::fill_distances(int dst_gpu, std::vector<std::uint16_t>& dist) const {
  std::fill(dist.begin(), dist.end(), k_unreached);
  bfs_queue.clear();
  const auto relax = [&](int device, std::uint16_t d) {
    const int f = forwarding_index[static_cast<std::size_t>(device)];
    if (f < 0 || dist[static_cast<std::size_t>(f)] != k_unreached) return;
    dist[static_cast<std::size_t>(f)] = d;
    bfs_queue.push_back(device);
  };
  for (const int id : in_of(dst_gpu))
    relax(links[static_cast<std::size_t>(id)].src, 1);
  for (std::size_t head = 0; head < bfs_queue.size(); ++head) {
    const int v = bfs_queue[head];
    const std::uint16_t dv = dist[static_cast<std::size_t>(forwarding_index[static_cast<std::size_t>(v)])];
    if (dv + 1 >= k_unreached) throw std::length_error("Cluster::route: path longer than 65534 hops");
    for (const int id : in_of(v))
      relax(links[static_cast<std::size_t>(id)].src, static_cast<std::uint16_t>(dv + 1));
  }
}

const std::uint16_t* Cluster::Impl::distances_to(int dst_gpu) const {
  std::uint32_t& slot = slot_of_gpu[static_cast<std::size_t>(dst_gpu)];
  if (slot != k_no_slot) return slots[slot].data();
  if (slots.size() < max_slots) {
    slot = static_cast<std::uint32_t>(slots.size());
    slots.emplace_back(static_cast<std::size_t>(forwarding_count));
    slot_owner.push_back(dst_gpu);
  } else {  // evict round-robin
    const std::size_t victim = next_victim;
    next_victim = (next_victim + 1) % max_slots;
    slot_of_gpu[static_cast<std::size_t>(slot_owner[victim])] = k_no_slot;
    slot_owner[victim] = dst_gpu;
    slot = static_cast<std::uint32_t>(victim);
  }
  fill_distances(dst_gpu, slots[slot]);
  return slots[slot].data();
}

Cluster::Cluster(ClusterSpec spec) : impl_(std::make_unique<Impl>(std::move(spec))) {}
Cluster::Cluster(Cluster&&) noexcept = default;
Cluster& Cluster::operator=(Cluster&&) noexcept = default;
Cluster::~Cluster() = default;

Cluster Cluster::build(const ClusterSpec& spec) {
  const FabricBuilder* fabric = find_fabric_builder(spec.fabric.type);
  if (fabric == nullptr) {
    std::string known;
    for (const auto& t : fabric_types())
      known += (known.empty() ? "" : ", ") + t;
    throw SpecError(spec.source_file, "/fabric/type",
                    "fabric type \"" + spec.fabric.type + "\" is not supported (supported: " + known + ")");
  }
  Cluster cluster(spec);
  const NodeLayout nodes = build_nodes(cluster, spec);
  fabric->build(cluster, spec, nodes);
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
  if (!impl_->finalized) return impl_->building_out[static_cast<std::size_t>(device)];
  return impl_->out_of(device);
}

int Cluster::add_device(Device device) {
  if (impl_->finalized) throw std::logic_error("Cluster::add_device after finalize()");
  impl_->devices.push_back(std::move(device));
  impl_->building_out.emplace_back();
  return static_cast<int>(impl_->devices.size() - 1);
}

int Cluster::add_link(Link link) {
  if (impl_->finalized) throw std::logic_error("Cluster::add_link after finalize()");
  const auto n = static_cast<int>(impl_->devices.size());
  if (link.src < 0 || link.src >= n || link.dst < 0 || link.dst >= n || link.src == link.dst)
    throw std::out_of_range("Cluster::add_link: bad endpoints " + std::to_string(link.src) + " -> " +
                            std::to_string(link.dst));
  const int id = static_cast<int>(impl_->links.size());
  impl_->building_out[static_cast<std::size_t>(link.src)].push_back(id);
  impl_->links.push_back(link);
  return id;
}

int Cluster::add_duplex_link(int a, int b, double bandwidth_Bps, double latency_s, LinkTechnology tech) {
  const int first = add_link(Link{a, b, bandwidth_Bps, latency_s, tech});
  add_link(Link{b, a, bandwidth_Bps, latency_s, tech});
  return first;
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
  m.check_connectivity();

  m.forwarding_index.assign(m.devices.size(), -1);
  m.forwarding_count = 0;
  for (std::size_t i = 0; i < m.devices.size(); ++i) {
    if (m.devices[i].forwards) m.forwarding_index[i] = m.forwarding_count++;
  }
  m.slot_of_gpu.assign(static_cast<std::size_t>(gpu_count), k_no_slot);
  const std::size_t bytes_per_slot = std::max<std::size_t>(1, static_cast<std::size_t>(m.forwarding_count) * 2);
  m.max_slots = std::clamp<std::size_t>(k_route_cache_budget_bytes / bytes_per_slot, 1,
                                        static_cast<std::size_t>(std::max(gpu_count, 1)));
  m.bfs_queue.reserve(static_cast<std::size_t>(m.forwarding_count));
  m.finalized = true;
}

void Cluster::route(int src_gpu, int dst_gpu, std::uint64_t flow_id, std::vector<int>& links_out) const {
  const Impl& m = *impl_;
  const int gpu_count = m.spec.gpu_count();
  if (!m.finalized) throw std::logic_error("Cluster::route before finalize()");
  if (src_gpu < 0 || src_gpu >= gpu_count || dst_gpu < 0 || dst_gpu >= gpu_count)
    throw std::out_of_range("Cluster::route: GPU " + std::to_string(src_gpu) + " -> " + std::to_string(dst_gpu) +
                            " outside 0.." + std::to_string(gpu_count - 1));
  if (src_gpu == dst_gpu) return;

  const std::uint16_t* dist = m.distances_to(dst_gpu);
  const auto dist_of = [&](int device) -> std::uint32_t {
    if (device == dst_gpu) return 0;
    const int f = m.forwarding_index[static_cast<std::size_t>(device)];
    return f < 0 ? k_unreached : dist[f];
  };
  const std::uint64_t pair_key =
      splitmix64(flow_id ^ splitmix64((static_cast<std::uint64_t>(static_cast<std::uint32_t>(src_gpu)) << 32) |
                                      static_cast<std::uint32_t>(dst_gpu)));

  // First hop from the (non-forwarding) source: the closest heads, without turning around at a NIC.
  int current = src_gpu;
  std::uint32_t want = k_unreached;
  bool skip_nic_turn = false;
  {
    std::uint32_t best = k_unreached, best_no_turn = k_unreached;
    for (const int id : m.out_of(src_gpu)) {
      const int head = m.links[static_cast<std::size_t>(id)].dst;
      const std::uint32_t d = dist_of(head);
      best = std::min(best, d);
      const bool turn = d == 1 && m.devices[static_cast<std::size_t>(head)].kind == DeviceKind::nic;
      if (!turn) best_no_turn = std::min(best_no_turn, d);
    }
    if (best == k_unreached) throw std::logic_error("Cluster::route: no route (finalize() should have caught it)");
    skip_nic_turn = best_no_turn == best;
    want = best;
  }
  // Walk: at each device, pick uniformly (by hash) among the out-links whose head is at distance `want`.
  while (true) {
    const std::span<const int> out = m.out_of(current);
    const bool at_source = current == src_gpu;
    const auto eligible = [&](int id) {
      const int head = m.links[static_cast<std::size_t>(id)].dst;
      if (dist_of(head) != want) return false;
      return !(at_source && skip_nic_turn && want == 1 &&
               m.devices[static_cast<std::size_t>(head)].kind == DeviceKind::nic);
    };
    std::uint32_t count = 0;
    for (const int id : out)
      count += eligible(id) ? 1U : 0U;
    const std::uint64_t h = splitmix64(pair_key ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(current)));
    std::uint64_t pick = h % count;
    int chosen = -1;
    for (const int id : out) {
      if (!eligible(id)) continue;
      if (pick-- == 0) {
        chosen = id;
        break;
      }
    }
    links_out.push_back(chosen);
    current = m.links[static_cast<std::size_t>(chosen)].dst;
    if (current == dst_gpu) return;
    --want;
  }
}

double Cluster::route_latency_s(std::span<const int> route_links) const {
  double total = 0.0;
  for (const int id : route_links)
    total += impl_->links[static_cast<std::size_t>(id)].latency_s;
  return total;
}

}  // namespace clustersim
