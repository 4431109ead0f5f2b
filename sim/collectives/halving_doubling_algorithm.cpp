// Recursive halving-doubling (Rabenseifner's all-reduce; Thakur, Rabenseifner, Gropp 2005).
//
// Reduce-scatter by recursive halving: in step k = 1..log2 N each rank exchanges S/2^k bytes with the
// partner whose index differs in bit (log2 N - k), keeping the half it is responsible for. The
// all-gather mirrors it by recursive doubling. Each step depends on the previous one, so each is
// its own phase. On an idle fabric of bandwidth B and per-step latency a:
//     all_reduce:     t = 2 (N-1)/N * S/B + 2 log2(N) a
//     reduce_scatter: t = (N-1)/N * S/B + log2(N) a, all_gather likewise.
// N must be a power of two.
#include "sim/collectives/halving_doubling_algorithm.hpp"

#include "topologies/cluster.hpp"

namespace clustersim {
namespace {

bool power_of_two(std::size_t n) {
  return n > 0 && (n & (n - 1)) == 0;
}

void add_exchange_phase(const CollectiveContext& ctx, const std::vector<int>& ranks, std::size_t distance, double bytes,
                        const char* name, CollectivePlan& plan) {
  CollectivePhase phase;
  phase.name = std::string(name) + " (distance " + std::to_string(distance) + ")";
  for (std::size_t i = 0; i < ranks.size(); ++i)
    phase.transfers.push_back({ranks[i], ranks[i ^ distance], bytes});
  sort_and_merge_transfers(phase.transfers);
  phase.steps = 1;
  phase.latency_s = max_hop_latency_s(ctx, phase.transfers);
  plan.phases.push_back(std::move(phase));
}

}  // namespace

std::string halving_doubling_infeasible(const CollectiveContext&, const CollectiveRequest& request) {
  if (power_of_two(request.ranks->size())) return {};
  return "halving_doubling needs a power-of-two group, this one has " + std::to_string(request.ranks->size()) +
         " ranks";
}

CollectivePlan plan_halving_doubling(const CollectiveContext& ctx, const CollectiveRequest& request) {
  CollectivePlan plan;
  const auto& ranks = *request.ranks;
  const std::size_t n = ranks.size();
  if (n <= 1 || request.bytes <= 0.0) return plan;
  const bool reduce = request.kind != CollectiveKind::all_gather;
  const bool gather = request.kind != CollectiveKind::reduce_scatter;
  if (reduce) {
    double bytes = request.bytes;
    for (std::size_t distance = n / 2; distance >= 1; distance /= 2) {
      bytes /= 2;
      add_exchange_phase(ctx, ranks, distance, bytes, "reduce-scatter halving", plan);
    }
  }
  if (gather) {
    double bytes = request.bytes / static_cast<double>(n);
    for (std::size_t distance = 1; distance < n; distance *= 2) {
      add_exchange_phase(ctx, ranks, distance, bytes, "all-gather doubling", plan);
      bytes *= 2;
    }
  }
  return plan;
}

}  // namespace clustersim
