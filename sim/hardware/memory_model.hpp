#pragma once
// Per-GPU memory footprint of a training configuration, compared with the GPU's capacity.
#include "sim/hardware/gpu_spec.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

struct MemoryFootprint {
  double weights_bytes = 0.0;
  double gradients_bytes = 0.0;
  double optimizer_bytes = 0.0;
  double activations_bytes = 0.0;  // peak, all in-flight micro-batches
  double communication_buffers_bytes = 0.0;
  double framework_overhead_bytes = 0.0;
  double peak_bytes = 0.0;  // the sum
  double capacity_bytes = 0.0;
  bool fits = true;
};

// `spec` must have its parallelism resolved (resolve_parallelism).
MemoryFootprint estimate_memory(const WorkloadSpec& spec, const GpuSpec& gpu);

}  // namespace clustersim
