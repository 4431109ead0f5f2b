#pragma once
// calibrate --from-trace as the front ends take it (the CLI's --from-trace/--workload pairs, --step,
// --id, --name, --fidelity; Python's calibrate_from_trace() keywords), with its defaults and checks
// written once.
#include <optional>
#include <string>
#include <vector>

#include "sim/stack_fit.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

struct StackFitRequest {
  std::vector<std::string> traces;      // Kineto traces of one step of rank 0
  std::vector<WorkloadSpec> workloads;  // the workload each trace ran, in the same order
  std::optional<std::string> step;      // "last" or a ProfilerStep number; none: last
  std::optional<std::string> id;        // the profile's id; none: StackFitOptions' ("fitted")
  std::optional<std::string> name;      // none: empty
  std::optional<std::string> fidelity;  // none: StackFitOptions' (analytical)
};

// The traced runs of a request: SpecError("from_trace") unless there is one workload per trace, and
// read_kernel_timeline's SpecError for a bad trace or step.
std::vector<TracedRun> traced_runs(const StackFitRequest& request);

// The fit's options, the request's defaults applied.
StackFitOptions stack_fit_options(const StackFitRequest& request);

}  // namespace clustersim
