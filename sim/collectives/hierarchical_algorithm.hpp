#pragma once
#include <string>

#include "sim/collectives/collective_plan.hpp"

namespace clustersim {

bool hierarchical_supports(CollectiveKind kind);
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

// NVLS: all-reduce inside one NVSwitch domain with the reduction done by the switch.
std::string nvls_infeasible(const CollectiveContext& ctx, const CollectiveRequest& request);
CollectivePlan plan_nvls(const CollectiveContext& ctx, const CollectiveRequest& request);

}  // namespace clustersim
