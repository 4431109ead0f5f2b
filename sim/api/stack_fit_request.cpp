#include "sim/api/stack_fit_request.hpp"

#include <cstddef>

#include "sim/core/error.hpp"

namespace clustersim {

std::vector<TracedRun> traced_runs(const StackFitRequest& request) {
  if (request.traces.size() != request.workloads.size())
    throw SpecError("from_trace", "",
                    "one workload per trace: " + std::to_string(request.traces.size()) + " traces, " +
                        std::to_string(request.workloads.size()) + " workloads");
  const std::string step = request.step.value_or("last");  // checked by read_kernel_timeline
  std::vector<TracedRun> runs;
  for (std::size_t i = 0; i < request.traces.size(); ++i)
    runs.push_back({read_kernel_timeline(request.traces[i], step), request.workloads[i]});
  return runs;
}

StackFitOptions stack_fit_options(const StackFitRequest& request) {
  StackFitOptions options;
  options.id = request.id.value_or(options.id);
  options.name = request.name.value_or("");
  options.fidelity = request.fidelity.value_or(options.fidelity);
  return options;
}

}  // namespace clustersim
