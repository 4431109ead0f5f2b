#pragma once
// --set key.path=value: which spec each override belongs to.
#include <string>
#include <vector>

#include "topologies/cluster_spec.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim::cli {

struct SplitOverrides {
  Overrides cluster;
  WorkloadOverrides workload;
};

// "cluster.nodes=4" and "workload.training.micro_batch=2" go where their prefix says. Without a
// prefix, the first key decides when it belongs to one spec only ("nodes", "fabric" -> cluster;
// "model", "parallelism" -> workload); "name" is ambiguous. Throws SpecError("--set ...") otherwise.
SplitOverrides split_overrides(const std::vector<std::string>& settings);

}  // namespace clustersim::cli
