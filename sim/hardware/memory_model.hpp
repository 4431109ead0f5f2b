#pragma once
// The memory model (workloads/memory_model.hpp) for a GPU of the catalogue: the two figures it takes
// read from the GpuSpec, and forwarding overloads for the simulator's callers.
#include <vector>

#include "sim/hardware/gpu_spec.hpp"
#include "workloads/memory_model.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

// HBM capacity, and whether the GPU has fp8 tensor cores (tensor_fp8_flops > 0).
DeviceMemory memory_device(const GpuSpec& gpu);

double cublas_workspace_bytes(const GpuSpec& gpu);
MemoryFootprint memory_at_phase(const WorkloadSpec& spec, const GpuSpec& gpu, int stage, MemoryPhase phase);
std::vector<MemoryFootprint> estimate_memory_per_stage(const WorkloadSpec& spec, const GpuSpec& gpu);
MemoryFootprint estimate_memory(const WorkloadSpec& spec, const GpuSpec& gpu);

}  // namespace clustersim
