// The nodes a token's routed experts reach (workloads/expert_routing.cpp), by enumeration and by the
// hypergeometric closed form, and the routings that cannot exist.
#include "workloads/expert_routing.hpp"

#include <gtest/gtest.h>

namespace clustersim {
namespace {

// 4 experts on 2 nodes (2 each), top-2: of the C(4, 2) = 6 pairs, 2 sit on one node and 4 span both,
// so a token reaches (2 x 1 + 4 x 2) / 6 = 5/3 nodes; limited to 1 node, exactly 1.
TEST(ExpertRouting, EnumeratedSmallCase) {
  EXPECT_NEAR(expected_nodes_per_token({4, 2, 0}, 2), 5.0 / 3.0, 1e-12);
  EXPECT_NEAR(expected_nodes_per_token({4, 2, 2}, 2), 5.0 / 3.0, 1e-12);  // M = n: unlimited
  EXPECT_NEAR(expected_nodes_per_token({4, 2, 1}, 2), 1.0, 1e-12);
  EXPECT_NEAR(expected_nodes_per_token({4, 2, 5}, 2), 5.0 / 3.0, 1e-12);  // M > n: all n
}

// 16 experts on 2 nodes, top-2: 2 (1 - C(8, 2) / C(16, 2)) = 2 (1 - 28/120) = 23/15.
TEST(ExpertRouting, TwoNodesByTheClosedForm) {
  EXPECT_NEAR(expected_nodes_per_token({16, 2, 0}, 2), 23.0 / 15.0, 1e-12);
}

// DeepSeek-V3 (arXiv:2412.19437 sec. 2.1.2): 256 experts on the 8 nodes of an EP-64 group (32 each),
// top-8. M = 4: 4 (1 - C(96, 8) / C(128, 8)) = 3.6290109244; unlimited: 8 (1 - C(224, 8) / C(256, 8))
// = 5.2946520004 (exact binomials, Python's math.comb). A token reaches fewer than its 8 copies' nodes.
TEST(ExpertRouting, DeepSeekV3NodeLimitedRouting) {
  EXPECT_NEAR(expected_nodes_per_token({256, 8, 4}, 8), 3.6290109244257005, 1e-9);
  EXPECT_NEAR(expected_nodes_per_token({256, 8, 0}, 8), 5.29465200038248, 1e-9);
  EXPECT_EQ(expected_nodes_per_token({256, 8, 4}, 1), 1.0);  // one node: reached once
}

// M nodes of 32 experts cannot hold top-40 at M = 1; they can at M = 2 (64 experts).
TEST(ExpertRouting, TooFewExpertsOnTheAllowedNodesIsInfeasible) {
  EXPECT_NE(expert_routing_infeasible({256, 40, 1}, 8).find("fewer than top_k 40"), std::string::npos);
  EXPECT_EQ(expert_routing_infeasible({256, 40, 2}, 8), "");
  EXPECT_EQ(expert_routing_infeasible({256, 8, 0}, 8), "");
}

}  // namespace
}  // namespace clustersim
