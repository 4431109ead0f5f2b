#pragma once
#include "sim/collectives/collective_plan.hpp"

namespace clustersim {

CollectivePlan plan_direct(const CollectiveContext& ctx, const CollectiveRequest& request);

}  // namespace clustersim
