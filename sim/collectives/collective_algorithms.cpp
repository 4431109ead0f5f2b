#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>

#include "sim/collectives/collective_algorithm.hpp"
#include "sim/collectives/direct_algorithm.hpp"
#include "sim/collectives/halving_doubling_algorithm.hpp"
#include "sim/collectives/hierarchical_algorithm.hpp"
#include "sim/collectives/ring_algorithm.hpp"
#include "sim/collectives/tree_algorithm.hpp"
#include "sim/core/error.hpp"
#include "topologies/cluster.hpp"

namespace clustersim {

std::span<const CollectiveAlgorithmEntry> collective_algorithms() {
  static constexpr CollectiveAlgorithmEntry kAlgorithms[] = {
      {"ring", "rings over every rank (rail-aligned channels across nodes): bandwidth-optimal", true, &ring_supports,
       nullptr, &plan_ring},
      {"tree", "NCCL's double binary tree: log-depth latency, 2S per busiest port", true, &tree_supports, nullptr,
       &plan_tree},
      {"nvls", "NVLink SHARP: reduction inside the NVSwitch (one node)", true, &hierarchical_supports, &nvls_infeasible,
       &plan_nvls},
      {"sharp", "in-network reduction in the InfiniBand switches (NCCL CollNet; NVLS inside nodes when available)",
       true, &hierarchical_supports, &sharp_infeasible, &plan_sharp},
      {"direct", "every pair at once (all-to-all, all-to-allv)", true, &direct_supports, nullptr, &plan_direct},
      {"halving_doubling", "recursive halving then doubling (MPI, Gloo): log2(N) steps, power-of-two groups", false,
       &halving_doubling_supports, &halving_doubling_infeasible, &plan_halving_doubling},
      {"hierarchical", "intra-node reduce-scatter, inter-node ring per rail, intra-node all-gather (Horovod)", false,
       &hierarchical_supports, &hierarchical_infeasible, &plan_hierarchical},
  };
  return kAlgorithms;
}

const CollectiveAlgorithmEntry* find_collective_algorithm(std::string_view name) {
  for (const auto& a : collective_algorithms()) {
    if (name == a.name) return &a;
  }
  return nullptr;
}

std::string collective_infeasible(std::string_view name, const CollectiveContext& ctx,
                                  const CollectiveRequest& request) {
  if (name == kAutoAlgorithm) {
    for (const auto& a : collective_algorithms())
      if (a.nccl && collective_infeasible(a.name, ctx, request).empty()) return {};
    return std::string("no algorithm can run ") + to_string(request.kind);
  }
  const CollectiveAlgorithmEntry* a = find_collective_algorithm(name);
  if (a == nullptr) {
    std::string known;
    for (const auto& e : collective_algorithms())
      known += std::string(known.empty() ? "" : ", ") + e.name;
    return "unknown collective algorithm '" + std::string(name) + "' (known: auto, " + known + ")";
  }
  if (!a->supports(request.kind))
    return "the " + std::string(name) + " algorithm cannot run " + to_string(request.kind);
  if (request.matrix != nullptr && request.kind != CollectiveKind::all_to_all)
    return "per-pair sizes are only meaningful for all_to_all";
  if (a->infeasible != nullptr) {
    std::string why = a->infeasible(ctx, request);
    if (!why.empty())
      return "the " + std::string(name) + " algorithm cannot run this " + to_string(request.kind) + ": " + why;
  }
  return {};
}

double idle_fabric_time_s(const CollectiveContext& ctx, const CollectivePlan& plan) {
  const auto links = ctx.cluster.links();
  std::unordered_map<int, double> load;
  std::vector<int> route;
  double t = ctx.profile.collective_latency_s.value;
  std::uint64_t flow = 0;
  for (const auto& phase : plan.phases) {
    load.clear();
    for (const Transfer& tr : phase.transfers) {
      route.clear();
      ctx.cluster.route(tr.src_gpu, tr.dst_gpu, flow++, route);
      for (int l : route)
        load[l] += tr.bytes;
    }
    double busiest = 0.0;
    for (const auto& [l, bytes] : load)
      busiest = std::max(busiest, bytes / ctx.profile.effective_bandwidth_Bps(links[static_cast<std::size_t>(l)]));
    t += busiest + phase.latency_s;
  }
  return t;
}

std::string select_collective_algorithm(const CollectiveContext& ctx, const CollectiveRequest& request) {
  std::string best;
  double best_time = std::numeric_limits<double>::infinity();
  for (const auto& a : collective_algorithms()) {
    if (!a.nccl || !collective_infeasible(a.name, ctx, request).empty()) continue;
    const double t = idle_fabric_time_s(ctx, a.plan(ctx, request));
    if (t < best_time) {  // ties keep the earlier entry (registry order)
      best_time = t;
      best = a.name;
    }
  }
  if (best.empty()) throw SimulationError(std::string("no algorithm can run ") + to_string(request.kind));
  return best;
}

CollectivePlan plan_collective(std::string_view name, const CollectiveContext& ctx, const CollectiveRequest& request) {
  if (name == kAutoAlgorithm) return plan_collective(select_collective_algorithm(ctx, request), ctx, request);
  const std::string why = collective_infeasible(name, ctx, request);
  if (!why.empty()) throw SimulationError(why);
  return find_collective_algorithm(name)->plan(ctx, request);
}

}  // namespace clustersim
