#pragma once
// DeepEP's normal (high-throughput) MoE dispatch and combine as an all-to-all algorithm: RDMA between
// the same-rail GPUs of two nodes, NVLink forwarding inside the receiving node, both stages pipelined.
// Formulas and the published figures it is checked against in deepep_algorithm.cpp.
#include <string>

#include "sim/collectives/collective_plan.hpp"

namespace clustersim {

// Expected distinct GPUs one token's experts sit on, over `nodes` nodes of `gpus_per_node` GPUs (the
// experts spread evenly): what DeepEP's NVLink stage delivers per token, once per GPU it reaches.
double expected_ranks_per_token(const ExpertRouting& routing, int nodes, int gpus_per_node);

// Why the request cannot run DeepEP's two-stage plan (empty when it can): its ranks must sit on their
// nodes in equal, rail-aligned segments.
std::string deepep_infeasible(const CollectiveContext& ctx, const CollectiveRequest& request);
CollectivePlan plan_deepep(const CollectiveContext& ctx, const CollectiveRequest& request);

}  // namespace clustersim
