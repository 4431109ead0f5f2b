#pragma once
// Per-GPU memory of a training configuration as the framework allocates it: named lines at the
// moment of the step when their sum peaks, compared with the GPU's capacity. Equations and sources
// in memory_model.cpp. The GPU enters through the two figures the model uses (`DeviceMemory`); the
// simulator fills them from its GpuSpec (sim/hardware/memory_model.hpp: memory_device()).
#include <cstdint>
#include <span>
#include <vector>

#include "workloads/memory_lines.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

// The moments of a step at which a stage's memory can peak:
//   loss       the last stage after its forward pass, during the loss's backward: every in-flight
//              micro-batch's activations and the loss over the vocabulary are alive
//   backward   the first layer of a backward pass: the activations are still alive and that layer's
//              gradients (or its recomputed activations) are being built
//   optimizer  the end of the backward pass and the optimizer step: every main gradient is alive, no
//              activation is
// The GPU's figures the memory model needs.
struct DeviceMemory {
  double hbm_capacity_bytes = 0.0;   // what the peak is compared with (MemoryFootprint::fits)
  bool fp8_tensor_cores = false;     // Hopper and later: cuBLAS sizes its workspaces larger (memory_model.cpp)
  double host_capacity_bytes = 0.0;  // the host memory tier per GPU (GB200 / GB300); 0: not known
};

enum class MemoryPhase : std::uint8_t { loss, backward, optimizer };
const char* to_string(MemoryPhase p);

// The memory of one GPU of a pipeline stage at one moment: the named lines (MemoryLines), their sums
// and the comparison with the GPU's capacity.
struct MemoryFootprint : MemoryLines {
  int stage = 0;                          // the pipeline stage (estimate_memory: the stage with the highest peak)
  double parameters = 0.0;                // parameters held by one GPU of the stage, before ZeRO sharding
  double micro_batches_in_flight = 0.0;   // whose activations the stage holds at its peak
  MemoryPhase phase = MemoryPhase::loss;  // when the peak is reached
  double allocated_bytes = 0.0;           // the sum of the allocated lines (weights ... workspace)
  double reserved_bytes = 0.0;            // allocated + allocator reserve (torch.cuda.max_memory_reserved)
  double peak_bytes = 0.0;                // reserved + CUDA context: the GPU memory the process uses
  double host_capacity_bytes = 0.0;  // the host tier's, for host_optimizer_bytes; 0: not known (a PCIe server's DRAM)
  bool host_fits = true;
};

// How attention is computed: the unfused kernels of Korthikanti et al. keep the a x s x s scores,
// softmax and dropout tensors for the backward pass; a fused (FlashAttention-style) kernel does not.
enum class AttentionKernel : std::uint8_t { unfused, fused };

// Stored activation bytes of one transformer layer for one micro-batch (16-bit activations), with
// `recompute` (none | selective | full) and the workload's dropout.
double layer_activation_bytes(const WorkloadSpec& spec, AttentionKernel attention, const std::string& recompute);
// The same with the workload's own recompute policy.
double layer_activation_bytes(const WorkloadSpec& spec, AttentionKernel attention);
// Micro-batches whose activations pipeline stage `stage` (0-based) holds at its peak.
double micro_batches_in_flight(const WorkloadSpec& spec, int stage);
// Parameters held by one GPU of pipeline stage `stage` (Megatron-LM's layout, before ZeRO).
double stage_parameters(const WorkloadSpec& spec, int stage);

// The framework's fixed figures (sources in memory_model.cpp): the CUDA context a process holds, and
// one cuBLAS / cuBLASLt workspace (one per handle and stream; a training step holds two, the forward
// thread's and autograd's backward thread's).
double cuda_context_bytes();
double cublas_workspace_bytes(bool fp8_tensor_cores);

// The footprint of stage `stage` at moment `phase` (the loss phase exists only on the last stage).
MemoryFootprint memory_at_phase(const WorkloadSpec& spec, const DeviceMemory& device, int stage, MemoryPhase phase);
// One footprint per pipeline stage, each at its peak phase. `spec` must have its parallelism resolved.
std::vector<MemoryFootprint> estimate_memory_per_stage(const WorkloadSpec& spec, const DeviceMemory& device);
// The footprint of the stage with the highest peak: what must fit on every GPU.
MemoryFootprint estimate_memory(const WorkloadSpec& spec, const DeviceMemory& device);

}  // namespace clustersim
