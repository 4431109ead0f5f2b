#pragma once
// The memory of one GPU of a served replica as vLLM lays it out (ReplicaMemory, iteration_model.hpp):
// weights, peak activations, workspaces, and the KV cache in what is left. Lines and sources in
// replica_memory.cpp.
#include "sim/hardware/gpu_spec.hpp"
#include "sim/serving/replica_kernels.hpp"
#include "sim/serving/replica_layout.hpp"

namespace clustersim {

// `tp_channels`: NCCL channels of the tensor-parallel communicator (replica_links.hpp), whose buffers
// the workspace counts. Throws SpecError naming the memory lines when no KV cache is left.
ReplicaMemory replica_memory(const ReplicaConfig& replica, const ReplicaLayout& layout, const ReplicaKernels& kernels,
                             const GpuSpec& gpu, int tp_channels);

}  // namespace clustersim
