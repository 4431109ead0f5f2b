#pragma once
#include "sim/collectives/collective_plan.hpp"

namespace clustersim {

bool ring_supports(CollectiveKind kind);
CollectivePlan plan_ring(const Cluster& cluster, const CollectiveRequest& request);

}  // namespace clustersim
