// The busiest expert-parallel rank's routed tokens: the expected maximum of normal draws against its
// closed forms, the multinomial imbalance by hand, and the capacity cap of token dropping.
#include "workloads/moe_routing.hpp"

#include <cmath>
#include <numbers>

#include <gtest/gtest.h>

namespace clustersim {
namespace {

TEST(MoeRouting, ExpectedMaximumOfNormalsMatchesItsClosedForms) {
  EXPECT_DOUBLE_EQ(expected_max_of_standard_normals(1), 0.0);
  // E[max of 2] = 1 / sqrt(pi); E[max of 3] = 3 / (2 sqrt(pi)) (David and Nagaraja, Order Statistics)
  EXPECT_NEAR(expected_max_of_standard_normals(2), 1.0 / std::sqrt(std::numbers::pi), 1e-9);
  EXPECT_NEAR(expected_max_of_standard_normals(3), 1.5 / std::sqrt(std::numbers::pi), 1e-9);
  // E[max of 4] = 6 / (pi sqrt(pi)) * atan(sqrt(2)) (ibid.): 1.029375...
  EXPECT_NEAR(expected_max_of_standard_normals(4), 6.0 / std::pow(std::numbers::pi, 1.5) * std::atan(std::sqrt(2.0)),
              1e-9);
  // grows like sqrt(2 ln n), more slowly than it: 64 ranks about 2.4
  const double z64 = expected_max_of_standard_normals(64);
  EXPECT_GT(z64, 2.3);
  EXPECT_LT(z64, std::sqrt(2.0 * std::log(64.0)));
}

TEST(MoeRouting, BusiestRankUnderEachDistribution) {
  MoeSpec moe;
  moe.experts = 256;
  moe.top_k = 8;
  // factor: T k x load_imbalance = 4096 * 8 * 1.25 = 40,960
  moe.load_imbalance = 1.25;
  EXPECT_DOUBLE_EQ(busiest_rank_routed_tokens(moe, 64, 4096.0), 40'960.0);
  // multinomial: T k + z_ep sqrt(T k (1 - 1/ep)); ep 2: 32,768 + sqrt(32,768 / 2) / sqrt(pi) = 32,840.21
  moe.load_imbalance = 1.0;
  moe.load_distribution = "multinomial";
  EXPECT_NEAR(busiest_rank_routed_tokens(moe, 2, 4096.0), 32'768.0 + 128.0 / std::sqrt(std::numbers::pi), 1e-4);
  // one rank takes every copy: no imbalance
  EXPECT_DOUBLE_EQ(busiest_rank_routed_tokens(moe, 1, 4096.0), 32'768.0);
  // the factor applies on top of chance
  moe.load_imbalance = 2.0;
  EXPECT_NEAR(busiest_rank_routed_tokens(moe, 2, 4096.0), 2.0 * (32'768.0 + 128.0 / std::sqrt(std::numbers::pi)), 2e-4);
}

TEST(MoeRouting, TokenDroppingCapsTheBusiestRankAtItsCapacity) {
  MoeSpec moe{.experts = 8, .top_k = 2, .capacity_factor = 1.25, .load_imbalance = 1.5};
  // without dropping, the capacity factor changes nothing: 1024 * 2 * 1.5 = 3072
  EXPECT_DOUBLE_EQ(busiest_rank_routed_tokens(moe, 8, 1024.0), 3072.0);
  // with it, capped at 1.25 x 2048 = 2560
  moe.token_dropping = true;
  EXPECT_DOUBLE_EQ(busiest_rank_routed_tokens(moe, 8, 1024.0), 2560.0);
  // a capacity above the load drops nothing
  moe.capacity_factor = 2.0;
  EXPECT_DOUBLE_EQ(busiest_rank_routed_tokens(moe, 8, 1024.0), 3072.0);
}

}  // namespace
}  // namespace clustersim
