#pragma once
#include "sim/collectives/collective_plan.hpp"

namespace clustersim {

bool direct_supports(CollectiveKind kind);
CollectivePlan plan_direct(const CollectiveContext& ctx, const CollectiveRequest& request);

}  // namespace clustersim
