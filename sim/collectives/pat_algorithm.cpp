// NCCL's PAT (Parallel Aggregated Trees, NCCL 2.23 onwards): all-gather and reduce-scatter in
// log-many steps when every rank of the group is on its own node (NCCL enables it only then:
// src/graph/tuning.cc, ncclPatEnable, `nNodes != nRanks` disables it).
//
// Its traffic is that of a Bruck all-gather: in step k = 0 .. ceil(log2 N) - 1 every rank sends
// min(2^k, N - 2^k) blocks of S/N to the rank 2^k places before it (reduce-scatter: the same steps
// in reverse, data flowing the other way), so each rank sends (N-1)/N S in all, as a ring does, in
// ceil(log2 N) steps instead of N-1. Each step is a phase paying its hop latency; NCCL's latency
// model of PAT (8 us + log2(nodes) x the tree's network step / 3.5 + 2.8 us x ranks) is added by the
// selector (nccl_protocol.hpp), and NCCL's tuner rates PAT's bandwidth at 0.75 of the ring's (`busBw
// *= .75`), the entry's tuner factor.
#include "sim/collectives/pat_algorithm.hpp"

#include <algorithm>

#include "topologies/cluster.hpp"

namespace clustersim {

std::string pat_infeasible(const CollectiveContext& ctx, const CollectiveRequest& request) {
  if (!ctx.profile.nccl_protocols) return "PAT is part of NCCL's protocol model (a profile with nccl_protocols)";
  const auto segments = node_segments(ctx.cluster, *request.ranks);
  if (segments.size() != request.ranks->size())
    return "PAT runs with one GPU per node, this group has " + std::to_string(request.ranks->size()) + " ranks on " +
           std::to_string(segments.size()) + " nodes";
  return {};
}

CollectivePlan plan_pat(const CollectiveContext& ctx, const CollectiveRequest& request) {
  CollectivePlan plan;
  const auto& ranks = *request.ranks;
  const std::size_t n = ranks.size();
  if (n <= 1 || request.bytes <= 0.0) return plan;
  const double block = request.bytes / static_cast<double>(n);
  for (std::size_t distance = 1; distance < n; distance *= 2) {
    CollectivePhase phase;
    phase.name = request.kind == CollectiveKind::all_gather ? "PAT all-gather step" : "PAT reduce-scatter step";
    const double bytes = static_cast<double>(std::min(distance, n - distance)) * block;
    for (std::size_t i = 0; i < n; ++i) {
      const int a = ranks[i], b = ranks[(i + n - distance) % n];
      if (request.kind == CollectiveKind::all_gather)
        phase.transfers.push_back(Transfer{a, b, bytes});
      else
        phase.transfers.push_back(Transfer{b, a, bytes});
    }
    sort_and_merge_transfers(phase.transfers);
    phase.steps = 1;
    phase.latency_s = max_hop_latency_s(ctx, phase.transfers);
    plan.phases.push_back(std::move(phase));
  }
  if (request.kind == CollectiveKind::reduce_scatter) std::reverse(plan.phases.begin(), plan.phases.end());
  return plan;
}

}  // namespace clustersim
