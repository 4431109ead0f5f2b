#pragma once
// The top of the simulator: specs in, report out.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/hardware/gpu_spec.hpp"
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
  // Runs the step with this stack profile instead of the one training.stack names (its defaults are
  // not applied: they are the workload's keys). calibrate --from-trace times its fit with it.
  std::optional<StackProfile> stack;
  // Time to train this many tokens (sim/training_run, docs/time_to_train.md): the report's
  // time_to_train section. None: no section. Checked by sim/api/simulation_request.
  std::optional<double> train_tokens;
  std::optional<double> checkpoint_interval_s;  // training time between checkpoints; none: Young/Daly
  int time_to_train_runs = 1000;                // Monte Carlo runs
  std::uint64_t time_to_train_seed = 1;
  // A PyTorch trace is replayed with its measured host: no op starts before its rank's CPU issued it
  // (workloads/measured_host.hpp, docs/traces.md "A host-bound world"). Other workloads refuse it.
  bool measured_host = false;
  // One simulated transfer per class of identical transfers where the replay can (ReplayOptions::
  // traffic_classes, docs/performance.md); false: every transfer (--exhaustive).
  bool traffic_classes = true;
  // Traffic classes under adaptive routing too (ReplayOptions::adaptive_traffic_classes: checked at
  // every launch, exact; docs/performance.md); off: those routings replay every transfer.
  bool adaptive_traffic_classes = true;
};

// The cluster's GPU as simulate() times its kernels: the catalogue entry (or the inline spec) with
// its compiled-in calibration profile applied.
GpuSpec simulated_gpu(const ClusterSpec& cluster);

// Simulates one training step of `workload` on `cluster`, in a child process (SimGrid's engine
// cannot be restarted in a process). Throws SpecError for bad input (file + JSON path) and
// SimulationError when the simulation cannot finish.
Report simulate(const ClusterSpec& cluster, const WorkloadSpec& workload, const SimulationOptions& options = {});

// One of several simulations to run: its specs (which outlive the call).
struct SimulationCase {
  const ClusterSpec* cluster = nullptr;
  const WorkloadSpec* workload = nullptr;
};
// Its outcome: the report, or the error simulate() would have thrown.
struct SimulationOutcome {
  std::optional<Report> report;
  std::exception_ptr error;
};

// simulate() of every case, at most `jobs` at once (each in its own child process, all started from
// the calling thread: sim/core/child_process); outcome i is case i's.
std::vector<SimulationOutcome> simulate_all(const std::vector<SimulationCase>& cases, const SimulationOptions& options,
                                            std::size_t jobs);

// The same, in the calling process. Only once per process: use simulate() unless you are the child.
Report simulate_in_this_process(const ClusterSpec& cluster, const WorkloadSpec& workload,
                                const SimulationOptions& options = {});

}  // namespace clustersim
