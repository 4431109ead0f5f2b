#pragma once
// The top of the simulator: specs in, report out.
#include <map>
#include <string>

#include "sim/report/report.hpp"
#include "topologies/cluster_spec.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

struct SimulationOptions {
  std::string fidelity = "flow";                                 // a registered network backend
  std::string collective_algorithm = "auto";                     // a registered collective algorithm, or auto
  std::map<std::string, std::string> algorithm_by_communicator;  // "dp" -> "ring"
  // A network profile name or file; "auto": the shipped profile fitted on the cluster's GPU, else ideal.
  std::string network_profile = "auto";
  // Write the step's timeline (Chrome / Perfetto trace JSON) to this file; empty: none.
  std::string timeline_path;
  // Rank classes (pipeline stages) in the timeline, evenly spaced; each stands for its ranks.
  std::size_t timeline_classes = 64;
};

// Simulates one training step of `workload` on `cluster`, in a child process (SimGrid's engine
// cannot be restarted in a process). Throws SpecError for bad input (file + JSON path) and
// SimulationError when the simulation cannot finish.
Report simulate(const ClusterSpec& cluster, const WorkloadSpec& workload, const SimulationOptions& options = {});

// The same, in the calling process. Only once per process: use simulate() unless you are the child.
Report simulate_in_this_process(const ClusterSpec& cluster, const WorkloadSpec& workload,
                                const SimulationOptions& options = {});

}  // namespace clustersim
