#pragma once
#include "sim/collectives/collective_plan.hpp"

namespace clustersim {

bool tree_supports(CollectiveKind kind);
CollectivePlan plan_tree(const CollectiveContext& ctx, const CollectiveRequest& request);

}  // namespace clustersim
