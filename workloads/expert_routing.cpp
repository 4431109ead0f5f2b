// The nodes a token's experts reach (expert_routing.hpp).
//
// Node-limited routing (DeepSeek-V3, arXiv:2412.19437 sec. 2.1.2 "Node-Limited Routing": each token is
// sent to at most M nodes, chosen by the sums of the highest K_r / M affinities of the experts on each
// node; DeepSeek-V3 runs M = 4 of its 8 EP nodes, top-8 of 256 experts): under uniform affinities, the
// M nodes are any M of the n, and the token's top_k experts any top_k of the M x g experts they hold
// (g = experts / n per node). A given one of those M nodes is missed with probability
//   P_miss = C(g (M - 1), k) / C(g M, k) = prod_{i < k} (g (M - 1) - i) / (g M - i),
// so a token reaches R = M (1 - P_miss) nodes on average; unlimited routing is M = n. Hand-worked:
// 4 experts on 2 nodes, top-2: of the 6 pairs, 2 sit on one node and 4 on both, R = (2 + 8) / 6 = 5/3
// = 2 (1 - (2 / 4)(1 / 3)). DeepSeek-V3 (g 32, k 8): M = 4 gives R = 3.629, unlimited (n = 8) 5.295.
// DeepEP's dispatch sends a token over RDMA once per remote node it reaches (its deduplication, the
// reason for the limit; DeepEP README "Normal kernels"): a rank's RDMA bytes are R / top_k of the
// token copies it routes (each node, its own included, is reached with probability R / n).
#include "workloads/expert_routing.hpp"

#include <algorithm>

namespace clustersim {

namespace {
int reachable_nodes(const ExpertRouting& routing, int nodes) {
  return routing.max_nodes_per_token > 0 ? std::min(routing.max_nodes_per_token, nodes) : nodes;
}
}  // namespace

double expected_nodes_per_token(const ExpertRouting& routing, int nodes) {
  if (nodes <= 0 || routing.experts <= 0 || routing.top_k <= 0) return 0.0;
  const int m = reachable_nodes(routing, nodes);
  const double per_node = static_cast<double>(routing.experts) / nodes;
  double miss = 1.0;
  for (int i = 0; i < routing.top_k && miss > 0.0; ++i)  // fewer than top_k experts held: never missed
    miss = per_node * m - i > 0.0 ? miss * std::max(0.0, per_node * (m - 1) - i) / (per_node * m - i) : 0.0;
  return m * (1.0 - miss);
}

std::string expert_routing_infeasible(const ExpertRouting& routing, int nodes) {
  if (nodes <= 0 || routing.experts <= 0) return {};
  const int m = reachable_nodes(routing, nodes);
  const double held = static_cast<double>(routing.experts) / nodes * m;
  if (held >= routing.top_k) return {};
  return "its " + std::to_string(m) + " node(s) of " + std::to_string(nodes) + " hold " +
         std::to_string(static_cast<long long>(held)) + " experts, fewer than top_k " + std::to_string(routing.top_k);
}

}  // namespace clustersim
