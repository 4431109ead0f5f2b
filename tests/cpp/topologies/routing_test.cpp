// Routing: every route is a shortest path (checked against a plain BFS) that never passes through a
// GPU; intra-node traffic takes the 2 NVLink hops of the scale-up domain; ECMP (fabric.routing ecmp)
// spreads flows evenly over equal-cost uplinks and a flow always takes the same path; D-mod-K
// (d_mod_k, InfiniBand's default) routes by destination and leaves shift permutations contention-free.
#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include <gtest/gtest.h>

#include "topologies/cluster.hpp"
#include "topology_test_util.hpp"

namespace clustersim {
namespace {

using test::check_random_routes_are_shortest;
using test::fat_tree_spec;

const Device& device(const Cluster& c, int i) {
  return c.devices()[static_cast<std::size_t>(i)];
}
const Link& link(const Cluster& c, int i) {
  return c.links()[static_cast<std::size_t>(i)];
}
ClusterSpec with_routing(ClusterSpec spec, const std::string& routing) {
  spec.fabric.routing = routing;
  return spec;
}

TEST(Routing, RandomRoutesAreShortestAndAvoidGpus) {
  check_random_routes_are_shortest(Cluster::build(fat_tree_spec(6, 4, 4, 8, 1.0, true)), 400);
  check_random_routes_are_shortest(Cluster::build(fat_tree_spec(6, 2, 2, 8, 1.0, false)), 400);
  check_random_routes_are_shortest(Cluster::build(fat_tree_spec(5, 8, 4, 12, 2.0, false)), 400);  // shared NICs
  check_random_routes_are_shortest(Cluster::build(fat_tree_spec(3, 4, 1, 8, 1.0, false, "pcie")), 200);
  check_random_routes_are_shortest(Cluster::build(load_cluster_spec("dgx-h100-superpod")), 400);
}

TEST(Routing, EveryFabricRoutesOnShortestPaths) {
  using test::node_spec;
  using test::spec_from;
  const std::vector<nlohmann::json> fabrics = test::small_fabrics();
  for (const auto& doc : fabrics) {
    SCOPED_TRACE(doc["fabric"].dump());
    check_random_routes_are_shortest(Cluster::build(spec_from(doc)), 300);
  }
}

TEST(Routing, IntraNodeRoutesAreTwoNvlinkHops) {
  // 8 GPUs share 4 NICs: GPU 0 -> NIC 0 -> GPU 1 is also 2 hops, but a route never turns at a NIC.
  const Cluster c = Cluster::build(fat_tree_spec(2, 8, 4, 64, 1.0, false));
  std::vector<int> route;
  for (int src = 0; src < 16; ++src) {
    for (int dst = 0; dst < 16; ++dst) {
      if (src == dst || c.node_of_gpu(src) != c.node_of_gpu(dst)) continue;
      for (std::uint64_t flow = 0; flow < 8; ++flow) {
        route.clear();
        c.route(src, dst, flow, route);
        ASSERT_EQ(route.size(), 2u);
        EXPECT_EQ(link(c, route[0]).technology, LinkTechnology::nvlink);
        EXPECT_EQ(link(c, route[1]).technology, LinkTechnology::nvlink);
        EXPECT_EQ(device(c, link(c, route[0]).dst).name, "node" + std::to_string(c.node_of_gpu(src)) + "/nvswitch");
        EXPECT_DOUBLE_EQ(c.route_latency_s(route), 0.7e-6);  // scale_up.latency_us, GPU to GPU
      }
    }
  }
}

TEST(Routing, RailOptimizedHopCountsAndLatencies) {
  // dgx-h100-superpod: 32 nodes share each rail's single leaf (d = 32).
  const Cluster c = Cluster::build(load_cluster_spec("dgx-h100-superpod"));
  std::vector<int> route;
  // Same rail (GPU 0 of nodes 0 and 1): GPU -> NIC -> leaf -> NIC -> GPU, 2 fabric links of 0.6 us.
  c.route(0, 8, 1, route);
  EXPECT_EQ(route.size(), 4u);
  EXPECT_NEAR(c.route_latency_s(route), 1.2e-6, 1e-15);
  EXPECT_EQ(link(c, route[0]).technology, LinkTechnology::pcie);
  EXPECT_EQ(link(c, route[1]).technology, LinkTechnology::infiniband);
  // Across rails (GPU 0 of node 0 to GPU 1 of node 1): up through a spine, 4 fabric links.
  route.clear();
  c.route(0, 9, 1, route);
  EXPECT_EQ(route.size(), 6u);
  EXPECT_NEAR(c.route_latency_s(route), 2.4e-6, 1e-15);
  EXPECT_EQ(device(c, link(c, route[2]).dst).kind, DeviceKind::spine_switch);
  EXPECT_EQ(c.route_latency_s(std::vector<int>{}), 0.0);
}

TEST(Routing, RouteBoundsChargeShortRoutesOnlyTheLinksInsideNodes) {
  // dgx-h100-superpod: NVLink 0.35 us per GPU-switch link, PCIe GPU-NIC 0, InfiniBand 0.6 us. A route
  // reaches a leaf after 2 links (GPU -> NIC -> leaf) and a GPU 2 links later: routes of fewer than 4
  // links stay inside a node.
  const Cluster c = Cluster::build(load_cluster_spec("dgx-h100-superpod"));
  const unsigned nvlink = 1u << static_cast<unsigned>(LinkTechnology::nvlink);
  const unsigned pcie = 1u << static_cast<unsigned>(LinkTechnology::pcie);
  const unsigned infiniband = 1u << static_cast<unsigned>(LinkTechnology::infiniband);
  for (const int hops : {1, 2, 3}) {
    EXPECT_NEAR(c.route_bound(hops).link_latency_s, 0.35e-6, 1e-15) << hops;
    EXPECT_EQ(c.route_bound(hops).technologies, nvlink | pcie) << hops;
  }
  EXPECT_NEAR(c.route_bound(4).link_latency_s, 0.6e-6, 1e-15);
  EXPECT_EQ(c.route_bound(4).technologies, nvlink | pcie | infiniband);
  // Every route's latency is within its bound.
  std::vector<int> route;
  for (const auto& [src, dst] : std::vector<std::pair<int, int>>{{0, 1}, {0, 8}, {0, 9}, {3, 250}}) {
    route.clear();
    c.route(src, dst, 0, route);
    const auto hops = static_cast<int>(route.size());
    EXPECT_LE(c.route_latency_s(route), hops * c.route_bound(hops).link_latency_s + 1e-15) << src << " -> " << dst;
  }
  // A single node without a fabric: every route stays inside it.
  const Cluster one = Cluster::build(test::spec_from(test::node_spec(1, 8, 0, {{"type", "single_node"}})));
  EXPECT_NEAR(one.route_bound(100).link_latency_s, 0.35e-6, 1e-15);
  EXPECT_EQ(one.route_bound(100).technologies & infiniband, 0u);
}

TEST(Routing, EcmpSpreadsFlowsEvenlyOverALeafsUplinks) {
  // Radix 8, 1:1: 4 uplinks per leaf. 8 nodes x 2 GPUs x 2 NICs: leaf 0 holds the NICs of nodes 0 and 1
  // (GPUs 0..3); every flow from them to GPUs 4..15 leaves leaf 0 on exactly one of its 4 uplinks.
  const Cluster c = Cluster::build(with_routing(fat_tree_spec(8, 2, 2, 8, 1.0, false), "ecmp"));
  std::mt19937_64 rng(2024);
  std::uniform_int_distribution<int> src_gpu(0, 3), dst_gpu(4, 15);
  std::map<int, int> flows_per_uplink;
  std::vector<int> route;
  constexpr int k_flows = 10000;
  for (int i = 0; i < k_flows; ++i) {
    route.clear();
    c.route(src_gpu(rng), dst_gpu(rng), rng(), route);
    int uplinks = 0;
    for (const int id : route) {
      if (device(c, link(c, id).src).name == "leaf0" && device(c, link(c, id).dst).kind == DeviceKind::spine_switch) {
        ++flows_per_uplink[id];
        ++uplinks;
      }
    }
    EXPECT_EQ(uplinks, 1);
  }
  ASSERT_EQ(flows_per_uplink.size(), 4u);
  for (const auto& [id, n] : flows_per_uplink)
    EXPECT_NEAR(n, k_flows / 4, 0.05 * k_flows / 4) << "uplink " << id;
}

TEST(Routing, EcmpSpreadsOverThirtyTwoUplinks) {
  // dgx-h100-superpod: flows from rail 0 (leaf 0) to rail 1 cross one of leaf 0's 32 uplinks. With
  // 64,000 flows, 2,000 expected per uplink; a fair hash keeps the chi-square statistic (31 degrees of
  // freedom) far below 70 (p < 0.0001) and every uplink within 10% of 2,000.
  const Cluster c = Cluster::build(with_routing(load_cluster_spec("dgx-h100-superpod"), "ecmp"));
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> node(0, 31);
  std::map<int, int> per_uplink;
  std::vector<int> route;
  constexpr int k_flows = 64000;
  for (int i = 0; i < k_flows; ++i) {
    route.clear();
    const int src_node = node(rng);
    const int dst_node = (src_node + 1 + node(rng) % 31) % 32;  // another node
    c.route(src_node * 8, dst_node * 8 + 1, static_cast<std::uint64_t>(i), route);
    ASSERT_EQ(route.size(), 6u);
    ++per_uplink[route[2]];
  }
  ASSERT_EQ(per_uplink.size(), 32u);
  double chi2 = 0.0;
  for (const auto& [id, n] : per_uplink) {
    chi2 += (n - 2000.0) * (n - 2000.0) / 2000.0;
    EXPECT_NEAR(n, 2000, 200) << "uplink " << id;
  }
  EXPECT_LT(chi2, 70.0);
}

TEST(Routing, SameFlowSameRouteDifferentFlowsSpread) {
  const Cluster c = Cluster::build(with_routing(load_cluster_spec("dgx-h100-superpod"), "ecmp"));
  std::vector<int> first, again, other;
  std::set<std::vector<int>> distinct;
  for (std::uint64_t flow = 0; flow < 64; ++flow) {
    first.clear();
    again.clear();
    c.route(3, 250, flow, first);
    for (int k = 0; k < 20; ++k) {  // routes to other destinations in between
      other.clear();
      c.route(k, 255 - k, flow + 1000, other);
    }
    c.route(3, 250, flow, again);
    EXPECT_EQ(first, again) << "flow " << flow;
    distinct.insert(first);
  }
  // GPU 3 (rail 3) -> GPU 250 (node 31, rail 2): 32 spines to choose from; 64 flows use many of them.
  EXPECT_GE(distinct.size(), 16u);
  // A second cluster built from the same spec routes identically.
  const Cluster twin = Cluster::build(with_routing(load_cluster_spec("dgx-h100-superpod"), "ecmp"));
  for (std::uint64_t flow = 0; flow < 16; ++flow) {
    first.clear();
    again.clear();
    c.route(17, 200, flow, first);
    twin.route(17, 200, flow, again);
    EXPECT_EQ(first, again);
  }
}

// Counts, per directed fabric link between switches, the flows of `pairs` routed over it.
std::map<int, int> flows_per_switch_link(const Cluster& c, const std::vector<std::pair<int, int>>& pairs) {
  std::map<int, int> flows;
  std::vector<int> route;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    route.clear();
    c.route(pairs[i].first, pairs[i].second, i, route);
    for (const int id : route) {
      if (device(c, link(c, id).src).node < 0 && device(c, link(c, id).dst).node < 0) ++flows[id];
    }
  }
  return flows;
}

int most_flows(const std::map<int, int>& flows) {
  int most = 0;
  for (const auto& [id, n] : flows)
    most = std::max(most, n);
  return most;
}

TEST(Routing, DestinationModKLeavesShiftPermutationsContentionFree) {
  // A non-blocking fat-tree of one GPU and one NIC per node: every node sends to the node `shift`
  // further on. D-mod-K (Zahavi 2010) takes the up-port from the destination's digits, so no two flows
  // share a switch-to-switch link, for every shift, on 2 tiers (radix 8: 4 uplinks per leaf, 32
  // nodes) and on 3 tiers (radix 8: 128 nodes in 4 pods). A hash per flow (ECMP) collides.
  for (const int tiers : {2, 3}) {
    const int nodes = tiers == 2 ? 32 : 128;
    ClusterSpec spec = fat_tree_spec(nodes, 1, 1, 8, 1.0, false);
    spec.fabric.tiers = tiers;
    const Cluster dmodk = Cluster::build(spec);  // infiniband: routing auto = d_mod_k
    const Cluster ecmp = Cluster::build(with_routing(spec, "ecmp"));
    int ecmp_worst = 0;
    for (int shift = 1; shift < nodes; ++shift) {
      std::vector<std::pair<int, int>> pairs;
      for (int n = 0; n < nodes; ++n)
        pairs.emplace_back(n, (n + shift) % nodes);
      EXPECT_EQ(most_flows(flows_per_switch_link(dmodk, pairs)), 1) << tiers << " tiers, shift " << shift;
      ecmp_worst = std::max(ecmp_worst, most_flows(flows_per_switch_link(ecmp, pairs)));
    }
    EXPECT_GE(ecmp_worst, 3) << tiers << " tiers";
  }
}

TEST(Routing, DestinationModKRoutesByDestinationOnly) {
  // Under d_mod_k (and adaptive routing on an idle fabric) the flow id does not change the path; routing
  // auto means adaptive on InfiniBand and ecmp on Ethernet.
  ClusterSpec ib = load_cluster_spec("dgx-h100-superpod");
  const Cluster c = Cluster::build(ib);
  std::vector<int> first, again;
  c.route(3, 250, 0, first);
  for (std::uint64_t flow = 1; flow < 32; ++flow) {
    again.clear();
    c.route(3, 250, flow, again);
    EXPECT_EQ(first, again);
  }
  ClusterSpec eth = ib;
  eth.fabric.technology = "ethernet";
  const Cluster e = Cluster::build(eth);
  std::set<std::vector<int>> distinct;
  for (std::uint64_t flow = 0; flow < 32; ++flow) {
    again.clear();
    e.route(3, 250, flow, again);
    distinct.insert(again);
  }
  EXPECT_GE(distinct.size(), 8u);
}

TEST(Routing, AdaptiveTakesTheLeastLoadedUplinkTiesAsDestinationRouting) {
  // Radix 8 (4 uplinks per leaf), one GPU and NIC per node: GPU 3 -> 4 and GPU 2 -> 8 both go to port
  // 0 of a remote leaf. Without load (or loads all equal) adaptive routes as d_mod_k; with the first
  // route's links loaded, the second leaves leaf 0 on the next uplink instead of the same one.
  ClusterSpec spec = fat_tree_spec(12, 1, 1, 8, 1.0, false);
  spec.fabric.routing = "adaptive";
  const Cluster adaptive = Cluster::build(spec);
  const Cluster dmodk = Cluster::build(with_routing(spec, "d_mod_k"));
  std::vector<int> first, second, reference;
  std::vector<int> load(adaptive.links().size(), 0);
  adaptive.route(3, 4, 0, first, load);
  dmodk.route(3, 4, 0, reference);
  EXPECT_EQ(first, reference);
  for (const int id : first)
    ++load[static_cast<std::size_t>(id)];
  adaptive.route(2, 8, 1, second, load);
  reference.clear();
  dmodk.route(2, 8, 1, reference);
  ASSERT_EQ(second.size(), 6u);
  ASSERT_EQ(reference.size(), 6u);
  EXPECT_EQ(reference[2], first[2]);  // d_mod_k: the same uplink out of leaf 0
  EXPECT_NE(second[2], first[2]);     // adaptive: another one
  EXPECT_EQ(link(adaptive, second[2]).src, link(adaptive, first[2]).src);
  EXPECT_EQ(device(adaptive, link(adaptive, second[2]).dst).kind, DeviceKind::spine_switch);
}

// The shortest src -> dst routes the walk may take: every intermediate device forwards, and the first
// hop is among the best ranked (an NVLink, then other links, a turn at a NIC last), by a plain reverse
// BFS and a count of paths along it.
long count_walkable_shortest_routes(const Cluster& c, int src, int dst) {
  const std::size_t n = c.devices().size();
  std::vector<int> to_dst(n, -1);
  std::vector<std::vector<int>> in(n);
  for (std::size_t id = 0; id < c.links().size(); ++id)
    in[static_cast<std::size_t>(link(c, static_cast<int>(id)).dst)].push_back(static_cast<int>(id));
  std::deque<int> queue{dst};
  to_dst[static_cast<std::size_t>(dst)] = 0;
  while (!queue.empty()) {
    const int v = queue.front();
    queue.pop_front();
    if (v != dst && !device(c, v).forwards) continue;
    for (const int id : in[static_cast<std::size_t>(v)]) {
      const int u = link(c, id).src;
      if (to_dst[static_cast<std::size_t>(u)] >= 0) continue;
      to_dst[static_cast<std::size_t>(u)] = to_dst[static_cast<std::size_t>(v)] + 1;
      queue.push_back(u);
    }
  }
  const auto next_hops = [&](int v) {
    std::vector<int> ids;
    for (const int id : c.out_links(v)) {
      const int w = link(c, id).dst;
      if ((w == dst || device(c, w).forwards) &&
          to_dst[static_cast<std::size_t>(w)] == to_dst[static_cast<std::size_t>(v)] - 1)
        ids.push_back(id);
    }
    return ids;
  };
  std::map<int, long> memo;
  const std::function<long(int)> ways = [&](int v) -> long {
    if (v == dst) return 1;
    if (const auto it = memo.find(v); it != memo.end()) return it->second;
    long total = 0;
    for (const int id : next_hops(v))
      total += ways(link(c, id).dst);
    return memo[v] = total;
  };
  const auto rank = [&](int id) {
    if (to_dst[static_cast<std::size_t>(link(c, id).dst)] == 1 && device(c, link(c, id).dst).kind == DeviceKind::nic)
      return 2;
    return link(c, id).technology == LinkTechnology::nvlink ? 0 : 1;
  };
  const std::vector<int> first = next_hops(src);
  int best = 3;
  for (const int id : first)
    best = std::min(best, rank(id));
  long total = 0;
  for (const int id : first)
    if (rank(id) == best) total += ways(link(c, id).dst);
  return total;
}

TEST(Routing, EcmpTakesEveryEqualCostRoute) {
  // Hashing at every hop reaches each walkable shortest route of a pair (a route the walk never offers
  // would be missed: the walk's pruning of heads must not drop equal-cost choices).
  std::vector<ClusterSpec> specs;
  for (const auto& doc : test::small_fabrics())
    specs.push_back(test::spec_from(doc));
  specs.push_back(fat_tree_spec(5, 8, 4, 12, 2.0, false));  // NICs shared by GPUs
  specs.push_back(fat_tree_spec(6, 4, 4, 8, 1.0, true));
  // Rack-scale NVLink domains of 32 GPUs: a fabric-owned NVSwitch whose heads are GPUs.
  specs.push_back(load_cluster_spec("gb200-nvl72", {{"node.scale_up.domain_gpus", "32"}, {"nodes", "16"}}));
  int pairs_checked = 0;
  for (const ClusterSpec& spec : specs) {
    const Cluster c = Cluster::build(with_routing(spec, "ecmp"));
    SCOPED_TRACE(spec.fabric.type);
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<int> gpu(0, c.gpu_count() - 1);
    for (int i = 0; i < 12; ++i) {
      const int src = gpu(rng), dst = gpu(rng);
      if (src == dst) continue;
      const long expected = count_walkable_shortest_routes(c, src, dst);
      if (expected > 24) continue;
      std::set<std::vector<int>> distinct;
      std::vector<int> route;
      for (std::uint64_t flow = 0; flow < 3000; ++flow) {
        route.clear();
        c.route(src, dst, flow, route);
        distinct.insert(route);
      }
      EXPECT_EQ(static_cast<long>(distinct.size()), expected) << src << " -> " << dst;
      ++pairs_checked;
    }
  }
  EXPECT_GE(pairs_checked, 40);
}

TEST(Routing, SwitchesOfRadix128ChooseAmongAllTheirUplinks) {
  // Radix 128, one GPU and NIC per node, 160 nodes: 3 leaves of 64 NICs, each with 64 uplinks (128
  // out-links: the walk's masks of eligible out-links take 2 words). Routes are shortest (plain BFS);
  // ECMP reaches every uplink of the source leaf (the walkable routes, counted by BFS: 64 spines x 1
  // way down = 64); adaptive routing with every uplink of leaf 0 loaded but the one last in its
  // out-links (CSR position >= 64: the second word) takes that one.
  const ClusterSpec spec = fat_tree_spec(160, 1, 1, 128, 1.0, false);
  check_random_routes_are_shortest(Cluster::build(spec), 300);
  const int src = 0, dst = 100;  // leaf 0 -> leaf 1
  const Cluster ecmp = Cluster::build(with_routing(spec, "ecmp"));
  ASSERT_EQ(count_walkable_shortest_routes(ecmp, src, dst), 64);
  std::set<int> uplinks;
  std::vector<int> route;
  for (std::uint64_t flow = 0; flow < 4000; ++flow) {  // P(some uplink missed) <= 64 (63/64)^4000 < 1e-25
    route.clear();
    ecmp.route(src, dst, flow, route);
    ASSERT_EQ(route.size(), 6u);  // GPU -> NIC -> leaf -> spine -> leaf -> NIC -> GPU
    uplinks.insert(route[2]);
  }
  EXPECT_EQ(uplinks.size(), 64u);

  ClusterSpec adaptive_spec = spec;
  adaptive_spec.fabric.routing = "adaptive";
  const Cluster adaptive = Cluster::build(adaptive_spec);
  route.clear();
  adaptive.route(src, dst, 0, route);
  const int leaf = link(adaptive, route[2]).src;
  std::vector<int> leaf_uplinks;
  for (const int id : adaptive.out_links(leaf))
    if (device(adaptive, link(adaptive, id).dst).kind == DeviceKind::spine_switch) leaf_uplinks.push_back(id);
  ASSERT_EQ(leaf_uplinks.size(), 64u);
  ASSERT_EQ(adaptive.out_links(leaf).size(), 128u);
  const int free_uplink = leaf_uplinks.back();
  EXPECT_GE(std::find(adaptive.out_links(leaf).begin(), adaptive.out_links(leaf).end(), free_uplink) -
                adaptive.out_links(leaf).begin(),
            64);
  std::vector<int> load(adaptive.links().size(), 0);
  for (const int id : leaf_uplinks)
    load[static_cast<std::size_t>(id)] = id == free_uplink ? 0 : 1;
  route.clear();
  adaptive.route(src, dst, 0, route, load);
  ASSERT_EQ(route.size(), 6u);
  EXPECT_EQ(route[2], free_uplink);
}

TEST(Routing, AMultiHomedNicIsAnEqualCostWayBetweenLeaves) {
  // leaf A - spine k - leaf B (4 spines) and leaf A - node 2's NIC (cabled to both leaves) - leaf B are
  // all 2 hops: GPU 0 (below A) -> GPU 1 (below B) has five shortest routes, and hashing takes each.
  // The walk skips heads of other nodes only where no node is such a shortcut
  // (RouteDistances::transits_strict), so the NIC stays a choice. (With 4 spines the leaves have more
  // than 4 forwarding in-neighbours: they are not funnelled into GPU 1's exceptions.)
  Cluster c(with_routing(fat_tree_spec(3, 1, 1, 64, 1.0, false), "ecmp"));
  for (int g = 0; g < 3; ++g)
    c.add_device(Device{.kind = DeviceKind::gpu, .name = "gpu" + std::to_string(g), .node = g, .forwards = false});
  std::vector<int> nic;
  for (int g = 0; g < 3; ++g)
    nic.push_back(c.add_device(Device{.kind = DeviceKind::nic, .name = "nic" + std::to_string(g), .node = g}));
  const int leaf_a = c.add_device(Device{.kind = DeviceKind::leaf_switch, .name = "leafA"});
  const int leaf_b = c.add_device(Device{.kind = DeviceKind::leaf_switch, .name = "leafB"});
  for (int g = 0; g < 3; ++g)
    c.add_duplex_link(g, nic[static_cast<std::size_t>(g)], 64e9, 0.0, LinkTechnology::pcie);
  c.add_duplex_link(nic[0], leaf_a, 50e9, 0.0, LinkTechnology::infiniband);
  c.add_duplex_link(nic[1], leaf_b, 50e9, 0.0, LinkTechnology::infiniband);
  std::set<int> expected_third{c.add_duplex_link(leaf_a, nic[2], 50e9, 0.0, LinkTechnology::infiniband)};
  c.add_duplex_link(nic[2], leaf_b, 50e9, 0.0, LinkTechnology::infiniband);
  for (int k = 0; k < 4; ++k) {
    const int spine = c.add_device(Device{.kind = DeviceKind::spine_switch, .name = "spine" + std::to_string(k)});
    expected_third.insert(c.add_duplex_link(leaf_a, spine, 50e9, 0.0, LinkTechnology::infiniband));
    c.add_duplex_link(spine, leaf_b, 50e9, 0.0, LinkTechnology::infiniband);
  }
  c.finalize();
  std::set<std::vector<int>> distinct;
  std::set<int> third_links;
  std::vector<int> route;
  for (std::uint64_t flow = 0; flow < 500; ++flow) {
    route.clear();
    c.route(0, 1, flow, route);
    ASSERT_EQ(route.size(), 6u);
    distinct.insert(route);
    third_links.insert(route[2]);
  }
  EXPECT_EQ(distinct.size(), 5u);
  EXPECT_EQ(third_links, expected_third);
}

// The walk's cache (per source GPU, the links up to its first choice by load or flow, and its state
// there) changes no route: each (src, dst, lane) is routed with the same flow and load on a cluster
// that has walked it before with another flow and load (from its cache) and on one that has not (a
// fresh walk); both routes equal. Pairs inside a node (the flow's hash at the source), across a rail
// group and across the spines (adaptive: the least loaded uplink), lanes of a GPU with two NICs, and
// more destinations per source than the cache keeps.
void expect_cached_walks_equal_fresh_walks(const ClusterSpec& spec) {
  const Cluster warm = Cluster::build(spec), fresh = Cluster::build(spec);
  const int gpus = spec.gpu_count();
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> gpu(0, gpus - 1), load_of(0, 3), lane_of(-1, 1);
  std::set<std::tuple<int, int, int>> seen;
  std::vector<int> load(warm.links().size()), before, cached, walked;
  int compared = 0;
  for (int q = 0; q < 3000; ++q) {
    const int src = q < 40 ? 0 : gpu(rng), dst = q < 40 ? (q + 1) % gpus : gpu(rng), lane = lane_of(rng);
    if (src == dst || !seen.insert({src, dst, lane}).second) continue;
    for (int& l : load)
      l = load_of(rng);
    before.clear();
    warm.route(src, dst, 2 * static_cast<std::uint64_t>(q), before, load, lane);  // fills the cache
    for (int& l : load)
      l = load_of(rng);
    cached.clear();
    walked.clear();
    warm.route(src, dst, 2 * static_cast<std::uint64_t>(q) + 1, cached, load, lane);
    fresh.route(src, dst, 2 * static_cast<std::uint64_t>(q) + 1, walked, load, lane);
    ASSERT_EQ(cached, walked) << src << " -> " << dst << " lane " << lane;
    ++compared;
  }
  EXPECT_GT(compared, 1000);
}

TEST(Routing, CachedWalksEqualFreshWalks) {
  ClusterSpec superpod = load_cluster_spec("dgx-h100-superpod", {{"nodes", "64"}});  // 2 rail groups
  for (const std::string routing : {"adaptive", "d_mod_k", "ecmp"})
    expect_cached_walks_equal_fresh_walks(with_routing(superpod, routing));
  expect_cached_walks_equal_fresh_walks(with_routing(fat_tree_spec(12, 2, 4, 16, 1.0, true), "adaptive"));
}

// Cluster::route's flow_hashed: a route that made no hashed pick among several links is the same walk
// for every flow id (what lets TrafficClasses::add_batch route it once, traffic_classes.hpp); ECMP
// across leaves hashes, and so does a GPU owning several NICs without a lane (nics > gpus).
TEST(Routing, ARouteThatHashedNoPickIsTheSameForEveryFlowId) {
  std::vector<ClusterSpec> specs;
  for (const auto& doc : test::small_fabrics())
    specs.push_back(test::spec_from(doc));
  specs.push_back(fat_tree_spec(5, 8, 4, 12, 2.0, false));  // NICs shared by GPUs
  specs.push_back(fat_tree_spec(12, 2, 4, 16, 1.0, true));  // two NICs per GPU
  int hashed_count = 0, unhashed_count = 0;
  for (const ClusterSpec& spec : specs)
    for (const std::string routing : {"adaptive", "d_mod_k", "ecmp"}) {
      const Cluster c = Cluster::build(with_routing(spec, routing));
      SCOPED_TRACE(spec.fabric.type + " " + routing);
      std::mt19937_64 rng(11);
      std::uniform_int_distribution<int> gpu(0, c.gpu_count() - 1), count(0, 3);
      std::vector<int> load(c.links().size());
      for (int& l : load)
        l = count(rng);
      std::vector<int> first, other;
      for (int i = 0; i < 60; ++i) {
        const int src = gpu(rng), dst = gpu(rng), lane = i % 3 == 0 ? 0 : -1;
        first.clear();
        bool hashed = false;
        c.route(src, dst, 0, first, load, lane, nullptr, &hashed);
        if (src == dst) {
          EXPECT_FALSE(hashed);
          continue;
        }
        (hashed ? hashed_count : unhashed_count) += 1;
        if (hashed) continue;
        for (std::uint64_t flow = 1; flow < 40; ++flow) {
          other.clear();
          bool again = false;
          c.route(src, dst, flow * 0x9e3779b97f4a7c15ULL, other, load, lane, nullptr, &again);
          ASSERT_EQ(other, first) << src << " -> " << dst << " lane " << lane;
          EXPECT_FALSE(again);
        }
      }
    }
  EXPECT_GT(hashed_count, 100);
  EXPECT_GT(unhashed_count, 300);
  // 8 nodes of 2 GPUs, radix 8: GPU 0 (leaf 0) to GPU 15 (leaf 3) leaves leaf 0 on one of 4 uplinks.
  const ClusterSpec spec = fat_tree_spec(8, 2, 2, 8, 1.0, false);
  for (const std::string routing : {"adaptive", "d_mod_k", "ecmp"}) {
    std::vector<int> route;
    bool hashed = false;
    Cluster::build(with_routing(spec, routing)).route(0, 15, 0, route, {}, -1, nullptr, &hashed);
    EXPECT_EQ(hashed, routing == "ecmp") << routing;
  }
}

// The one rule of which routings read the load in flight (the replay's classes follow it too).
TEST(Routing, AdaptiveAndSprayRoutingRouteByLoad) {
  const ClusterSpec spec = fat_tree_spec(8, 2, 2, 8, 1.0, false);  // InfiniBand: "auto" is adaptive
  EXPECT_TRUE(Cluster::build(spec).routes_by_load());
  for (const std::string routing : {"adaptive", "spray", "d_mod_k", "ecmp"})
    EXPECT_EQ(Cluster::build(with_routing(spec, routing)).routes_by_load(), routing == "adaptive" || routing == "spray")
        << routing;
}

TEST(Routing, RejectsOutOfRangeGpus) {
  const Cluster c = Cluster::build(load_cluster_spec("dgx-h100"));
  std::vector<int> route;
  EXPECT_THROW(c.route(0, 8, 0, route), std::out_of_range);
  EXPECT_THROW(c.route(-1, 0, 0, route), std::out_of_range);
  c.route(5, 5, 0, route);
  EXPECT_TRUE(route.empty());
}

TEST(Routing, RandomPairsOnTwoThousandGpusCrossNodes) {
  // 256 DGX nodes (2,048 GPUs): routes between random pairs are 4 or 6 hops across nodes. Speed is
  // measured by bench/bench_topology, not here.
  const Cluster c = Cluster::build(load_cluster_spec("dgx-h100-superpod", {{"nodes", "256"}}));
  constexpr int k_routes = 20000;
  const std::size_t hops = test::random_route_hops(c, k_routes, 99);
  EXPECT_GT(hops, 5u * k_routes);  // almost all pairs are cross-node: 4 or 6 hops
}

}  // namespace
}  // namespace clustersim
