// Torus: a GPU count of a x b x c, 6 links per GPU in 3D with wrap-around, GPUs that forward, routes
// whose length is the torus distance sum_i min(|dc_i|, a_i - |dc_i|).
#include <cstdlib>
#include <set>

#include <gtest/gtest.h>

#include "topologies/cluster.hpp"
#include "topologies/torus_builder.hpp"
#include "topology_test_util.hpp"

namespace clustersim {
namespace {

using test::check_random_routes_are_shortest;
using test::node_spec;
using test::spec_from;

ClusterSpec torus(int nodes, int gpus, const std::vector<int>& dims) {
  return spec_from(
      node_spec(nodes, gpus, 0, {{"type", "torus"}, {"dims", dims}, {"link_bandwidth_Gbps", 400}}, "none"));
}

int torus_distance(const std::vector<int>& dims, int a, int b) {
  const auto ca = torus_coordinates(dims, a), cb = torus_coordinates(dims, b);
  int hops = 0;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const int d = std::abs(ca[i] - cb[i]);
    hops += std::min(d, dims[i] - d);
  }
  return hops;
}

TEST(Torus, GpuCountIsTheProductOfDimsWithSixLinksPerGpu) {
  // (3, 4, 5): 60 GPUs (15 nodes of 4), 6 links per GPU, 60 * 6 directed links, 180 cables.
  const std::vector<int> dims{3, 4, 5};
  const Cluster c = Cluster::build(torus(15, 4, dims));
  EXPECT_EQ(c.gpu_count(), 3 * 4 * 5);
  EXPECT_EQ(c.devices().size(), 60u);
  EXPECT_EQ(c.links().size(), 60u * 6u);
  for (int g = 0; g < c.gpu_count(); ++g) {
    EXPECT_TRUE(c.devices()[static_cast<std::size_t>(g)].forwards);
    ASSERT_EQ(c.out_links(g).size(), 6u) << "GPU " << g;
    // Each neighbour differs by +-1 (mod a_i) in exactly one coordinate.
    std::set<int> neighbours;
    for (const int id : c.out_links(g)) {
      const int h = c.links()[static_cast<std::size_t>(id)].dst;
      EXPECT_EQ(torus_distance(dims, g, h), 1) << g << " -> " << h;
      neighbours.insert(h);
    }
    EXPECT_EQ(neighbours.size(), 6u);
  }
  // Wrap-around: GPU (0,0,0) is joined to (2,0,0) = rank 2, (0,3,0) = rank 9 and (0,0,4) = rank 48.
  std::set<int> of_zero;
  for (const int id : c.out_links(0))
    of_zero.insert(c.links()[static_cast<std::size_t>(id)].dst);
  EXPECT_EQ(of_zero, (std::set<int>{1, 2, 3, 9, 12, 48}));
}

TEST(Torus, RoutesHaveTheTorusDistance) {
  const std::vector<int> dims{4, 4, 4};
  const Cluster c = Cluster::build(torus(16, 4, dims));
  for (int a = 0; a < 64; ++a) {
    for (int b = 0; b < 64; ++b)
      EXPECT_EQ(c.route_hops(a, b), torus_distance(dims, a, b)) << a << " -> " << b;
  }
  // Diameter 2 + 2 + 2 = 6; the route from (0,0,0) to (2,2,2) passes through 5 other GPUs.
  std::vector<int> route;
  c.route(0, 42, 1, route);
  EXPECT_EQ(route.size(), 6u);
  EXPECT_NEAR(c.route_latency_s(route), 6 * 0.6e-6, 1e-15);
  check_random_routes_are_shortest(c, 300);
}

TEST(Torus, SmallDimensionsGiveParallelOrNoLinks) {
  // A dimension of 2 joins each pair twice (direct and wrap-around cable), a dimension of 1 not at all:
  // dims (2, 1, 4): 2 + 0 + 2 = 4 links per GPU.
  const Cluster c = Cluster::build(torus(2, 4, {2, 1, 4}));
  for (int g = 0; g < 8; ++g)
    EXPECT_EQ(c.out_links(g).size(), 4u);
  int to_partner = 0;
  for (const int id : c.out_links(0))
    to_partner += c.links()[static_cast<std::size_t>(id)].dst == 1 ? 1 : 0;
  EXPECT_EQ(to_partner, 2);
}

TEST(Torus, NodesWithAScaleUpDomainAreStillTori) {
  // 8 nodes of 4 GPUs on NVSwitch, in a torus of (8, 4): every GPU has 4 torus links and its NVLink.
  const Cluster c = Cluster::build(spec_from(node_spec(8, 4, 0, {{"type", "torus"}, {"dims", {8, 4}}})));
  EXPECT_EQ(c.out_links(0).size(), 5u);
  check_random_routes_are_shortest(c, 300);
}

}  // namespace
}  // namespace clustersim
