#pragma once
#include <string>

#include "sim/collectives/collective_plan.hpp"

namespace clustersim {

// Why the request cannot run hierarchically (empty when it can).
std::string hierarchical_infeasible(const CollectiveContext& ctx, const CollectiveRequest& request);
CollectivePlan plan_hierarchical(const CollectiveContext& ctx, const CollectiveRequest& request);

// In-network reduction: the hierarchical all-reduce whose intra-node phases use NVLink SHARP (NVLS)
// when the NVSwitch supports it and whose inter-node phase reduces in the InfiniBand switches (SHARP).
std::string sharp_infeasible(const CollectiveContext& ctx, const CollectiveRequest& request);
CollectivePlan plan_sharp(const CollectiveContext& ctx, const CollectiveRequest& request);

// NVLS_TREE: NVLS inside the nodes pipelined with a double binary tree per rail across them (no switch
// reduction needed): NCCL's multi-node all-reduce on NVLS nodes.
std::string nvls_tree_infeasible(const CollectiveContext& ctx, const CollectiveRequest& request);
CollectivePlan plan_nvls_tree(const CollectiveContext& ctx, const CollectiveRequest& request);

// NVLS: all-reduce, all-gather and reduce-scatter inside one NVSwitch domain with the reduction (or
// the multicast) done by the switch.
// NCCL's tuner rating of NVLS's bandwidth relative to the ring's (algorithm bandwidth), for the
// selector: (N-1)^2 / (N (N+1)) for all-gather and reduce-scatter; 0 (rate the plan itself) otherwise.
double nvls_tuner_rating(CollectiveKind kind, int n);
std::string nvls_infeasible(const CollectiveContext& ctx, const CollectiveRequest& request);
CollectivePlan plan_nvls(const CollectiveContext& ctx, const CollectiveRequest& request);

}  // namespace clustersim
