#pragma once
// Whether a GPU runs a workload's training precision and fp8 recipe on its tensor cores.
#include "sim/hardware/gpu_spec.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

// fp8 training needs fp8 tensor cores (Hopper, Ada, Blackwell): Transformer Engine never runs fp8
// GEMMs on the CUDA cores. The recipes mxfp8 and nvfp4 need block-scaled tensor cores (Blackwell).
// Throws SpecError at /training/precision or /training/fp8_recipe, naming the GPU and the values it
// allows. Other precisions are accepted (without a tensor path they run on the CUDA cores).
void check_precision_support(const WorkloadSpec& spec, const GpuSpec& gpu);

}  // namespace clustersim
