// DeepEP's normal kernels (github.com/deepseek-ai/DeepEP, "Normal kernels with NVLink and RDMA
// forwarding"; DeepSeek-V3 report arXiv:2412.19437 sec. 3.2.2): the MoE dispatch and combine of
// expert parallelism across nodes in two stages that run at once, chunk by chunk:
//   1. RDMA: GPU g of node a sends everything it has for the GPUs of node b to GPU g of node b (the
//      same rail: one NIC per GPU, no traffic across rails), once per destination node;
//   2. NVLink: GPU g of node b forwards each chunk to its destination GPU of node b; a GPU's own
//      node's chunks go to their destinations over NVLink directly.
// The combine is the same traffic in reverse (all-to-all is symmetric in this model: the caller's
// bytes say which direction). For an all-to-all of S bytes per rank spread evenly over N = G M ranks
// (G per node, M nodes), per GPU:
//   RDMA out   (M-1) G S/N = (M-1)/M S                 (the direct algorithm's NIC bytes too)
//   NVLink out (G-1) S/N (own node) + (M-1)(G-1) S/N (forwarded) = (G-1)/G S
// and the two stages pipelined, t = max(RDMA bytes / B_nic, NVLink bytes / B_nvlink) + the RDMA and
// NVLink hop latencies. One phase holds both stages' flows, so the busier fabric sets the pace.
// What it changes against "direct": no flow leaves its rail (rail-optimized fat trees keep it under
// the leaf switches) and the NVLink ports carry the forwarding. DeepEP's deduplication: a token chosen
// by several experts of one node crosses RDMA once, and by several experts of one GPU reaches that GPU
// once (the sender inside the node and the forwarding GPU send it once per GPU of is_token_in_rank; the
// receiver expands it to its experts). With the request's routing (a MoE layer's dispatch or combine:
// top_k copies per token, node-limited to M nodes or not), the RDMA stage carries R / top_k of the
// caller's bytes, R the expected nodes a token reaches (workloads/expert_routing.cpp: DeepSeek-V3 on 8
// nodes 5.295 unlimited, 3.629 with M = 4), and the NVLink stage D / top_k, D the expected GPUs it
// reaches (expected_ranks_per_token: 5.295 of 8 inside one node, 6.523 of 16 on 2 nodes). Without it
// (the collective benchmarks), the caller's bytes are what crosses. Not modelled: its SM budget. The
// low-latency kernels (every copy direct, no deduplication) are deepep_low_latency_algorithm.cpp.
//
// Checked against DeepEP's published bottleneck bandwidths on H800 (NVLink ~160 GB/s, one 400 Gb/s
// CX7 per GPU), calibration/data/published/collectives.json coll-0049 .. coll-0052: intranode EP 8
// dispatch 153 GB/s (NVLink), internode EP 16-64 43-47 GB/s (RDMA); and, with the deduplication, against
// the times per call of DeepEP's V1 table (calibration/data/published/deepep_normal.json: EP 8 -11 and
// -10 %, EP 16 -19 and -20 %, EP 32 and 64 -5 to -9 %); tests/cpp/sim/deepep_algorithm_test.cpp.
#include "sim/collectives/deepep_algorithm.hpp"

#include <algorithm>
#include <cstddef>

#include "topologies/cluster.hpp"

namespace clustersim {

double expected_ranks_per_token(const ExpertRouting& routing, int nodes, int gpus_per_node) {
  // A token's M nodes hold M x G ranks of experts / (nodes x G) experts each, its top_k picked
  // uniformly among them: the count of nodes a token reaches with ranks as the units.
  const int limit = routing.max_nodes_per_token > 0 ? std::min(routing.max_nodes_per_token, nodes) : nodes;
  return expected_nodes_per_token({routing.experts, routing.top_k, limit * gpus_per_node}, nodes * gpus_per_node);
}

std::string deepep_infeasible(const CollectiveContext& ctx, const CollectiveRequest& request) {
  const auto segments = node_segments(ctx.cluster, *request.ranks);
  if (request.routing != nullptr) {
    const std::string why = expert_routing_infeasible(*request.routing, static_cast<int>(segments.size()));
    if (!why.empty()) return "model.moe.max_nodes_per_token: " + why;
  }
  for (const auto& s : segments) {
    if (s.size() != segments.front().size())
      return "the group has different numbers of GPUs on different nodes (DeepEP forwards along rails)";
  }
  // Every rank of a segment must be the same local GPU index as its peers (rail-aligned), so that the
  // RDMA stage stays on a rail.
  const int per_node = ctx.cluster.gpus_per_node();  // GPU g of node n is rank n x per_node + g
  for (std::size_t i = 0; i < segments.front().size(); ++i) {
    const int local = segments.front()[i] % per_node;
    for (const auto& s : segments)
      if (s[i] % per_node != local)
        return "the group's GPUs are not rail-aligned (GPU i of every node must have the same local index)";
  }
  return {};
}

CollectivePlan plan_deepep(const CollectiveContext& ctx, const CollectiveRequest& request) {
  CollectivePlan plan;
  const auto& ranks = *request.ranks;
  const std::size_t n = ranks.size();
  if (n <= 1) return plan;
  const auto segments = node_segments(ctx.cluster, ranks);
  // The position of each group member: node segment and index inside it (the rail).
  std::vector<std::size_t> node(n), rail(n);
  {
    std::size_t k = 0;
    for (std::size_t s = 0; s < segments.size(); ++s)
      for (std::size_t r = 0; r < segments[s].size(); ++r, ++k) {
        node[k] = s;
        rail[k] = r;
      }
  }
  // The share of a token's copies that crosses RDMA to a node it reaches (deduplicated per node) and
  // NVLink to a GPU it reaches (deduplicated per rank).
  const bool dedup = request.routing != nullptr && request.matrix == nullptr;
  const int nodes = static_cast<int>(segments.size());
  const double rdma_share = dedup ? expected_nodes_per_token(*request.routing, nodes) / request.routing->top_k : 1.0;
  const double nvlink_share =
      dedup ? expected_ranks_per_token(*request.routing, nodes, static_cast<int>(segments.front().size())) /
                  request.routing->top_k
            : 1.0;
  std::vector<Transfer> rdma, nvlink;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      const double bytes = request.matrix ? (*request.matrix)[i * n + j] : request.bytes / static_cast<double>(n);
      if (bytes <= 0.0) continue;
      if (node[i] == node[j]) {
        nvlink.push_back({ranks[i], ranks[j], bytes * nvlink_share});
        continue;
      }
      // stage 1 to the same rail of the destination node, stage 2 from there to the destination
      const int relay = segments[node[j]][rail[i]];
      rdma.push_back({ranks[i], relay, bytes * rdma_share});
      if (relay != ranks[j]) nvlink.push_back({relay, ranks[j], bytes * nvlink_share});
    }
  }
  sort_and_merge_transfers(rdma);
  sort_and_merge_transfers(nvlink);
  CollectivePhase phase;
  phase.name = segments.size() > 1 ? "RDMA + NVLink forwarding (pipelined)" : "NVLink";
  // a chunk crosses both hops one after the other: both hops' latencies
  phase.latency_s = max_hop_latency_s(ctx, rdma) + max_hop_latency_s(ctx, nvlink);
  phase.steps = (rdma.empty() ? 0 : 1) + (nvlink.empty() ? 0 : 1);
  phase.transfers = std::move(rdma);
  phase.transfers.insert(phase.transfers.end(), nvlink.begin(), nvlink.end());
  sort_and_merge_transfers(phase.transfers);
  if (request.matrix == nullptr)
    for (Transfer& t : phase.transfers)
      t.pipelined = true;
  plan.phases.push_back(std::move(phase));
  return plan;
}

}  // namespace clustersim
