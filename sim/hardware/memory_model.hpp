#pragma once
// Per-GPU memory footprint of a training configuration, compared with the GPU's capacity. Equations
// and sources in memory_model.cpp.
#include <cstdint>
#include <vector>

#include "sim/hardware/gpu_spec.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

struct MemoryFootprint {
  int stage = 0;                         // the pipeline stage (estimate_memory: the stage with the highest peak)
  double parameters = 0.0;               // parameters held by one GPU of the stage, before ZeRO sharding
  double micro_batches_in_flight = 0.0;  // whose activations the stage holds at its peak
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

// How attention is computed: the unfused kernels of Korthikanti et al. keep the a x s x s scores,
// softmax and dropout tensors for the backward pass; a fused (FlashAttention-style) kernel does not.
// The generator runs fused attention, so the footprint uses `fused`.
enum class AttentionKernel : std::uint8_t { unfused, fused };

// Stored activation bytes of one transformer layer for one micro-batch (16-bit activations).
double layer_activation_bytes(const WorkloadSpec& spec, AttentionKernel attention);
// Micro-batches whose activations pipeline stage `stage` (0-based) holds at its peak.
double micro_batches_in_flight(const WorkloadSpec& spec, int stage);
// Parameters held by one GPU of pipeline stage `stage` (Megatron-LM's layout, before ZeRO).
double stage_parameters(const WorkloadSpec& spec, int stage);

// One footprint per pipeline stage. `spec` must have its parallelism resolved (resolve_parallelism).
std::vector<MemoryFootprint> estimate_memory_per_stage(const WorkloadSpec& spec, const GpuSpec& gpu);
// The footprint of the stage with the highest peak: what must fit on every GPU.
MemoryFootprint estimate_memory(const WorkloadSpec& spec, const GpuSpec& gpu);

}  // namespace clustersim
