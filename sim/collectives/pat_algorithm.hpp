#pragma once
#include <string>

#include "sim/collectives/collective_plan.hpp"

namespace clustersim {

// Why the request cannot run (empty when it can): PAT runs with one GPU per node (NCCL 2.23+), under a
// profile with NCCL's protocols (NCCL's tuner is what enables it).
std::string pat_infeasible(const CollectiveContext& ctx, const CollectiveRequest& request);
CollectivePlan plan_pat(const CollectiveContext& ctx, const CollectiveRequest& request);

}  // namespace clustersim
