#pragma once
// Generates the per-rank execution graph of transformer training from a workload spec.
#include "workloads/execution_graph.hpp"
#include "workloads/software_stack.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

// `spec` must be resolved (resolve_parallelism) for `world_size` GPUs.
// The step as the workload's stack (training.stack) runs it.
ExecutionGraph generate_transformer_training(const WorkloadSpec& spec, int world_size);
// The step as `stack` runs it, whatever training.stack says (comparing stacks on one workload).
ExecutionGraph generate_transformer_training(const WorkloadSpec& spec, int world_size, const StackProfile& stack);

}  // namespace clustersim
