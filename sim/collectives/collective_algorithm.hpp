#pragma once
// Collective algorithms and their registry.
//
// The replay engine asks for an algorithm by name, or for "auto": the selector estimates, like NCCL's
// tuner, the time of every algorithm that can run the request on an idle fabric and takes the
// fastest. Asking by name for an algorithm that cannot run a request is an error that says why,
// never a silent fallback.
#include <span>
#include <string>
#include <string_view>

#include "sim/collectives/collective_plan.hpp"

namespace clustersim {

class Cluster;

using CollectivePlanner = CollectivePlan (*)(const CollectiveContext& ctx, const CollectiveRequest& request);
// Whether the algorithm implements the kind of collective.
using CollectiveSupport = bool (*)(CollectiveKind kind);
// Why this request cannot run (empty when it can): group shape, missing switch features.
using CollectiveFeasibility = std::string (*)(const CollectiveContext& ctx, const CollectiveRequest& request);

struct CollectiveAlgorithmEntry {
  const char* name;
  const char* summary;
  bool nccl;  // NCCL implements it: "auto" chooses among these only, as NCCL's tuner does
  CollectiveSupport supports;
  CollectiveFeasibility infeasible;  // nullptr: always feasible for the kinds it supports
  CollectivePlanner plan;
};

inline constexpr std::string_view kAutoAlgorithm = "auto";

std::span<const CollectiveAlgorithmEntry> collective_algorithms();
const CollectiveAlgorithmEntry* find_collective_algorithm(std::string_view name);

// Why `name` cannot run `request` (empty when it can; "auto" always can if any algorithm can).
std::string collective_infeasible(std::string_view name, const CollectiveContext& ctx,
                                  const CollectiveRequest& request);
// Plans `request` with the algorithm `name` ("auto" selects). Throws SimulationError naming the
// reason when the algorithm does not exist or cannot run the request.
CollectivePlan plan_collective(std::string_view name, const CollectiveContext& ctx, const CollectiveRequest& request);
// The feasible NCCL algorithm with the least idle-fabric time for `request`.
std::string select_collective_algorithm(const CollectiveContext& ctx, const CollectiveRequest& request);
// Time of `plan` on an idle fabric: per phase, the busiest link's bytes over its effective bandwidth,
// plus the phase latency; plus the profile's per-call latency.
double idle_fabric_time_s(const CollectiveContext& ctx, const CollectivePlan& plan);

}  // namespace clustersim
