// Two-tier fat-tree (leaf/spine folded Clos).
//
// Shape rule, for leaf radix k and oversubscription r (downlink:uplink bandwidth at the leaf tier):
//   u = floor(k / (1 + r))        uplinks per leaf, one to each spine
//   d = floor(r * u)              downlinks per leaf (NIC ports); d / u == r whenever r * u is integral
//   k - d - u ports stay unused   (k = 64: r = 1 -> 32/32; r = 2 -> 42/21, one spare; r = 3 -> 48/16)
// So a leaf's uplink bandwidth is exactly 1/r of its downlink bandwidth, and for a given NIC count a
// 2:1 fabric has half the leaf-uplink bandwidth of a 1:1 fabric (when r * u is integral and the leaves
// are full: 24 NICs at k = 12 give 4 leaves x 6 uplinks at 1:1 and 3 leaves x 4 uplinks at 2:1).
//   NICs  = nodes * nics
//   Leaves: rail_optimized: every rail (NIC index j) has its own leaves, ceil(nodes / d) of them, and
//           NIC j of node n sits on leaf j * ceil(nodes / d) + n / d; so L = nics * ceil(nodes / d).
//           otherwise: NICs fill leaves in (node, nic) order: L = ceil(NICs / d).
//   Spines: S = u (each leaf has one link to each spine), or 0 when there is a single leaf.
//   A spine then uses L of its k ports: L <= k is required (at radix k, 1:1, at most k^2 / 2 NICs:
//   2048 NICs = 256 DGX nodes at k = 64). Larger fabrics need a third tier (not supported yet).
//   Directed links: 2 * NICs (NIC <-> leaf) + 2 * L * S (leaf <-> spine).
// Every fabric link runs at the NIC line rate, nic_bandwidth_Gbps * 1e9 / 8 B/s per direction, with
// latency link_latency_us per link, technology fabric.technology.
#include "topologies/fat_tree_builder.hpp"

#include <cmath>
#include <optional>
#include <sstream>
#include <string_view>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

namespace clustersim {
namespace {

constexpr int k_max_radix_search = 1 << 16;

struct TechnologyName {
  std::string_view name;
  LinkTechnology technology;
};
constexpr TechnologyName k_fabric_technologies[] = {
    {"infiniband", LinkTechnology::infiniband},
    {"ethernet", LinkTechnology::ethernet},
};

LinkTechnology fabric_technology(const ClusterSpec& spec) {
  for (const auto& t : k_fabric_technologies) {
    if (t.name == spec.fabric.technology) return t.technology;
  }
  throw SpecError(spec.source_file, "/fabric/technology",
                  "expected one of infiniband, ethernet, got \"" + spec.fabric.technology + "\"");
}

std::string format_ratio(double r) {
  std::ostringstream os;
  os << r;
  return os.str();
}

// The shape at radix k, or nothing when k cannot hold it in two tiers.
std::optional<FatTreeShape> shape_at_radix(const ClusterSpec& spec, int k) {
  const double r = spec.fabric.oversubscription;
  FatTreeShape s;
  s.uplinks_per_leaf = static_cast<int>(std::floor(k / (1.0 + r) + 1e-9));
  s.downlinks_per_leaf = static_cast<int>(std::floor(r * s.uplinks_per_leaf + 1e-9));
  if (s.uplinks_per_leaf < 1 || s.downlinks_per_leaf < 1) return std::nullopt;
  const std::int64_t d = s.downlinks_per_leaf;
  const std::int64_t nodes = spec.nodes;
  const std::int64_t nics = spec.node.nics;
  std::int64_t leaves = 0;
  if (spec.fabric.rail_optimized) {
    s.leaves_per_rail = nics == 0 ? 0 : static_cast<int>((nodes + d - 1) / d);
    leaves = nics * s.leaves_per_rail;
  } else {
    leaves = (nodes * nics + d - 1) / d;
  }
  if (leaves > k) return std::nullopt;  // a spine connects to every leaf
  s.leaves = static_cast<int>(leaves);
  s.spines = s.leaves > 1 ? s.uplinks_per_leaf : 0;
  return s;
}

}  // namespace

FatTreeShape fat_tree_shape(const ClusterSpec& spec) {
  const std::string file = spec.source_file;
  if (spec.fabric.tiers != 2)  // parse_cluster_spec refuses it too; specs built in code get the same message
    throw SpecError(
        file, "/fabric/tiers",
        "fat-trees of " + std::to_string(spec.fabric.tiers) + " tiers are not supported yet (supported: 2)");
  if (spec.node.nics == 0 && spec.nodes > 1)
    throw SpecError(file, "/node/nics",
                    "a fat_tree of " + std::to_string(spec.nodes) + " nodes needs nics >= 1 per node, got 0");
  const int k = spec.fabric.switch_radix;
  if (auto s = shape_at_radix(spec, k)) return *s;

  int needed = k + 1;
  while (needed < k_max_radix_search && !shape_at_radix(spec, needed))
    ++needed;
  const std::int64_t nic_count = static_cast<std::int64_t>(spec.nodes) * spec.node.nics;
  const double r = spec.fabric.oversubscription;
  if (std::floor(k / (1.0 + r) + 1e-9) < 1)
    throw SpecError(file, "/fabric/switch_radix",
                    "radix " + std::to_string(k) + " too small for oversubscription " + format_ratio(r) +
                        " (a leaf needs >= 1 uplink and " + format_ratio(r) +
                        " downlinks per uplink: needs >= " + std::to_string(needed) + ")");
  throw SpecError(file, "/fabric/switch_radix",
                  "radix " + std::to_string(k) + " too small for " + std::to_string(nic_count) +
                      " NICs with 2 tiers (needs >= " + std::to_string(needed) +
                      "; a 3-tier fat-tree is not supported yet)");
}

void build_fat_tree(Cluster& cluster, const ClusterSpec& spec, const NodeLayout& nodes) {
  const FatTreeShape shape = fat_tree_shape(spec);
  const LinkTechnology tech = fabric_technology(spec);
  const double bandwidth_Bps = spec.node.nic_bandwidth_Gbps * units::kGbpsToBps;
  const double latency_s = spec.fabric.link_latency_us * units::kUsToS;

  std::vector<int> leaves;
  leaves.reserve(static_cast<std::size_t>(shape.leaves));
  for (int i = 0; i < shape.leaves; ++i) {
    leaves.push_back(cluster.add_device(
        Device{.kind = DeviceKind::leaf_switch, .name = "leaf" + std::to_string(i), .local_index = i}));
  }
  std::vector<int> spines;
  spines.reserve(static_cast<std::size_t>(shape.spines));
  for (int s = 0; s < shape.spines; ++s) {
    spines.push_back(cluster.add_device(
        Device{.kind = DeviceKind::spine_switch, .name = "spine" + std::to_string(s), .local_index = s}));
  }

  const int d = shape.downlinks_per_leaf;
  for (int n = 0; n < nodes.nodes; ++n) {
    for (int j = 0; j < nodes.nics_per_node; ++j) {
      const int leaf =
          spec.fabric.rail_optimized ? j * shape.leaves_per_rail + n / d : (n * nodes.nics_per_node + j) / d;
      cluster.add_duplex_link(nodes.nic(n, j), leaves[static_cast<std::size_t>(leaf)], bandwidth_Bps, latency_s, tech);
    }
  }
  for (const int leaf : leaves) {
    for (const int spine : spines)
      cluster.add_duplex_link(leaf, spine, bandwidth_Bps, latency_s, tech);
  }
}

}  // namespace clustersim
