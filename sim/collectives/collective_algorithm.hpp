#pragma once
// Collective algorithms and their registry. The replay engine asks the registry for an algorithm by
// name; asking for an algorithm that cannot run a request is an error, never a silent fallback.
#include <span>
#include <string_view>

#include "sim/collectives/collective_plan.hpp"

namespace clustersim {

class Cluster;

using CollectivePlanner = CollectivePlan (*)(const Cluster& cluster, const CollectiveRequest& request);
// Whether the algorithm implements the kind of collective.
using CollectiveSupport = bool (*)(CollectiveKind kind);

struct CollectiveAlgorithmEntry {
  const char* name;
  const char* summary;
  CollectiveSupport supports;
  CollectivePlanner plan;
};

std::span<const CollectiveAlgorithmEntry> collective_algorithms();
const CollectiveAlgorithmEntry* find_collective_algorithm(std::string_view name);

// Plans `request` with the algorithm `name`. Throws SimulationError when the algorithm does not exist
// or cannot run this kind of collective.
CollectivePlan plan_collective(std::string_view name, const Cluster& cluster, const CollectiveRequest& request);

}  // namespace clustersim
