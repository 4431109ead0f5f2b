#pragma once
// A software-stack profile measured from PyTorch profiler traces of the user's own stack
// (`clustersim calibrate --from-trace`): the generated step of each traced configuration is timed by
// the model and compared with the trace per kernel class, and what the kernel model cannot see (host
// issue cost, overlaps, fixed per-step costs) is read from the trace's timeline. The method is written
// at the top of stack_fit.cpp and in docs/traces.md.
#include <span>
#include <string>
#include <vector>

#include "topologies/cluster_spec.hpp"
#include "workloads/kernel_timeline.hpp"
#include "workloads/software_stack.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

// One measured configuration: the trace of one step of rank 0 and the workload spec it ran.
struct TracedRun {
  KernelTimeline trace;
  WorkloadSpec workload;
};

struct StackFitOptions {
  std::string id = "fitted";  // the profile's id and name
  std::string name;
  std::string fidelity = "analytical";  // network backend of the simulations that fit the fixed cost
};

struct KernelClassFit {
  KernelClass kernel = KernelClass::gemm;
  std::size_t trace_kernels = 0, model_ops = 0;  // over every run (model: rank 0's class)
  double measured_s = 0.0, modelled_s = 0.0;     // summed GPU time; modelled by the kernel model alone
  bool fitted = false;                           // both sides have time: scale = measured / modelled
  double scale = 1.0;
  double residual = 0.0;  // the largest |per-run ratio / pooled ratio - 1|; 0 with one run
};

struct RunFit {
  std::string trace;  // file
  std::string step;   // "ProfilerStep#6", or empty (the whole trace)
  std::size_t compute_kernels = 0, communication_kernels = 0, memcpy_events = 0;
  std::size_t model_compute_ops = 0, model_ops = 0;  // rank 0's class of the generated step
  std::size_t launches = 0, starved = 0;             // kernels with a CPU launch; those the GPU waited for
  double launch_gap_s = 0.0;                         // median CPU time between consecutive launches
  double communication_s = 0.0, communication_overlapped_s = 0.0;  // NCCL kernel time; concurrent with compute
  double measured_step_s = 0.0;
  double builtin_step_s = 0.0;  // simulated with the workload's own stack
  double fitted_step_s = 0.0;   // simulated with the fitted profile (fixed cost included)
};

struct StackFit {
  StackProfile profile;  // the workload's stack with the fitted values and their sources
  std::vector<KernelClassFit> classes;
  std::vector<RunFit> runs;
  double host_op_s = 0.0;  // per op of the generated graph
  double step_fixed_s = 0.0;
  bool communication_seen = false;   // some trace has NCCL kernels (the overlap was measured)
  double overlapped_fraction = 0.0;  // of their time, concurrent with compute kernels on other streams
};

// Fits a stack profile to `runs` on `cluster` (the cluster the traces were recorded on). Throws
// SpecError naming a trace whose kernels cannot be of its workload (compute kernel counts differing
// more than tenfold from the generated step's ops) or that has no compute kernel.
StackFit fit_stack_from_traces(const ClusterSpec& cluster, std::span<const TracedRun> runs,
                               const StackFitOptions& options = {});

// The fit as JSON text (per kernel class and per trace; the CLI's --json and the Python binding).
std::string stack_fit_to_json(const StackFit& fit);

}  // namespace clustersim
