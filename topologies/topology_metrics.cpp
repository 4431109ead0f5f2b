// Topology metrics. The rules:
//
// Ports: every directed link is one port of its source device (a duplex cable is then one port at
//   each end), counted by device kind and speed (Gb/s per direction).
// Cables: links between two different nodes' hardware or to fabric switches (InfiniBand, Ethernet,
//   and NVLink that leaves a node: rack-scale NVLink spines, torus links); NVLink and PCIe inside a node
//   are board traces, not cables. A duplex pair of directed links is one cable. Racks: node n is in
//   rack n / fabric.nodes_per_rack (default: the nodes of one NVLink domain); a rack-scale NVSwitch is in
//   its domain's rack; a leaf switch whose node-side neighbours all sit in one rack is that rack's
//   top-of-rack switch; other switches sit in network racks. A cable between two devices of the same
//   rack is copper (DAC), any other is optical, with 2 transceivers.
// Bisection bandwidth (bytes/s, one direction): the builder's closed form when one covers the
//   instance (fat-tree family, dragonfly, torus: see their files); otherwise a max-flow (Boost.Graph
//   push-relabel) from one half of the GPUs to the other: exact minimum over all balanced splits up
//   to k_exact_bisection_gpus GPUs, else the minimum over the node-halves and odd/even-node splits
//   (an upper bound of the true minimum, exact for the symmetric fabrics built here). The method used
//   is reported.
// Hops: route_hops over all ordered GPU pairs up to k_exact_hops_gpus GPUs; above, all sources to
//   k_sampled_destinations destinations spread over the ranks (reported as sampled).
// Oversubscription per tier: for the switches of one kind, the bandwidth of their links down (to NICs
//   or lower tiers) over that of their links up (to higher tiers, or to switches of the same kind in
//   another group: dragonfly global links).
#include "topologies/topology_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iomanip>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <nlohmann/json.hpp>

#include "topologies/fabric_builder.hpp"
#include "topologies/scale_up_generation.hpp"

namespace clustersim {
namespace {

constexpr int k_exact_bisection_gpus = 16;
constexpr int k_exact_hops_gpus = 2048;
constexpr int k_sampled_destinations = 256;
constexpr double k_flow_unit_Bps = 1e6;  // max-flow capacities in MB/s (integers)

double to_Gbps(double Bps) {
  return std::round(Bps * 8.0 / 1e9 * 1000.0) / 1000.0;
}

int tier_of(DeviceKind k) {
  switch (k) {
    case DeviceKind::leaf_switch:
      return 1;
    case DeviceKind::spine_switch:
      return 2;
    case DeviceKind::core_switch:
      return 3;
    default:
      return 0;
  }
}

bool is_fabric_switch(DeviceKind k) {
  return tier_of(k) > 0;
}

// Rack of every device (-1: a network rack).
std::vector<int> device_racks(const Cluster& c) {
  const ClusterSpec& spec = c.spec();
  const int per_rack = std::max(1, spec.nodes_per_rack());
  const auto devices = c.devices();
  std::vector<int> rack(devices.size(), -1);
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const Device& d = devices[i];
    if (d.node >= 0) {
      rack[i] = d.node / per_rack;
    } else if (d.kind == DeviceKind::nvswitch && d.group >= 0) {
      rack[i] = d.group * spec.nodes_per_domain() / per_rack;
    }
  }
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (devices[i].kind != DeviceKind::leaf_switch) continue;
    int only = -2;
    for (const int id : c.out_links(static_cast<int>(i))) {
      const int head = c.links()[static_cast<std::size_t>(id)].dst;
      if (devices[static_cast<std::size_t>(head)].node < 0) continue;
      const int r = rack[static_cast<std::size_t>(head)];
      only = only == -2 ? r : (only == r ? r : -1);
    }
    rack[i] = only >= 0 ? only : -1;
  }
  return rack;
}

bool is_cable(const Cluster& c, const Link& l) {
  if (l.technology == LinkTechnology::infiniband || l.technology == LinkTechnology::ethernet) return true;
  if (l.technology == LinkTechnology::pcie) return false;
  const Device& a = c.devices()[static_cast<std::size_t>(l.src)];
  const Device& b = c.devices()[static_cast<std::size_t>(l.dst)];
  return a.node != b.node || a.node < 0;
}

void count_hardware(const Cluster& c, TopologyMetrics& m) {
  const auto devices = c.devices();
  std::map<DeviceKind, long> kinds;
  for (const Device& d : devices)
    ++kinds[d.kind];
  for (const auto& [kind, n] : kinds)
    m.devices.push_back({to_string(kind), n});
  const ClusterSpec& spec = c.spec();
  if (const ScaleUpGeneration* g = find_scale_up_generation(spec.node.scale_up.generation);
      g != nullptr && spec.node.scale_up.type == "nvswitch" && g->nvswitch_chips_per_gpu > 0) {
    const long domains = spec.nodes / spec.nodes_per_domain();
    const long per_domain = std::lround(std::ceil(spec.domain_gpus() * g->nvswitch_chips_per_gpu - 1e-9));
    m.devices.push_back({"nvswitch_chip", domains * per_domain});
  }

  std::map<std::tuple<DeviceKind, LinkTechnology, double>, long> ports;
  std::map<std::tuple<LinkTechnology, bool, double>, double> cables;  // (tech, optical, Gbps) -> directed links
  const std::vector<int> rack = device_racks(c);
  for (const Link& l : c.links()) {
    const double Gbps = to_Gbps(l.bandwidth_Bps);
    ++ports[{devices[static_cast<std::size_t>(l.src)].kind, l.technology, Gbps}];
    if (!is_cable(c, l)) continue;
    const int ra = rack[static_cast<std::size_t>(l.src)], rb = rack[static_cast<std::size_t>(l.dst)];
    const bool optical = ra < 0 || rb < 0 || ra != rb;
    cables[{l.technology, optical, Gbps}] += 0.5;
  }
  for (const auto& [key, n] : ports)
    m.ports.push_back({to_string(std::get<0>(key)), to_string(std::get<1>(key)), std::get<2>(key), n});
  std::map<double, long> transceivers;
  for (const auto& [key, n] : cables) {
    const auto& [tech, optical, Gbps] = key;
    const long count = static_cast<long>(std::ceil(n));
    m.cables.push_back({to_string(tech), optical ? "optical" : "copper", Gbps, count});
    if (optical) transceivers[Gbps] += 2 * count;
  }
  for (const auto& [Gbps, n] : transceivers)
    m.transceivers.push_back({Gbps, n});
  m.directed_links = static_cast<long>(c.links().size());
  m.racks = (spec.nodes + std::max(1, spec.nodes_per_rack()) - 1) / std::max(1, spec.nodes_per_rack());
}

void measure_hops(const Cluster& c, TopologyMetrics& m) {
  const int n = c.gpu_count();
  std::vector<long> histogram;
  long pairs = 0;
  double total = 0;
  const auto destination = [&](int t) {
    for (int s = 0; s < n; ++s) {
      if (s == t) continue;
      const int h = c.route_hops(s, t);
      if (static_cast<std::size_t>(h) >= histogram.size()) histogram.resize(static_cast<std::size_t>(h) + 1, 0);
      ++histogram[static_cast<std::size_t>(h)];
      ++pairs;
      total += h;
    }
  };
  if (n <= k_exact_hops_gpus) {
    for (int t = 0; t < n; ++t)
      destination(t);
  } else {
    m.hops_sampled = true;
    const int stride = n / k_sampled_destinations + 1;
    for (int i = 0; i < k_sampled_destinations; ++i)
      destination(static_cast<int>(static_cast<std::int64_t>(i) * stride % n));
  }
  m.hop_histogram = histogram;
  m.pairs_measured = pairs;
  m.diameter_hops = histogram.empty() ? 0 : static_cast<int>(histogram.size()) - 1;
  m.average_hops = pairs > 0 ? total / static_cast<double>(pairs) : 0.0;
}

void measure_oversubscription(const Cluster& c, TopologyMetrics& m) {
  const auto devices = c.devices();
  std::map<int, std::pair<double, double>> by_tier;  // tier -> (down, up)
  for (const Link& l : c.links()) {
    const Device& a = devices[static_cast<std::size_t>(l.src)];
    const Device& b = devices[static_cast<std::size_t>(l.dst)];
    if (!is_fabric_switch(a.kind)) continue;
    const int ta = tier_of(a.kind), tb = tier_of(b.kind);
    if (tb < ta)
      by_tier[ta].first += l.bandwidth_Bps;
    else if (tb > ta || (tb == ta && a.group >= 0 && b.group >= 0 && a.group != b.group))
      by_tier[ta].second += l.bandwidth_Bps;
  }
  for (const auto& [tier, bw] : by_tier) {
    if (bw.second <= 0 || bw.first <= 0) continue;
    const DeviceKind kind = tier == 1   ? DeviceKind::leaf_switch
                            : tier == 2 ? DeviceKind::spine_switch
                                        : DeviceKind::core_switch;
    m.oversubscription.push_back({to_string(kind), bw.first, bw.second, bw.first / bw.second});
  }
}

// Exact minimum over balanced splits (GPU 0 always in A, so each split is counted once).
double exact_bisection_Bps(const Cluster& c) {
  const int n = c.gpu_count();
  const int half = n / 2;
  double best = std::numeric_limits<double>::infinity();
  std::vector<int> side;
  const auto visit = [&](auto&& self, int next) -> void {
    if (static_cast<int>(side.size()) == half) {
      best = std::min(best, max_flow_Bps(c, side));
      return;
    }
    for (int g = next; g < n && n - g >= half - static_cast<int>(side.size()); ++g) {
      side.push_back(g);
      self(self, g + 1);
      side.pop_back();
      if (side.empty()) return;  // GPU 0 stays in A
    }
  };
  visit(visit, 0);
  return best;
}

void measure_bisection(const Cluster& c, TopologyMetrics& m) {
  const ClusterSpec& spec = c.spec();
  const int n = c.gpu_count();
  if (n <= 1) {
    m.bisection_Bps = 0;
    m.bisection_method = "none (one GPU)";
    return;
  }
  if (const FabricBuilder* b = find_fabric_builder(spec.fabric.type); b != nullptr && b->bisection != nullptr) {
    if (const auto v = b->bisection(c)) {
      m.bisection_Bps = *v;
      m.bisection_method = "closed form (" + spec.fabric.type + ")";
      return;
    }
  }
  if (n <= k_exact_bisection_gpus) {
    m.bisection_Bps = exact_bisection_Bps(c);
    m.bisection_method = "max-flow, minimum over all balanced GPU splits (exact)";
    return;
  }
  std::vector<int> halves, alternate;
  const int per_node = spec.node.gpus;
  for (int g = 0; g < n; ++g) {
    if (g < n / 2) halves.push_back(g);
    if ((g / per_node) % 2 == 0) alternate.push_back(g);
  }
  m.bisection_Bps = max_flow_Bps(c, halves);
  if (spec.nodes % 2 == 0 && spec.nodes > 2) m.bisection_Bps = std::min(m.bisection_Bps, max_flow_Bps(c, alternate));
  m.bisection_method = "max-flow, minimum over the node-halves and odd/even-node splits (upper bound)";
}

std::string format_Bps(double Bps) {
  std::ostringstream os;
  os << std::setprecision(4);
  if (Bps >= 1e12)
    os << Bps / 1e12 << " TB/s";
  else if (Bps >= 1e9)
    os << Bps / 1e9 << " GB/s";
  else
    os << Bps / 1e6 << " MB/s";
  return os.str();
}

std::string format_number(double x) {
  std::ostringstream os;
  os << std::setprecision(6) << x;
  return os.str();
}

bool is_number(const std::string& s) {
  if (s.empty()) return false;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end != nullptr && *end == '\0';
}

// A text table: a header row and rows, columns padded to their widest cell; columns of numbers are
// right-aligned.
std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(header.size(), 0);
  std::vector<bool> numeric(header.size(), true);
  for (std::size_t i = 0; i < header.size(); ++i)
    width[i] = header[i].size();
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < r.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], r[i].size());
      numeric[i] = numeric[i] && is_number(r[i]);
    }
  }
  std::ostringstream os;
  const auto line = [&](const std::vector<std::string>& cells) {
    os << " ";
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const bool last = i + 1 == cells.size();
      os << "  " << (numeric[i] ? std::right : std::left)
         << std::setw(last && !numeric[i] ? 0 : static_cast<int>(width[i])) << cells[i];
    }
    os << "\n";
  };
  line(header);
  for (const auto& r : rows)
    line(r);
  return os.str();
}

}  // namespace

double max_flow_Bps(const Cluster& c, std::span<const int> side_a) {
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using Graph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, std::int64_t,
                      boost::property<boost::edge_residual_capacity_t, std::int64_t,
                                      boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
  const auto devices = c.devices();
  const std::size_t n = devices.size();
  const int gpus = c.gpu_count();
  std::vector<char> in_a(static_cast<std::size_t>(gpus), 0);
  for (const int g : side_a)
    in_a[static_cast<std::size_t>(g)] = 1;
  Graph graph(n + 2);
  const std::size_t source = n, sink = n + 1;
  auto capacity = boost::get(boost::edge_capacity, graph);
  auto reverse = boost::get(boost::edge_reverse, graph);
  const auto add = [&](std::size_t u, std::size_t v, std::int64_t cap) {
    const auto e = boost::add_edge(u, v, graph).first;
    const auto r = boost::add_edge(v, u, graph).first;
    capacity[e] = cap;
    capacity[r] = 0;
    reverse[e] = r;
    reverse[r] = e;
  };
  constexpr std::int64_t k_infinite = std::int64_t{1} << 50;
  for (const Link& l : c.links()) {
    const bool src_gpu = l.src < gpus, dst_gpu = l.dst < gpus;
    const Device& a = devices[static_cast<std::size_t>(l.src)];
    const Device& b = devices[static_cast<std::size_t>(l.dst)];
    // A GPU that does not forward only sends (in A) or only receives (outside A).
    if (src_gpu && !a.forwards && !in_a[static_cast<std::size_t>(l.src)]) continue;
    if (dst_gpu && !b.forwards && in_a[static_cast<std::size_t>(l.dst)]) continue;
    add(static_cast<std::size_t>(l.src), static_cast<std::size_t>(l.dst),
        static_cast<std::int64_t>(std::llround(l.bandwidth_Bps / k_flow_unit_Bps)));
  }
  for (int g = 0; g < gpus; ++g) {
    if (in_a[static_cast<std::size_t>(g)])
      add(source, static_cast<std::size_t>(g), k_infinite);
    else
      add(static_cast<std::size_t>(g), sink, k_infinite);
  }
  const std::int64_t flow = boost::push_relabel_max_flow(graph, source, sink);
  return static_cast<double>(flow) * k_flow_unit_Bps;
}

TopologyMetrics compute_metrics(const Cluster& cluster) {
  TopologyMetrics m = hardware_metrics(cluster);
  measure_hops(cluster, m);
  measure_oversubscription(cluster, m);
  measure_bisection(cluster, m);
  return m;
}

TopologyMetrics hardware_metrics(const Cluster& cluster) {
  const ClusterSpec& spec = cluster.spec();
  TopologyMetrics m;
  m.name = spec.name;
  m.fabric = spec.fabric.type;
  if (spec.fabric.type == "fat_tree" || spec.fabric.type == "rail_optimized")
    m.fabric += std::string(spec.fabric.rail_optimized && spec.fabric.type == "fat_tree" ? ", rail-optimized" : "") +
                ", " + std::to_string(spec.fabric.tiers) + " tiers";
  if (spec.fabric.type == "torus") {
    std::string dims;
    for (const int a : spec.fabric.dims)
      dims += (dims.empty() ? "" : " x ") + std::to_string(a);
    m.fabric += " " + dims;
  }
  if (spec.fabric.type == "dragonfly")
    m.fabric += ", " + std::to_string(spec.fabric.groups) + " groups of " +
                std::to_string(spec.fabric.routers_per_group) + " routers";
  if (spec.fabric.planes > 1) m.fabric += ", " + std::to_string(spec.fabric.planes) + " planes";
  m.nodes = spec.nodes;
  m.gpus = cluster.gpu_count();
  count_hardware(cluster, m);
  return m;
}

// The rows of metrics_to_json's arrays (found by nlohmann::json through argument-dependent lookup).
static void to_json(nlohmann::ordered_json& j, const DeviceCount& d) {
  j = {{"kind", d.kind}, {"count", d.count}};
}

static void to_json(nlohmann::ordered_json& j, const PortCount& p) {
  j = {{"device_kind", p.device_kind}, {"technology", p.technology}, {"speed_Gbps", p.speed_Gbps}, {"count", p.count}};
}

static void to_json(nlohmann::ordered_json& j, const CableCount& c) {
  j = {{"technology", c.technology}, {"medium", c.medium}, {"speed_Gbps", c.speed_Gbps}, {"count", c.count}};
}

static void to_json(nlohmann::ordered_json& j, const TransceiverCount& t) {
  j = {{"speed_Gbps", t.speed_Gbps}, {"count", t.count}};
}

static void to_json(nlohmann::ordered_json& j, const TierOversubscription& o) {
  j = {{"tier", o.tier}, {"downlink_Bps", o.downlink_Bps}, {"uplink_Bps", o.uplink_Bps}, {"ratio", o.ratio}};
}

std::string metrics_to_json(const TopologyMetrics& m) {
  nlohmann::ordered_json j;
  j["name"] = m.name;
  j["fabric"] = m.fabric;
  j["nodes"] = m.nodes;
  j["gpus"] = m.gpus;
  j["racks"] = m.racks;
  j["directed_links"] = m.directed_links;
  j["devices"] = m.devices;
  j["ports"] = m.ports;
  j["cables"] = m.cables;
  j["transceivers"] = m.transceivers;
  j["bisection_Bps"] = m.bisection_Bps;
  j["bisection_method"] = m.bisection_method;
  j["diameter_hops"] = m.diameter_hops;
  j["average_hops"] = m.average_hops;
  j["hop_histogram"] = m.hop_histogram;
  j["pairs_measured"] = m.pairs_measured;
  j["hops_sampled"] = m.hops_sampled;
  j["oversubscription"] = m.oversubscription;
  return j.dump(2);
}

std::string metrics_to_text(const TopologyMetrics& m) {
  std::ostringstream os;
  os << (m.name.empty() ? "cluster" : m.name) << ": " << m.nodes << (m.nodes == 1 ? " node, " : " nodes, ") << m.gpus
     << " GPUs, racks: " << m.racks << ", fabric: " << m.fabric << "\n\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& d : m.devices)
    rows.push_back({d.kind, std::to_string(d.count)});
  os << table({"device", "count"}, rows) << "\n";
  rows.clear();
  for (const auto& p : m.ports)
    rows.push_back({p.device_kind, p.technology, format_number(p.speed_Gbps), std::to_string(p.count)});
  os << table({"ports of", "link", "Gb/s", "count"}, rows) << "\n";
  if (!m.cables.empty()) {
    rows.clear();
    for (const auto& c : m.cables)
      rows.push_back({c.technology + " cable", c.medium, format_number(c.speed_Gbps), std::to_string(c.count)});
    for (const auto& t : m.transceivers)
      rows.push_back({"transceiver", "optical", format_number(t.speed_Gbps), std::to_string(t.count)});
    os << table({"cabling", "medium", "Gb/s", "count"}, rows) << "\n";
  }
  rows.clear();
  rows.push_back({"bisection", format_Bps(m.bisection_Bps) + ", " + m.bisection_method});
  rows.push_back({"diameter", std::to_string(m.diameter_hops) + " hops"});
  std::ostringstream avg;
  avg << std::setprecision(4) << m.average_hops << " hops over " << m.pairs_measured << " GPU pairs"
      << (m.hops_sampled ? " (all sources, sampled destinations)" : "");
  rows.push_back({"average route", avg.str()});
  std::string histogram;
  for (std::size_t h = 0; h < m.hop_histogram.size(); ++h) {
    if (m.hop_histogram[h] > 0)
      histogram += (histogram.empty() ? "" : ", ") + std::to_string(m.hop_histogram[h]) + " x " + std::to_string(h);
  }
  rows.push_back({"route lengths", histogram.empty() ? "-" : "pairs x hops: " + histogram});
  for (const auto& o : m.oversubscription) {
    std::ostringstream r;
    r << o.tier << " " << std::setprecision(4) << o.ratio << ":1 (" << format_Bps(o.downlink_Bps) << " down, "
      << format_Bps(o.uplink_Bps) << " up)";
    rows.push_back({"oversubscription", r.str()});
  }
  os << table({"metric", "value"}, rows);
  return os.str();
}

}  // namespace clustersim
