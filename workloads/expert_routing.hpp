#pragma once
// How many nodes one token's routed experts reach (model.moe.max_nodes_per_token): what DeepEP's
// deduplicated RDMA dispatch sends across nodes, once per node a token reaches. Formulas and sources in
// expert_routing.cpp.

#include <string>

namespace clustersim {

// The routing a MoE layer's dispatch carries to the collective algorithms.
struct ExpertRouting {
  int experts = 0;              // routed experts of the layer; 0: no MoE routing
  int top_k = 0;                // routed experts per token
  int max_nodes_per_token = 0;  // DeepSeek-V3's node-limited routing (M); 0: unlimited
};

// Expected distinct nodes one token's top_k experts sit on, the experts spread evenly over `nodes`
// nodes (experts / nodes each) and picked uniformly, at most max_nodes_per_token of them (0: any).
double expected_nodes_per_token(const ExpertRouting& routing, int nodes);

// Why `routing` cannot route over `nodes` nodes (empty when it can): the max_nodes_per_token nodes
// hold fewer than top_k experts.
std::string expert_routing_infeasible(const ExpertRouting& routing, int nodes);

}  // namespace clustersim
