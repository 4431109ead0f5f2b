#pragma once
// The named lines of one GPU's memory at its peak, as the framework allocates and holds them, and the
// GPU's capacity they are compared with: declared once here, carried by the memory model's footprint
// (memory_model.hpp: MemoryFootprint) and by the report's memory section (sim/report/report.hpp:
// MemoryStats) under the same names. Equations and sources in memory_model.cpp.

namespace clustersim {

struct MemoryLines {
  // Allocated through the framework's allocator at the peak (what torch.cuda.max_memory_allocated counts):
  double weights_bytes = 0.0;
  double gradients_bytes = 0.0;    // fp32 main gradients alive at the peak
  double optimizer_bytes = 0.0;    // master weights and moments
  double activations_bytes = 0.0;  // stored for the backward pass: in-flight layers and the output head's inputs
  double logits_bytes = 0.0;       // the loss over the vocabulary and its gradient
  double transient_bytes = 0.0;    // gradients (and recomputed activations) being built at the peak
  // parallelism.cp_comm all_gather (cp > 1): the K and V of the whole sequence one layer's attention
  // gathers (alive during its attention, forward and backward)
  double cp_kv_gather_bytes = 0.0;
  // training.fp8_recipe tensorwise (torchao Float8Linear): the fp8 operands its linear layers save for
  // their backward, of the layer whose backward is running (recomputed: full or op-level selective)
  double fp8_saved_operands_bytes = 0.0;
  double communication_buffers_bytes = 0.0;
  double workspace_bytes = 0.0;  // cuBLAS / cuBLASLt workspaces
  // Held by the process beyond what it allocated:
  double allocator_reserve_bytes = 0.0;   // cached by the allocator, not allocated (fragmentation)
  double cuda_context_bytes = 0.0;        // the CUDA context (kernels, driver state)
  double framework_overhead_bytes = 0.0;  // workspace + allocator reserve + CUDA context
  double capacity_bytes = 0.0;            // the GPU's memory
  bool fits = true;                       // the peak (allocated + reserve + CUDA context) is at most the capacity
  // In host memory, not on the GPU (training.optimizer_offload cpu): the optimizer state taken off the
  // GPU's `optimizer_bytes` line, compared with the host tier's capacity where it is known.
  double host_optimizer_bytes = 0.0;
};

}  // namespace clustersim
