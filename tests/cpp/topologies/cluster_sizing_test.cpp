// A design sized to a GPU count by its own rules (topologies/cluster_sizing.cpp), each rule on a
// shipped preset with the arithmetic worked by hand.
#include "topologies/cluster_sizing.hpp"

#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "topologies/cluster.hpp"

namespace clustersim {
namespace {

std::string error_of(const ClusterSpec& spec, std::int64_t gpus) {
  try {
    (void)size_cluster_to_gpus(spec, gpus);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

TEST(ClusterSizing, WholeNodesAndTheSameFabricWhenItHoldsThem) {
  // DGX H100 SuperPOD: 32 nodes of 8 GPUs, rail-optimized 2-tier fat tree of radix 64 at 1:1, which
  // holds 64^2 / 2 = 2048 NICs: 1024 GPUs = 128 nodes x 8 NICs = 1024 NICs fit as they are.
  const ClusterSpec spec = load_cluster_spec("dgx-h100-superpod", {});
  const SizedCluster s = size_cluster_to_gpus(spec, 1024);
  EXPECT_EQ(s.spec.nodes, 128);
  EXPECT_EQ(s.spec.gpu_count(), 1024);
  EXPECT_EQ(s.spec.fabric.tiers, 2);
  ASSERT_EQ(s.changes.size(), 1u);
  EXPECT_EQ(s.changes[0], "nodes 32 -> 128");
  EXPECT_EQ(Cluster::build(s.spec).gpu_count(), 1024);
  // The same count: nothing changes.
  EXPECT_TRUE(size_cluster_to_gpus(spec, 256).changes.empty());
}

TEST(ClusterSizing, AFatTreeGetsAThirdTierWhenItsSwitchesCannotHoldTheNics) {
  // AWS p5: 32 x 100 Gb/s EFA ports per node. 1024 GPUs = 128 nodes = 4096 ports > 2048 that two tiers
  // of radix 64 hold: a third tier (64^3 / 4 = 65,536).
  const SizedCluster s = size_cluster_to_gpus(load_cluster_spec("aws-p5", {}), 1024);
  EXPECT_EQ(s.spec.nodes, 128);
  EXPECT_EQ(s.spec.fabric.tiers, 3);
  EXPECT_EQ(s.changes.back(), "fabric.tiers 2 -> 3");
}

TEST(ClusterSizing, ASpineLeafFabricSpreadsItsUplinksOverMoreSpines) {
  // hgx-h100-roce: leaves of radix 64 at 2:1 have u = floor(64 / 3) = 21 uplinks and d = 42 NIC ports,
  // over 7 spines of radix 64 (3 links from every leaf to every spine). 128 nodes x 8 NICs = 1024 NICs
  // need ceil(1024 / 42) = 25 leaves: 25 x 3 = 75 ports per spine > 64. The next divisor of 21 is 21
  // spines, one link per leaf: 25 ports each.
  const SizedCluster s = size_cluster_to_gpus(load_cluster_spec("hgx-h100-roce", {}), 1024);
  EXPECT_EQ(s.spec.fabric.spines, 21);
  EXPECT_EQ(s.changes.back(), "fabric.spines 7 -> 21");
  // 64 leaves x 1 link fill a spine's 64 ports: 64 x 42 = 2688 NICs = 336 nodes; 344 nodes need 66
  // leaves, which no spine count of radix 64 holds.
  EXPECT_NE(error_of(load_cluster_spec("hgx-h100-roce", {}), 344 * 8).find("no larger form"), std::string::npos);
}

TEST(ClusterSizing, ATorusGetsNearCubicDimensions) {
  // 1024 = 2^10 over 3 dimensions, each factor onto the smallest so far: 8 x 8 x 16.
  const SizedCluster s = size_cluster_to_gpus(load_cluster_spec("torus-3d", {}), 1024);
  EXPECT_EQ(s.spec.fabric.dims, (std::vector<int>{8, 8, 16}));
  EXPECT_EQ(s.spec.nodes, 256);  // 4 GPUs a node
  // 3 x 1000 = 2^3 3 5^3 over 3: 5, 5, 5 first, then 3, 2, 2, 2 onto the smallest: 10 x 15 x 20.
  EXPECT_EQ(size_cluster_to_gpus(load_cluster_spec("torus-3d", {}), 3000).spec.fabric.dims,
            (std::vector<int>{10, 15, 20}));
}

TEST(ClusterSizing, WhatCannotGrowSaysWhy) {
  EXPECT_NE(error_of(load_cluster_spec("dgx-h100", {}), 1024).find("/fabric/type: a single_node fabric"),
            std::string::npos);
  // NVL72: domains of 72 GPUs (18 trays of 4); 1024 is not a multiple, 1008 = 14 domains is.
  const ClusterSpec nvl72 = load_cluster_spec("gb200-nvl72", {});
  EXPECT_NE(error_of(nvl72, 1024).find("/node/scale_up/domain_gpus: 1024 GPUs are not whole NVLink domains of 72"),
            std::string::npos);
  EXPECT_EQ(size_cluster_to_gpus(nvl72, 1008).spec.nodes, 252);
  EXPECT_NE(error_of(load_cluster_spec("dgx-h100-superpod", {}), 1020).find("1020 GPUs are not whole nodes of 8"),
            std::string::npos);
  EXPECT_NE(error_of(load_cluster_spec("dgx-h100-superpod", {}), 0).find("--gpus"), std::string::npos);
}

}  // namespace
}  // namespace clustersim
