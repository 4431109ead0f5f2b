#pragma once
// Generates the per-rank execution graph of transformer training from a workload spec.
#include "workloads/execution_graph.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

// `spec` must be resolved (resolve_parallelism) for `world_size` GPUs.
ExecutionGraph generate_transformer_training(const WorkloadSpec& spec, int world_size);

}  // namespace clustersim
