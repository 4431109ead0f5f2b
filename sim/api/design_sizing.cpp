#include "sim/api/design_sizing.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/cost/cost_model.hpp"
#include "sim/simulate.hpp"
#include "topologies/cluster.hpp"
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

BudgetSizedDesign size_design_to_budget(const ClusterSpec& cluster, const WorkloadSpec& workload, double budget_usd) {
  if (!(budget_usd > 0.0) || !std::isfinite(budget_usd))
    throw SpecError("--budget-usd", "",
                    "expected a capital budget in US dollars > 0, got " + std::to_string(budget_usd));
  // The candidate sizes: dp model replicas of tp x pp x cp GPUs, dp dividing the micro-batches of a step
  // (global_batch / micro_batch), the GPUs whole NVLink domains (or nodes).
  const ParallelismSpec& p = workload.parallelism;
  const std::int64_t replica = std::int64_t{p.tp} * p.pp * p.cp;
  const std::int64_t micro_batches = workload.training.global_batch / std::max(workload.training.micro_batch, 1);
  constexpr std::int64_t kMaxGpus = std::int64_t{1} << 22;
  std::vector<std::int64_t> sizes;
  for (std::int64_t dp = 1; dp <= micro_batches && dp * replica <= kMaxGpus; ++dp)
    if (micro_batches % dp == 0 && (dp * replica) % cluster.domain_gpus() == 0) sizes.push_back(dp * replica);
  if (sizes.empty())
    throw SpecError(workload.source_file, "/parallelism",
                    "no data-parallel size dividing the " + std::to_string(micro_batches) +
                        " micro-batches of a step makes whole " + std::to_string(cluster.domain_gpus()) +
                        "-GPU domains of " + std::to_string(replica) + "-GPU replicas");
  const GpuSpec gpu = simulated_gpu(cluster);
  auto at = [&](std::int64_t gpus) {
    BudgetSizedDesign b{size_design(cluster, gpus), gpus, 0.0};
    b.capex_usd = design_capex_usd(Cluster::build(b.design.cluster), gpu);
    return b;
  };
  // Capex grows with the GPUs: bisect over the candidate sizes for the largest within the budget; a
  // size the design cannot grow to counts as over it.
  std::optional<BudgetSizedDesign> best;
  std::string smallest_refusal;
  std::size_t lo = 0;
  std::size_t hi = sizes.size();  // sizes[hi] and above: over the budget or out of reach
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    try {
      BudgetSizedDesign b = at(sizes[mid]);
      if (b.capex_usd <= budget_usd) {
        best = std::move(b);
        lo = mid + 1;
        continue;
      }
      if (mid == 0) smallest_refusal = "costs " + std::to_string(b.capex_usd) + " USD";
    } catch (const SpecError& e) {
      if (mid == 0) smallest_refusal = e.what();
    }
    hi = mid;
  }
  if (!best)
    throw SpecError(
        "--budget-usd", "",
        "the smallest " + cluster.name + " for this workload, " + std::to_string(sizes.front()) + " GPUs, " +
            (smallest_refusal.empty() ? "is out of reach" : smallest_refusal) +
            (smallest_refusal.rfind("costs", 0) == 0 ? ", above the budget of " + std::to_string(budget_usd) + " USD"
                                                     : ""));
  best->design.changes.push_back("capex " + std::to_string(static_cast<long long>(best->capex_usd)) + " USD");
  return *std::move(best);
}

std::string sizing_changes_text(const std::vector<std::string>& changes) {
  std::string text;
  for (const std::string& c : changes)
    text += (text.empty() ? "" : ", ") + c;
  return text;
}

}  // namespace clustersim
