#include "sim/api/design_sizing.hpp"

#include "sim/core/error.hpp"
#include "topologies/cluster_sizing.hpp"

namespace clustersim {

WorkloadSpec workload_at_any_size(WorkloadSpec workload) {
  if (workload.is_trace())
    throw SpecError(workload.source_file, "/trace",
                    "a replayed trace has its own ranks; --gpus sizes generated workloads");
  workload.parallelism.dp = 0;  // GPUs / (tp x pp x cp), resolved against each sized cluster
  return workload;
}

SizedDesign size_design(const ClusterSpec& cluster, std::int64_t gpus) {
  SizedCluster sized = size_cluster_to_gpus(cluster, gpus);
  return {std::move(sized.spec), std::move(sized.changes)};
}

std::string sizing_changes_text(const std::vector<std::string>& changes) {
  std::string text;
  for (const std::string& c : changes)
    text += (text.empty() ? "" : ", ") + c;
  return text;
}

}  // namespace clustersim
