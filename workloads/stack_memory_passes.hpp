#pragma once
// The memory-bound passes a software stack adds around its collectives and its optimizer: copies
// that no model layer asks for, which a framework's implementation runs over every parameter.
// Read from the optional `memory_passes` object of a stack profile (workloads/stacks/README.md) into
// StackProfile::memory_passes, and written back with it (software_stack_to_json): every value carries
// its source there. A stack without the object runs none of them.
#include <string>
#include <string_view>

namespace clustersim {

// The optimizer's implementation: one fused kernel per step (apex / Transformer Engine FusedAdam,
// torch.optim fused=True), or PyTorch's foreach implementation: a multi-tensor kernel per
// arithmetic step, each reading and writing the fp32 state again (torch/optim/adamw.py
// _multi_tensor_adamw).
enum class OptimizerImplementation : unsigned char { fused, foreach };

struct StackMemoryPasses {
  // FSDP2: after each parameter all-gather, foreach_all_gather_copy_out copies the gathered buffer
  // into the unsharded parameters (torch.split_with_sizes_copy on the compute stream).
  bool fsdp_all_gather_copy_out = false;
  // FSDP2: before each gradient reduce-scatter, foreach_reduce_scatter_copy_in (torch chunk_cat)
  // copies the unsharded gradients into the reduce-scatter buffer in the reduce dtype, on the
  // compute stream.
  bool fsdp_reduce_scatter_copy_in = false;
  OptimizerImplementation optimizer = OptimizerImplementation::fused;

  friend bool operator==(const StackMemoryPasses&, const StackMemoryPasses&) = default;
};

// The memory passes of the stack `id` (a built-in id or a profile file, as find_software_stack
// takes it; errors as find_software_stack's): find_software_stack(id).memory_passes.
StackMemoryPasses stack_memory_passes(std::string_view id, const std::string& file = "",
                                      const std::string& json_path = "");

// Bytes per parameter the foreach implementation of `optimizer` ("adam", "sgd") moves beyond the
// fused kernel's (optimizer_step_cost), including clip_grad_norm_'s scaling of the gradients when
// `grad_norm` (each pass and its source in software_stack.cpp).
double foreach_optimizer_extra_bytes(std::string_view optimizer, bool grad_norm);

}  // namespace clustersim
