// Routing distances: the core/component split of RouteDistances gives exactly the distances of a plain
// reverse BFS over every forwarding device, toward any seed set with any offsets, on every fabric
// type; so every route between every GPU pair is as short as a BFS finds.
#include "topologies/route_distances.hpp"

#include <deque>
#include <random>

#include <gtest/gtest.h>

#include "topologies/cluster.hpp"
#include "topology_test_util.hpp"

namespace clustersim {
namespace {

using test::node_spec;
using test::spec_from;

// Small clusters of every fabric type, with and without PCIe trees inside the nodes (whose NICs, PCIe
// switches and host bridge form components that traffic could cross).
std::vector<nlohmann::json> small_clusters() {
  std::vector<nlohmann::json> docs = {
      node_spec(6, 4, 4, {{"type", "fat_tree"}, {"switch_radix", 8}, {"rail_optimized", true}}),
      node_spec(5, 8, 4, {{"type", "fat_tree"}, {"switch_radix", 12}, {"oversubscription", 2}}),
  };
  for (auto& doc : test::small_fabrics())
    docs.push_back(std::move(doc));
  nlohmann::json pcie_rail = node_spec(6, 4, 4, {{"type", "fat_tree"}, {"switch_radix", 8}, {"rail_optimized", true}});
  pcie_rail["node"]["pcie_switches"] = 2;
  docs.push_back(pcie_rail);
  nlohmann::json pcie_only = node_spec(4, 4, 2, {{"type", "spine_leaf"}, {"switch_radix", 8}, {"spines", 2}}, "pcie");
  pcie_only["node"]["pcie_switches"] = 2;
  docs.push_back(pcie_only);
  nlohmann::json pcie_three_tier = node_spec(8, 2, 2, {{"type", "fat_tree"}, {"tiers", 3}, {"switch_radix", 4}});
  pcie_three_tier["node"]["pcie_switches"] = 1;
  docs.push_back(pcie_three_tier);
  return docs;
}

// The forwarding devices' in-neighbour CSR, as Cluster builds it for RouteDistances.
struct ForwardingGraph {
  std::vector<int> index_of_device, device_of;
  std::vector<int> in_offsets{0}, in_sources, node_of;
};

ForwardingGraph forwarding_graph(const Cluster& c) {
  ForwardingGraph g;
  g.index_of_device.assign(c.devices().size(), -1);
  for (std::size_t v = 0; v < c.devices().size(); ++v) {
    if (!c.devices()[v].forwards) continue;
    g.index_of_device[v] = static_cast<int>(g.device_of.size());
    g.device_of.push_back(static_cast<int>(v));
    g.node_of.push_back(c.devices()[v].node);
  }
  std::vector<std::vector<int>> in(g.device_of.size());
  for (const Link& l : c.links()) {
    const int from = g.index_of_device[static_cast<std::size_t>(l.src)];
    const int to = g.index_of_device[static_cast<std::size_t>(l.dst)];
    if (from >= 0 && to >= 0) in[static_cast<std::size_t>(to)].push_back(from);
  }
  for (const auto& sources : in) {
    g.in_sources.insert(g.in_sources.end(), sources.begin(), sources.end());
    g.in_offsets.push_back(static_cast<int>(g.in_sources.size()));
  }
  return g;
}

// The reference: a multi-source reverse BFS over every forwarding device (the previous implementation).
std::vector<std::uint32_t> reference_distances(const ForwardingGraph& g, std::span<const RouteDistances::Seed> seeds) {
  std::vector<std::uint32_t> dist(g.device_of.size(), RouteDistances::k_unreached);
  // Seeds join at their offsets: a BFS with a queue per level.
  std::uint32_t max_level = 0;
  for (const auto& s : seeds)
    max_level = std::max<std::uint32_t>(max_level, s.offset);
  std::vector<int> current, next;
  for (std::uint32_t level = 0; level <= max_level || !current.empty(); ++level) {
    for (const auto& s : seeds) {
      if (s.offset == level && dist[static_cast<std::size_t>(s.forwarding)] == RouteDistances::k_unreached) {
        dist[static_cast<std::size_t>(s.forwarding)] = level;
        current.push_back(s.forwarding);
      }
    }
    next.clear();
    for (const int v : current) {
      for (int k = g.in_offsets[static_cast<std::size_t>(v)]; k < g.in_offsets[static_cast<std::size_t>(v) + 1]; ++k) {
        const int u = g.in_sources[static_cast<std::size_t>(k)];
        if (dist[static_cast<std::size_t>(u)] != RouteDistances::k_unreached) continue;
        dist[static_cast<std::size_t>(u)] = level + 1;
        next.push_back(u);
      }
    }
    std::swap(current, next);
  }
  return dist;
}

void expect_same_distances(const ForwardingGraph& g, const RouteDistances& rd,
                           std::span<const RouteDistances::Seed> seeds) {
  std::vector<std::uint16_t> core;
  rd.fill(seeds, core);
  std::vector<RouteDistances::Seed> in_components;
  rd.component_seeds(seeds, in_components);
  const auto expected = reference_distances(g, seeds);
  for (std::size_t f = 0; f < g.device_of.size(); ++f) {
    std::uint32_t got = rd.distance(core.data(), in_components, static_cast<int>(f));
    if (got > RouteDistances::k_unreached) got = RouteDistances::k_unreached;
    ASSERT_EQ(got, expected[f]) << "device " << g.device_of[f] << " toward " << seeds.size() << " seeds, first "
                                << g.device_of[static_cast<std::size_t>(seeds.front().forwarding)];
  }
}

TEST(RouteDistances, EqualThePlainBfsFromEveryDeviceTowardAnySeeds) {
  for (const auto& doc : small_clusters()) {
    SCOPED_TRACE(doc.dump());
    const Cluster c = Cluster::build(spec_from(doc));
    const ForwardingGraph g = forwarding_graph(c);
    RouteDistances rd;
    rd.build(g.in_offsets, g.in_sources, g.node_of);
    // Every forwarding device alone as the seed.
    for (std::size_t f = 0; f < g.device_of.size(); ++f) {
      const RouteDistances::Seed seed{static_cast<int>(f), 0};
      expect_same_distances(g, rd, std::span(&seed, 1));
    }
    // Random seed sets with offsets (a destination's hubs).
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<int> device(0, static_cast<int>(g.device_of.size()) - 1);
    std::uniform_int_distribution<int> offset(0, 3);
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<RouteDistances::Seed> seeds;
      for (int i = 0; i < 1 + trial % 4; ++i)
        seeds.push_back(RouteDistances::Seed{device(rng), static_cast<std::uint16_t>(offset(rng))});
      expect_same_distances(g, rd, seeds);
    }
  }
}

TEST(RouteDistances, EveryGpuPairRoutesOnAShortestPath) {
  for (const auto& doc : small_clusters()) {
    SCOPED_TRACE(doc.dump());
    const Cluster c = Cluster::build(spec_from(doc));
    std::vector<int> route;
    for (int src = 0; src < c.gpu_count(); ++src) {
      for (int dst = 0; dst < c.gpu_count(); ++dst) {
        if (src == dst) continue;
        route.clear();
        c.route(src, dst, static_cast<std::uint64_t>(src * 31 + dst), route);
        test::expect_valid_route(c, src, dst, route);
        const int hops = test::bfs_hops(c, src, dst);
        ASSERT_EQ(static_cast<int>(route.size()), hops) << src << " -> " << dst;
        ASSERT_EQ(c.route_hops(src, dst), hops) << src << " -> " << dst;
      }
    }
  }
}

}  // namespace
}  // namespace clustersim
