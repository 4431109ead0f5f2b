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

// The most GPUs, in whole steps of the workload's model-parallel size (tp x pp x cp), that the
// design holds (grown by size_design) for a capital cost of at most `budget_usd` (the cost model's
// capex: GPU servers, NICs, switches, cables, optics, cost.other_capex_usd). Throws SpecError when not
// even one step fits the budget, naming its capex. The changes end with "capex N USD".
struct BudgetSizedDesign {
  SizedDesign design;
  std::int64_t gpus = 0;
  double capex_usd = 0.0;
};
BudgetSizedDesign size_design_to_budget(const ClusterSpec& cluster, const WorkloadSpec& workload, double budget_usd);

// "nodes 32 -> 128, fabric.spines 7 -> 21".
std::string sizing_changes_text(const std::vector<std::string>& changes);

}  // namespace clustersim
