// Fat-trees (folded Clos) of 2 or 3 tiers.
//
// Leaf tier, for leaf radix k and oversubscription r (downlink:uplink bandwidth at the leaf tier):
//   u = floor(k / (1 + r))        uplinks per leaf
//   d = floor(r * u)              downlinks per leaf (NIC ports); d / u == r whenever r * u is integral
//   k - d - u ports stay unused   (k = 64: r = 1 -> 32/32; r = 2 -> 42/21, one spare; r = 3 -> 48/16)
// So a leaf's uplink bandwidth is exactly 1/r of its downlink bandwidth, and for a given NIC count a
// 2:1 fabric has half the leaf-uplink bandwidth of a 1:1 fabric (when r * u is integral and the leaves
// are full: 24 NICs at k = 12 give 4 leaves x 6 uplinks at 1:1 and 3 leaves x 4 uplinks at 2:1).
//   NICs = nodes * nics. Leaves: rail_optimized: every rail (NIC index j) has its own leaves, each
//   holding NIC j of d consecutive nodes; otherwise NICs fill leaves in (node, nic) order,
//   L = ceil(NICs / d).
//
// Two tiers: S spines (S = u, or fabric.spines for spine_leaf, a divisor of u); every leaf has u / S
//   parallel links to every spine (none for a single leaf). A spine then uses L * u / S of its
//   ports (spine radix = fabric.spine_radix, or k): at radix k, 1:1, at most k^2 / 2 NICs (2048 NICs =
//   256 DGX nodes at k = 64). Rail-optimized leaves are numbered rail-major: NIC j of node n on leaf
//   j * ceil(nodes / d) + n / d.
// Three tiers (pods, as in Al-Fares et al., SIGCOMM 2008, generalised to any size and to r >= 1):
//   E = floor(k / 2) leaves per pod (rail-optimized: the largest multiple of nics <= k / 2, so that a pod
//   holds every rail of whole groups of d nodes; leaves are then numbered group-major, NIC j of node n
//   on leaf (n / d) * nics + j); P = ceil(L / E) pods, P <= k. Each pod has u aggregation switches
//   (kind spine_switch), every leaf of the pod linked once to each; an aggregation switch has A = E
//   uplinks (1:1 at that tier). Aggregation switch j of every pod joins core group j: C = A / m cores,
//   each linked to it by m parallel links, m the largest divisor of A with P * m <= k (core radix).
//   Cores: u * C. For the full k-ary fat-tree (r = 1, k^3 / 4 NICs): d = u = E = A = k / 2, P = k,
//   m = 1, C = k / 2: k^2 / 2 leaves, k^2 / 2 aggregation switches, k^2 / 4 cores = 5k^2 / 4 switches.
// Every fabric link runs at the NIC port rate (nic_bandwidth_Gbps * 1e9 / 8 / planes B/s per
// direction), latency link_latency_us per link, technology fabric.technology.
#include "topologies/fat_tree_builder.hpp"

#include <cmath>
#include <sstream>
#include <string_view>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

namespace clustersim {
namespace {

constexpr int k_max_radix_search = 1 << 16;

std::string format_ratio(double r) {
  std::ostringstream os;
  os << r;
  return os.str();
}

bool is_rail_optimized(const ClusterSpec& spec) {
  return spec.fabric.rail_optimized || spec.fabric.type == "rail_optimized";
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// Leaf tier: d and u at radix k, and the leaf count. False when k has no uplink or downlink.
bool leaf_tier(const ClusterSpec& spec, int k, FatTreeShape& s) {
  const double r = spec.fabric.oversubscription;
  s.uplinks_per_leaf = static_cast<int>(std::floor(k / (1.0 + r) + 1e-9));
  s.downlinks_per_leaf = static_cast<int>(std::floor(r * s.uplinks_per_leaf + 1e-9));
  if (s.uplinks_per_leaf < 1 || s.downlinks_per_leaf < 1) return false;
  const std::int64_t d = s.downlinks_per_leaf;
  const std::int64_t nodes = spec.nodes;
  const std::int64_t nics = spec.node.nics;
  std::int64_t leaves = 0;
  if (s.rails) {
    s.leaves_per_rail = static_cast<int>(ceil_div(nodes, d));
    leaves = nics * s.leaves_per_rail;
  } else {
    leaves = ceil_div(nodes * nics, d);
  }
  if (leaves > std::numeric_limits<int>::max() / 2) return false;
  s.leaves = static_cast<int>(leaves);
  return true;
}

// The shape at leaf radix k, or nothing when k cannot hold it. Spine-count errors throw.
std::optional<FatTreeShape> shape_at_radix(const ClusterSpec& spec, int k) {
  FatTreeShape s;
  s.tiers = spec.fabric.tiers;
  s.rails = is_rail_optimized(spec);
  if (!leaf_tier(spec, k, s)) return std::nullopt;
  if (s.tiers == 2) {
    const int spines = spec.fabric.spines > 0 ? spec.fabric.spines : s.uplinks_per_leaf;
    if (s.uplinks_per_leaf % spines != 0) return std::nullopt;
    s.links_per_leaf_spine = s.uplinks_per_leaf / spines;
    if (s.leaves <= 1) {
      s.spines = 0;
      return s;
    }
    const int spine_radix = spec.fabric.spine_radix > 0 ? spec.fabric.spine_radix : k;
    if (static_cast<std::int64_t>(s.leaves) * s.links_per_leaf_spine > spine_radix) return std::nullopt;
    s.spines = spines;
    return s;
  }
  // Three tiers.
  const int half = k / 2;
  const int nics = spec.node.nics;
  s.leaves_per_pod = s.rails ? half / nics * nics : half;
  if (s.leaves_per_pod < 1) return std::nullopt;
  if (s.rails) s.leaves = static_cast<int>(ceil_div(spec.nodes, s.downlinks_per_leaf)) * nics;  // group-major
  s.pods = static_cast<int>(ceil_div(s.leaves, s.leaves_per_pod));
  if (s.pods > k) return std::nullopt;
  s.uplinks_per_aggregation = s.leaves_per_pod;
  const int a = s.uplinks_per_aggregation;
  int m = 1;
  for (int x = 1; x <= a; ++x) {
    if (a % x == 0 && static_cast<std::int64_t>(s.pods) * x <= k) m = x;
  }
  s.links_per_aggregation_core = m;
  s.cores_per_group = a / m;
  s.spines = s.pods * s.uplinks_per_leaf;
  s.cores = s.uplinks_per_leaf * s.cores_per_group;
  return s;
}

}  // namespace

FatTreeShape fat_tree_shape(const ClusterSpec& spec) {
  const std::string& file = spec.source_file;
  const int tiers = spec.fabric.tiers;
  const bool spine_leaf = spec.fabric.type == "spine_leaf";
  if (tiers != 2 && (tiers != 3 || spine_leaf))  // parse_cluster_spec refuses it too (specs built in code)
    throw SpecError(
        file, "/fabric/tiers",
        std::string(spine_leaf ? "a spine_leaf fabric has 2 tiers" : "expected 2 or 3 tiers for a fat-tree") +
            ", got " + std::to_string(tiers));
  if (spec.node.nics == 0 && spec.nodes > 1)
    throw SpecError(
        file, "/node/nics",
        "a " + spec.fabric.type + " of " + std::to_string(spec.nodes) + " nodes needs nics >= 1 per node, got 0");
  const int k = spec.fabric.switch_radix;
  FatTreeShape leaf;
  leaf.rails = is_rail_optimized(spec);
  const double r = spec.fabric.oversubscription;
  if (!leaf_tier(spec, k, leaf) && std::floor(k / (1.0 + r) + 1e-9) < 1) {
    int needed = k + 1;
    while (needed < k_max_radix_search && !shape_at_radix(spec, needed))
      ++needed;
    throw SpecError(file, "/fabric/switch_radix",
                    "radix " + std::to_string(k) + " too small for oversubscription " + format_ratio(r) +
                        " (a leaf needs >= 1 uplink and " + format_ratio(r) +
                        " downlinks per uplink: needs >= " + std::to_string(needed) + ")");
  }
  if (tiers == 2 && spec.fabric.spines > 0 && leaf.uplinks_per_leaf % spec.fabric.spines != 0)
    throw SpecError(file, "/fabric/spines",
                    "expected a divisor of the " + std::to_string(leaf.uplinks_per_leaf) +
                        " uplinks per leaf (each leaf spreads them evenly over the spines), got " +
                        std::to_string(spec.fabric.spines));
  if (auto s = shape_at_radix(spec, k)) return *s;

  const std::int64_t nic_count = static_cast<std::int64_t>(spec.nodes) * spec.node.nics;
  if (tiers == 2 && spec.fabric.spine_radix > 0) {
    const int spines = spec.fabric.spines > 0 ? spec.fabric.spines : leaf.uplinks_per_leaf;
    const std::int64_t ports = static_cast<std::int64_t>(leaf.leaves) * (leaf.uplinks_per_leaf / spines);
    throw SpecError(file, "/fabric/spine_radix",
                    "spine radix " + std::to_string(spec.fabric.spine_radix) + " too small for " +
                        std::to_string(leaf.leaves) + " leaves (needs >= " + std::to_string(ports) + ")");
  }
  int needed = k + 1;
  while (needed < k_max_radix_search && !shape_at_radix(spec, needed))
    ++needed;
  std::string hint;
  if (tiers == 2 && !spine_leaf) hint = ", or fabric.tiers = 3";
  throw SpecError(file, "/fabric/switch_radix",
                  "radix " + std::to_string(k) + " too small for " + std::to_string(nic_count) + " NICs with " +
                      std::to_string(tiers) + " tiers (needs >= " + std::to_string(needed) + hint + ")");
}

int fat_tree_leaf_of(const FatTreeShape& shape, const ClusterSpec& spec, int node, int nic) {
  const int d = shape.downlinks_per_leaf;
  if (!shape.rails) return static_cast<int>((static_cast<std::int64_t>(node) * spec.node.nics + nic) / d);
  if (shape.tiers == 2) return nic * shape.leaves_per_rail + node / d;
  return node / d * spec.node.nics + nic;
}

void build_fat_tree(Cluster& cluster, const ClusterSpec& spec, const NodeLayout& nodes, const FabricPlane& plane) {
  const FatTreeShape shape = fat_tree_shape(spec);
  const LinkTechnology tech = fabric_technology(spec);
  const double bandwidth_Bps = plane.port_bandwidth_Bps;
  const double latency_s = spec.fabric.link_latency_us * units::kUsToS;
  const std::string& prefix = plane.prefix;
  const bool three = shape.tiers == 3;

  std::vector<int> leaves(static_cast<std::size_t>(shape.leaves));
  for (int i = 0; i < shape.leaves; ++i) {
    leaves[static_cast<std::size_t>(i)] = cluster.add_device(Device{.kind = DeviceKind::leaf_switch,
                                                                    .name = prefix + "leaf" + std::to_string(i),
                                                                    .local_index = i,
                                                                    .group = three ? i / shape.leaves_per_pod : -1});
  }
  for (int n = 0; n < nodes.nodes; ++n) {
    for (int j = 0; j < nodes.nics_per_node; ++j) {
      const int leaf = fat_tree_leaf_of(shape, spec, n, j);
      cluster.add_duplex_link(nodes.nic(n, j), leaves[static_cast<std::size_t>(leaf)], bandwidth_Bps, latency_s, tech);
    }
  }
  if (!three) {
    std::vector<int> spines(static_cast<std::size_t>(shape.spines));
    for (int s = 0; s < shape.spines; ++s) {
      spines[static_cast<std::size_t>(s)] = cluster.add_device(
          Device{.kind = DeviceKind::spine_switch, .name = prefix + "spine" + std::to_string(s), .local_index = s});
    }
    for (const int leaf : leaves) {
      for (const int spine : spines) {
        for (int l = 0; l < shape.links_per_leaf_spine; ++l)
          cluster.add_duplex_link(leaf, spine, bandwidth_Bps, latency_s, tech);
      }
    }
    return;
  }
  const int u = shape.uplinks_per_leaf;
  std::vector<int> aggregation(static_cast<std::size_t>(shape.spines));  // [pod * u + j]
  for (int p = 0; p < shape.pods; ++p) {
    for (int j = 0; j < u; ++j) {
      aggregation[static_cast<std::size_t>(p * u + j)] =
          cluster.add_device(Device{.kind = DeviceKind::spine_switch,
                                    .name = prefix + "pod" + std::to_string(p) + "/spine" + std::to_string(j),
                                    .local_index = j,
                                    .group = p});
    }
  }
  std::vector<int> cores(static_cast<std::size_t>(shape.cores));  // [j * C + c]
  for (int i = 0; i < shape.cores; ++i) {
    cores[static_cast<std::size_t>(i)] = cluster.add_device(
        Device{.kind = DeviceKind::core_switch, .name = prefix + "core" + std::to_string(i), .local_index = i});
  }
  for (int i = 0; i < shape.leaves; ++i) {
    const int pod = i / shape.leaves_per_pod;
    for (int j = 0; j < u; ++j)
      cluster.add_duplex_link(leaves[static_cast<std::size_t>(i)], aggregation[static_cast<std::size_t>(pod * u + j)],
                              bandwidth_Bps, latency_s, tech);
  }
  for (int p = 0; p < shape.pods; ++p) {
    for (int j = 0; j < u; ++j) {
      for (int c = 0; c < shape.cores_per_group; ++c) {
        for (int l = 0; l < shape.links_per_aggregation_core; ++l)
          cluster.add_duplex_link(aggregation[static_cast<std::size_t>(p * u + j)],
                                  cores[static_cast<std::size_t>(j * shape.cores_per_group + c)], bandwidth_Bps,
                                  latency_s, tech);
      }
    }
  }
}

// The node halves are a min bisection of a fat-tree whose halves are whole leaf groups (the nodes
// whose NICs share a set of leaves) and, in 3 tiers, whole pods: the traffic from one half then
// crosses its NIC links (NICs / 2 x B) and its leaves' uplinks (L / 2 x u x B = NICs / 2 x B x u / d;
// in 3 tiers the aggregation uplinks add the same figure, A = E). Otherwise no closed form.
std::optional<double> fat_tree_bisection_Bps(const Cluster& cluster) {
  const ClusterSpec& spec = cluster.spec();
  const NodeSpec& n = spec.node;
  if (spec.nodes % 2 != 0 || n.nics == 0) return std::nullopt;
  const double nic_Bps = n.nic_bandwidth_Gbps * units::kGbpsToBps;
  // Every NIC fed at its line rate from its own GPUs, and no NVLink domain across nodes.
  if (n.pcie_switches != 0 || n.pcie_bandwidth_GBps * units::kGBpsToBps < nic_Bps || spec.nodes_per_domain() != 1)
    return std::nullopt;
  const FatTreeShape s = fat_tree_shape(spec);
  const int d = s.downlinks_per_leaf;
  int nodes_per_group = 0, leaves_per_group = 0;
  if (s.rails) {
    nodes_per_group = d;
    leaves_per_group = n.nics;
  } else if (d % n.nics == 0) {
    nodes_per_group = d / n.nics;
    leaves_per_group = 1;
  } else if (n.nics % d == 0) {
    nodes_per_group = 1;
    leaves_per_group = n.nics / d;
  } else {
    return std::nullopt;
  }
  const double nic_side = static_cast<double>(spec.nodes) * n.nics / 2.0 * nic_Bps;
  const int groups = spec.nodes / nodes_per_group;
  if (spec.nodes % nodes_per_group != 0) return groups == 0 ? std::optional<double>(nic_side) : std::nullopt;
  if (groups == 1) return nic_side;
  if (groups % 2 != 0) return std::nullopt;
  const double uplink_ratio = std::min(1.0, static_cast<double>(s.uplinks_per_leaf) / d);
  if (s.tiers == 3 && s.pods > 1) {
    if (s.leaves_per_pod % leaves_per_group != 0) return std::nullopt;
    const int groups_per_pod = s.leaves_per_pod / leaves_per_group;
    if (groups % groups_per_pod != 0 || s.pods % 2 != 0) return std::nullopt;
  }
  return nic_side * uplink_ratio;
}

}  // namespace clustersim
