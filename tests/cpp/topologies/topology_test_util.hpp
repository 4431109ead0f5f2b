#pragma once
// Helpers shared by the topology tests.
#include <algorithm>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "topologies/cluster.hpp"

namespace clustersim::test {

// A spec of `nodes` nodes of `gpus` GPUs and `nics` NICs on a 2-tier fat-tree of radix `radix`.
inline ClusterSpec fat_tree_spec(int nodes, int gpus, int nics, int radix, double oversubscription, bool rail,
                                 const std::string& scale_up = "nvswitch") {
  nlohmann::json doc = {{"name", "test"},
                        {"gpu", "h100-sxm5-80gb"},
                        {"nodes", nodes},
                        {"node",
                         {{"gpus", gpus},
                          {"scale_up", {{"type", scale_up}, {"bandwidth_GBps", 450}, {"latency_us", 0.7}}},
                          {"nics", nics},
                          {"nic_bandwidth_Gbps", 400},
                          {"pcie_bandwidth_GBps", 64}}},
                        {"fabric",
                         {{"type", "fat_tree"},
                          {"switch_radix", radix},
                          {"oversubscription", oversubscription},
                          {"rail_optimized", rail},
                          {"link_latency_us", 0.6}}}};
  return parse_cluster_spec(doc.dump(), "test.json");
}

// Parses a spec given as JSON (file name "test.json" in errors).
inline ClusterSpec spec_from(const nlohmann::json& doc) {
  return parse_cluster_spec(doc.dump(), "test.json");
}

// `nodes` nodes of `gpus` GPUs and `nics` 400G NICs on NVSwitch (or `scale_up`), with `fabric` merged in.
inline nlohmann::json node_spec(int nodes, int gpus, int nics, const nlohmann::json& fabric,
                                const std::string& scale_up = "nvswitch") {
  nlohmann::json su = {{"type", scale_up}, {"latency_us", 0.7}};
  if (scale_up != "none") su["bandwidth_GBps"] = 450;
  return {
      {"name", "test"},
      {"gpu", "h100-sxm5-80gb"},
      {"nodes", nodes},
      {"node",
       {{"gpus", gpus}, {"scale_up", su}, {"nics", nics}, {"nic_bandwidth_Gbps", 400}, {"pcie_bandwidth_GBps", 64}}},
      {"fabric", fabric}};
}

inline long count_devices(const Cluster& c, DeviceKind kind) {
  return std::count_if(c.devices().begin(), c.devices().end(), [&](const Device& d) { return d.kind == kind; });
}

inline long count_links(const Cluster& c, DeviceKind from, DeviceKind to) {
  return std::count_if(c.links().begin(), c.links().end(), [&](const Link& l) {
    return c.devices()[static_cast<std::size_t>(l.src)].kind == from &&
           c.devices()[static_cast<std::size_t>(l.dst)].kind == to;
  });
}

// The bandwidth of every link from a `from` device to a `to` device, summed (bytes/s).
inline double link_bandwidth_Bps(const Cluster& c, DeviceKind from, DeviceKind to) {
  double total = 0.0;
  for (const Link& l : c.links())
    if (c.devices()[static_cast<std::size_t>(l.src)].kind == from &&
        c.devices()[static_cast<std::size_t>(l.dst)].kind == to)
      total += l.bandwidth_Bps;
  return total;
}

// The leaf switch a NIC is cabled to (-1 if none).
inline int leaf_of_nic(const Cluster& c, int nic) {
  for (const int id : c.out_links(nic)) {
    const int head = c.links()[static_cast<std::size_t>(id)].dst;
    if (c.devices()[static_cast<std::size_t>(head)].kind == DeviceKind::leaf_switch) return head;
  }
  return -1;
}

// Hop count of the shortest src -> dst path whose intermediate devices forward (a plain BFS, the
// reference the routes are checked against); -1 when there is none.
inline int bfs_hops(const Cluster& c, int src, int dst) {
  std::vector<int> dist(c.devices().size(), -1);
  std::deque<int> queue{src};
  dist[static_cast<std::size_t>(src)] = 0;
  while (!queue.empty()) {
    const int v = queue.front();
    queue.pop_front();
    if (v == dst) return dist[static_cast<std::size_t>(v)];
    if (v != src && !c.devices()[static_cast<std::size_t>(v)].forwards) continue;
    for (const int id : c.out_links(v)) {
      const int w = c.links()[static_cast<std::size_t>(id)].dst;
      if (dist[static_cast<std::size_t>(w)] >= 0) continue;
      dist[static_cast<std::size_t>(w)] = dist[static_cast<std::size_t>(v)] + 1;
      queue.push_back(w);
    }
  }
  return -1;
}

// Checks that `route` is a chain of links from src to dst through forwarding devices only.
inline void expect_valid_route(const Cluster& c, int src, int dst, const std::vector<int>& route) {
  ASSERT_FALSE(route.empty());
  const auto link = [&](int id) -> const Link& { return c.links()[static_cast<std::size_t>(id)]; };
  EXPECT_EQ(link(route.front()).src, src);
  EXPECT_EQ(link(route.back()).dst, dst);
  for (std::size_t i = 0; i + 1 < route.size(); ++i) {
    const int via = link(route[i]).dst;
    EXPECT_EQ(link(route[i + 1]).src, via);
    EXPECT_TRUE(c.devices()[static_cast<std::size_t>(via)].forwards)
        << "route passes through " << c.devices()[static_cast<std::size_t>(via)].name;
  }
}

// Routes between `pairs` random GPU pairs are valid, as short as a BFS finds, and route_hops agrees.
// Links on the routes between `routes` random GPU pairs (seeded by `seed`), route i with flow id i.
inline std::size_t random_route_hops(const Cluster& c, int routes, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> gpu(0, c.gpu_count() - 1);
  std::vector<int> route;
  route.reserve(16);
  std::size_t hops = 0;
  for (int i = 0; i < routes; ++i) {
    route.clear();
    c.route(gpu(rng), gpu(rng), static_cast<std::uint64_t>(i), route);
    hops += route.size();
  }
  return hops;
}

inline void check_random_routes_are_shortest(const Cluster& c, int pairs, std::uint64_t seed = 12345) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> gpu(0, c.gpu_count() - 1);
  std::vector<int> route;
  for (int i = 0; i < pairs; ++i) {
    const int src = gpu(rng), dst = gpu(rng);
    route.clear();
    c.route(src, dst, rng(), route);
    if (src == dst) {
      EXPECT_TRUE(route.empty());
      continue;
    }
    expect_valid_route(c, src, dst, route);
    EXPECT_EQ(static_cast<int>(route.size()), bfs_hops(c, src, dst)) << src << " -> " << dst;
    EXPECT_EQ(c.route_hops(src, dst), static_cast<int>(route.size())) << src << " -> " << dst;
  }
}

// Small clusters of every routed fabric type: 3-tier fat-tree, rail-optimized 3-tier, spine-leaf, two
// planes, dragonfly, a GPU torus without switches and one whose GPUs forward and have an NVSwitch.
inline std::vector<nlohmann::json> small_fabrics() {
  return {
      node_spec(8, 2, 2, {{"type", "fat_tree"}, {"tiers", 3}, {"switch_radix", 4}}),
      node_spec(24, 4, 4, {{"type", "rail_optimized"}, {"tiers", 3}, {"switch_radix", 16}, {"oversubscription", 3}}),
      node_spec(10, 4, 2, {{"type", "spine_leaf"}, {"switch_radix", 12}, {"spines", 2}, {"oversubscription", 2}}),
      node_spec(8, 2, 2, {{"type", "fat_tree"}, {"switch_radix", 8}, {"planes", 2}}),
      node_spec(16, 2, 2,
                {{"type", "dragonfly"},
                 {"groups", 4},
                 {"routers_per_group", 2},
                 {"global_links_per_router", 2},
                 {"switch_radix", 8}}),
      node_spec(12, 4, 0, {{"type", "torus"}, {"dims", {4, 3, 4}}}, "none"),
      node_spec(8, 4, 4, {{"type", "torus"}, {"dims", {8, 4}}}),
  };
}

}  // namespace clustersim::test
