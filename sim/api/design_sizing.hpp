#pragma once
// One design at a GPU count (`compare --gpus N`, Python `compare(..., gpus=N)`): the cluster sized by
// its own rules (topologies/cluster_sizing) and the workload's data-parallel size left to it.
#include <cstdint>
#include <string>
#include <vector>

#include "topologies/cluster_spec.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

// Throws SpecError for a workload --gpus cannot size (a replayed trace has its own ranks).
WorkloadSpec workload_at_any_size(WorkloadSpec workload);

struct SizedDesign {
  ClusterSpec cluster;
  std::vector<std::string> changes;  // what sizing changed ("nodes 32 -> 128", ...)
};

// Throws SpecError naming why the design cannot reach `gpus` (size_cluster_to_gpus).
SizedDesign size_design(const ClusterSpec& cluster, std::int64_t gpus);

// "nodes 32 -> 128, fabric.spines 7 -> 21".
std::string sizing_changes_text(const std::vector<std::string>& changes);

}  // namespace clustersim
