#include "sim/hardware/memory_model.hpp"

#include "sim/hardware/host_memory_tier.hpp"

namespace clustersim {

DeviceMemory memory_device(const GpuSpec& gpu) {
  return {gpu.hbm_capacity_bytes, gpu.tensor_fp8_flops > 0, host_memory_tier(gpu).capacity_bytes};
}

double cublas_workspace_bytes(const GpuSpec& gpu) {
  return cublas_workspace_bytes(gpu.tensor_fp8_flops > 0);
}

MemoryFootprint memory_at_phase(const WorkloadSpec& spec, const GpuSpec& gpu, int stage, MemoryPhase phase) {
  return memory_at_phase(spec, memory_device(gpu), stage, phase);
}

std::vector<MemoryFootprint> estimate_memory_per_stage(const WorkloadSpec& spec, const GpuSpec& gpu) {
  return estimate_memory_per_stage(spec, memory_device(gpu));
}

MemoryFootprint estimate_memory(const WorkloadSpec& spec, const GpuSpec& gpu) {
  return estimate_memory(spec, memory_device(gpu));
}

}  // namespace clustersim
