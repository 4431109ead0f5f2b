#pragma once
#include <string>

#include "sim/collectives/collective_plan.hpp"

namespace clustersim {

// Why the request cannot run (empty when it can): the group size must be a power of two.
std::string halving_doubling_infeasible(const CollectiveContext& ctx, const CollectiveRequest& request);
CollectivePlan plan_halving_doubling(const CollectiveContext& ctx, const CollectiveRequest& request);

}  // namespace clustersim
