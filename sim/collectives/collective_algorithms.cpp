#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/collectives/collective_algorithm.hpp"
#include "sim/collectives/direct_algorithm.hpp"
#include "sim/collectives/halving_doubling_algorithm.hpp"
#include "sim/collectives/hierarchical_algorithm.hpp"
#include "sim/collectives/ring_algorithm.hpp"
#include "sim/collectives/tree_algorithm.hpp"
#include "sim/core/error.hpp"
#include "topologies/cluster.hpp"

namespace clustersim {

namespace {

// The algorithm's plan with its inter-node transfers striped over the GPUs' NICs (collective_plan.hpp).
CollectivePlan plan_with(const CollectiveAlgorithmEntry& a, const CollectiveContext& ctx,
                         const CollectiveRequest& request) {
  CollectivePlan plan = a.plan(ctx, request);
  for (CollectivePhase& phase : plan.phases)
    stripe_over_nics(ctx.cluster, phase.transfers);
  return plan;
}

// NCCL src/graph/tuning.cc (2.18-2.21, ncclTopoTuneModel): `if (a == NCCL_ALGO_TREE) busBw =
// std::min(busBw*.92, nChannels*perChMaxTreeBw)`; 2.8 used .9. The per-channel cap (H100: 36-41 GB/s,
// A100: 18-24 GB/s) does not bind on DGX systems, whose channels carry 12-25 GB/s each.
constexpr double kTreeTunerBandwidthFactor = 0.92;

// Plans `request` with every feasible NCCL algorithm; returns the one with the least estimated time.
std::pair<const CollectiveAlgorithmEntry*, CollectivePlan> select_and_plan(const CollectiveContext& ctx,
                                                                           const CollectiveRequest& request) {
  const double n = static_cast<double>(request.ranks->size());
  const CollectiveAlgorithmEntry* best = nullptr;
  CollectivePlan best_plan;
  double best_time = std::numeric_limits<double>::infinity();
  std::optional<double> ring_bandwidth_s;  // the registry lists the ring first
  for (const auto& a : collective_algorithms()) {
    if (!a.nccl || !collective_infeasible(a.name, ctx, request).empty()) continue;
    CollectivePlan plan = plan_with(a, ctx, request);
    const bool is_ring = std::string_view(a.name) == "ring";
    const double latency_s = idle_fabric_latency_s(ctx, plan);
    double estimate = 0.0;
    if (a.tuner_rates_like_ring && ring_bandwidth_s && n > 1) {
      // Rated with the ring's bandwidth: only its latency is needed, no routing.
      estimate = latency_s + *ring_bandwidth_s * n / (n - 1) / a.tuner_bandwidth_factor;
    } else {
      const IdleFabricTime t = idle_fabric_time_parts(ctx, plan);
      if (is_ring) ring_bandwidth_s = t.bandwidth_s;
      estimate = t.latency_s + t.bandwidth_s / a.tuner_bandwidth_factor;
    }
    if (estimate < best_time) {  // ties keep the earlier entry (registry order)
      best_time = estimate;
      best = &a;
      best_plan = std::move(plan);
    }
  }
  if (best == nullptr) throw SimulationError(std::string("no algorithm can run ") + to_string(request.kind));
  return {best, std::move(best_plan)};
}

}  // namespace

std::span<const CollectiveAlgorithmEntry> collective_algorithms() {
  static constexpr CollectiveAlgorithmEntry kAlgorithms[] = {
      {"ring", "rings over every rank (rail-aligned channels across nodes): bandwidth-optimal", true, &ring_supports,
       nullptr, &plan_ring},
      {"tree", "NCCL's double binary tree: log-depth latency, 2S per busiest port", true, &tree_supports, nullptr,
       &plan_tree, kTreeTunerBandwidthFactor, true},
      {"nvls", "NVLink SHARP: reduction inside the NVSwitch (one node)", true, &hierarchical_supports, &nvls_infeasible,
       &plan_nvls},
      {"sharp",
       "in-network reduction in the InfiniBand switches, pipelined with the intra-node stages (NCCL CollNet; NVLS "
       "inside nodes when available)",
       true, &hierarchical_supports, &sharp_infeasible, &plan_sharp},
      {"nvls_tree",
       "NVLS inside the nodes pipelined with a double binary tree per rail across them (NCCL's NVLS_TREE; no "
       "switch reduction needed)",
       true, &hierarchical_supports, &nvls_tree_infeasible, &plan_nvls_tree},
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

double idle_fabric_latency_s(const CollectiveContext& ctx, const CollectivePlan& plan) {
  double latency_s = ctx.profile.collective_latency_s.value;
  for (const auto& phase : plan.phases)
    latency_s += phase.latency_s;
  return latency_s;
}

IdleFabricTime idle_fabric_time_parts(const CollectiveContext& ctx, const CollectivePlan& plan) {
  const auto links = ctx.cluster.links();
  std::vector<double> load(links.size(), 0.0);
  // Transfers of the phase routed so far, per link: adaptive routing (fabric.routing) spreads the
  // phase's transfers over equal-cost links as the backends do when the phase starts on an idle fabric.
  std::vector<int> in_flight(links.size(), 0);
  std::vector<int> touched, route;
  IdleFabricTime t;
  t.latency_s = idle_fabric_latency_s(ctx, plan);
  std::uint64_t flow = 0;
  for (const auto& phase : plan.phases) {
    for (const Transfer& tr : phase.transfers) {
      route.clear();
      if (tr.src_gpu != tr.dst_gpu && tr.bytes > 0.0)
        ctx.cluster.route(tr.src_gpu, tr.dst_gpu, flow, route, in_flight, tr.lane);
      ++flow;
      for (int l : route) {
        double& b = load[static_cast<std::size_t>(l)];
        if (b == 0.0) touched.push_back(l);
        b += tr.bytes;
        ++in_flight[static_cast<std::size_t>(l)];
      }
    }
    double busiest = 0.0;
    for (int l : touched) {
      double& b = load[static_cast<std::size_t>(l)];
      busiest = std::max(busiest, b / ctx.profile.effective_bandwidth_Bps(links[static_cast<std::size_t>(l)]));
      b = 0.0;
      in_flight[static_cast<std::size_t>(l)] = 0;
    }
    touched.clear();
    t.bandwidth_s += busiest;
  }
  return t;
}

double idle_fabric_time_s(const CollectiveContext& ctx, const CollectivePlan& plan) {
  return idle_fabric_time_parts(ctx, plan).total_s();
}

std::string select_collective_algorithm(const CollectiveContext& ctx, const CollectiveRequest& request) {
  return select_and_plan(ctx, request).first->name;
}

CollectivePlan plan_collective(std::string_view name, const CollectiveContext& ctx, const CollectiveRequest& request) {
  if (name == kAutoAlgorithm) return select_and_plan(ctx, request).second;
  const std::string why = collective_infeasible(name, ctx, request);
  if (!why.empty()) throw SimulationError(why);
  return plan_with(*find_collective_algorithm(name), ctx, request);
}

}  // namespace clustersim
