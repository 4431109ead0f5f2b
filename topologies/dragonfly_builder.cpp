// Dragonfly of G groups of a routers, h global links per router.
//   Terminals: NIC k (k = node * nics + j) on router k / p, p = ceil(NICs / (G a)); router r is router
//   r mod a of group r / a.
//   Local: the a routers of a group are joined all-to-all (a - 1 local links per router).
//   Global: a group has a h global ports; port q belongs to router q / h. Ports are dealt round by
//   round to the other groups: in round rho = q / (G - 1) (rho < floor(a h / (G - 1))), port q of group
//   i goes to group j = (i + 1 + q mod (G - 1)) mod G, on j's port rho (G - 1) + ((i - j - 1) mod G) of
//   the same round. Every two groups are then joined by floor(a h / (G - 1)) global links; ports of an
//   unfinished last round stay unused. G - 1 <= a h is required (every group reaches every other).
//   Router radix: p + (a - 1) + h <= fabric.switch_radix.
// Links run at the NIC port rate with link_latency_us each, technology fabric.technology. Routes
// are minimal (shortest) paths: local-global-local at most, ECMP over parallel global links.
#include "topologies/dragonfly_builder.hpp"

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

namespace clustersim {

DragonflyShape dragonfly_shape(const ClusterSpec& spec) {
  const FabricSpec& f = spec.fabric;
  DragonflyShape s{f.groups, f.routers_per_group, f.global_links_per_router, 0, 0};
  const std::string& file = spec.source_file;
  if (s.groups < 2)
    throw SpecError(file, "/fabric/groups", "expected an integer >= 2, got " + std::to_string(s.groups));
  if (s.routers_per_group < 1)
    throw SpecError(file, "/fabric/routers_per_group",
                    "expected an integer >= 1, got " + std::to_string(s.routers_per_group));
  if (s.global_links_per_router < 1)
    throw SpecError(file, "/fabric/global_links_per_router",
                    "expected an integer >= 1, got " + std::to_string(s.global_links_per_router));
  const std::int64_t ports = static_cast<std::int64_t>(s.routers_per_group) * s.global_links_per_router;
  if (s.groups - 1 > ports)
    throw SpecError(file, "/fabric/groups",
                    "expected at most routers_per_group x global_links_per_router + 1 = " + std::to_string(ports + 1) +
                        " groups (each group needs a global link to every other), got " + std::to_string(s.groups));
  s.links_per_group_pair = static_cast<int>(ports / (s.groups - 1));
  if (spec.nodes > 1 && spec.node.nics == 0)
    throw SpecError(file, "/node/nics",
                    "a dragonfly of " + std::to_string(spec.nodes) + " nodes needs nics >= 1 per node, got 0");
  const std::int64_t nics = static_cast<std::int64_t>(spec.nodes) * spec.node.nics;
  const std::int64_t routers = static_cast<std::int64_t>(s.groups) * s.routers_per_group;
  s.terminals_per_router = static_cast<int>((nics + routers - 1) / routers);
  const std::int64_t radix = s.terminals_per_router + (s.routers_per_group - 1) + s.global_links_per_router;
  if (radix > f.switch_radix)
    throw SpecError(file, "/fabric/switch_radix",
                    "radix " + std::to_string(f.switch_radix) + " too small for dragonfly routers with " +
                        std::to_string(s.terminals_per_router) + " NIC ports, " +
                        std::to_string(s.routers_per_group - 1) + " local and " +
                        std::to_string(s.global_links_per_router) + " global links (needs >= " + std::to_string(radix) +
                        ")");
  return s;
}

void build_dragonfly(Cluster& cluster, const ClusterSpec& spec, const NodeLayout& nodes, const FabricPlane& plane) {
  const DragonflyShape s = dragonfly_shape(spec);
  const LinkTechnology tech = fabric_technology(spec);
  const double bandwidth_Bps = plane.port_bandwidth_Bps;
  const double latency_s = spec.fabric.link_latency_us * units::kUsToS;
  const int g_count = s.groups, a = s.routers_per_group, h = s.global_links_per_router;
  std::vector<int> router(static_cast<std::size_t>(g_count) * static_cast<std::size_t>(a));
  for (int g = 0; g < g_count; ++g) {
    for (int r = 0; r < a; ++r) {
      router[static_cast<std::size_t>(g * a + r)] =
          cluster.add_device(Device{.kind = DeviceKind::leaf_switch,
                                    .name = plane.prefix + "g" + std::to_string(g) + "/router" + std::to_string(r),
                                    .local_index = r,
                                    .group = g});
    }
  }
  const auto at = [&](int g, int r) { return router[static_cast<std::size_t>(g * a + r)]; };
  for (int n = 0; n < nodes.nodes; ++n) {
    for (int j = 0; j < nodes.nics_per_node; ++j) {
      const std::int64_t k = static_cast<std::int64_t>(n) * nodes.nics_per_node + j;
      const int r = static_cast<int>(k / s.terminals_per_router);
      cluster.add_duplex_link(nodes.nic(n, j), router[static_cast<std::size_t>(r)], bandwidth_Bps, latency_s, tech);
    }
  }
  for (int g = 0; g < g_count; ++g) {
    for (int r1 = 0; r1 < a; ++r1) {
      for (int r2 = r1 + 1; r2 < a; ++r2)
        cluster.add_duplex_link(at(g, r1), at(g, r2), bandwidth_Bps, latency_s, tech);
    }
  }
  const int others = g_count - 1;
  for (int rho = 0; rho < s.links_per_group_pair; ++rho) {
    for (int i = 0; i < g_count; ++i) {
      for (int o = 0; o < others; ++o) {
        const int j = (i + 1 + o) % g_count;
        if (j < i) continue;  // each pair once per round
        const int q = rho * others + o;
        const int q_partner = rho * others + ((i - j - 1) % g_count + g_count) % g_count;
        cluster.add_duplex_link(at(i, q / h), at(j, q_partner / h), bandwidth_Bps, latency_s, tech);
      }
    }
  }
}

std::optional<double> dragonfly_bisection_Bps(const Cluster& cluster) {
  const ClusterSpec& spec = cluster.spec();
  const NodeSpec& n = spec.node;
  const DragonflyShape s = dragonfly_shape(spec);
  const double nic_Bps = n.nic_bandwidth_Gbps * units::kGbpsToBps;
  if (n.pcie_switches != 0 || n.pcie_bandwidth_GBps * units::kGBpsToBps < nic_Bps || spec.nodes_per_domain() != 1)
    return std::nullopt;
  const std::int64_t nics = static_cast<std::int64_t>(spec.nodes) * n.nics;
  const std::int64_t per_group = static_cast<std::int64_t>(s.routers_per_group) * s.terminals_per_router;
  if (s.groups % 2 != 0 || spec.nodes % 2 != 0 || nics != per_group * s.groups) return std::nullopt;
  const double half = s.groups / 2.0;
  return std::min(static_cast<double>(nics) / 2.0, half * half * s.links_per_group_pair) * nic_Bps;
}

}  // namespace clustersim
