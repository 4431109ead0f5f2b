#include <string>

#include "sim/collectives/collective_algorithm.hpp"
#include "sim/collectives/ring_algorithm.hpp"
#include "sim/core/error.hpp"

namespace clustersim {

std::span<const CollectiveAlgorithmEntry> collective_algorithms() {
  static constexpr CollectiveAlgorithmEntry kAlgorithms[] = {
      {"ring", "NCCL ring: 2(N-1) steps for all_reduce, N-1 for all_gather and reduce_scatter", &ring_supports,
       &plan_ring},
  };
  return kAlgorithms;
}

const CollectiveAlgorithmEntry* find_collective_algorithm(std::string_view name) {
  for (const auto& a : collective_algorithms()) {
    if (name == a.name) return &a;
  }
  return nullptr;
}

CollectivePlan plan_collective(std::string_view name, const Cluster& cluster, const CollectiveRequest& request) {
  const CollectiveAlgorithmEntry* algorithm = find_collective_algorithm(name);
  if (algorithm == nullptr) throw SimulationError("unknown collective algorithm '" + std::string(name) + "'");
  if (!algorithm->supports(request.kind))
    throw SimulationError("the " + std::string(name) + " algorithm cannot run " + to_string(request.kind));
  return algorithm->plan(cluster, request);
}

}  // namespace clustersim
