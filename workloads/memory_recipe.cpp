// Framework allocation recipes for the memory model (workloads/memory_model.cpp).
//
// training.grad_buffer, the lifetime of the fp32 main gradients (4 bytes per parameter):
//   persistent  Megatron-LM / Megatron-Core DistributedDataParallel: one contiguous fp32 buffer of
//               every parameter's main gradient, allocated when the model is wrapped, zeroed each step
//               and never freed (megatron/core/distributed/param_and_grad_buffer.py); the gradient
//               buckets are views into it.
//   per_step    a PyTorch eager loop (and FSDP2): each parameter's fp32 main gradient is allocated when
//               its first gradient of the step arrives in the backward pass and freed by
//               optimizer.zero_grad(set_to_none=True) after the optimizer step (PyTorch's default
//               since 2.0). With one micro-batch per step no gradient exists before the backward pass;
//               with gradient accumulation the first micro-batch's gradients stay alive through the
//               others (h100-device: 1.3B, micro-batch 2: 25.56 GiB for one micro-batch, 30.47 GiB for
//               8 = 4 bytes x 1.316e9 parameters = 4.90 GiB more).
//   persistent_bf16  Megatron-Core's DistributedDataParallel with grad_reduce_in_fp32 = False: the same
//               persistent buffer in the parameters' 16-bit dtype (2 bytes per parameter), reduced in
//               bf16; the distributed optimizer casts its shard to fp32 for the step
//               (_copy_model_grads_to_main_grads: 4 bytes per parameter / (dp x cp)). NeMo sets it from
//               optim.grad_sync_dtype (megatron_base_model.py setup_mcore_distributed_parallel:
//               grad_reduce_in_fp32 = grad_sync_dtype == 'fp32'), and NVIDIA's H100 fp8 recipes pass
//               +training.model.optim.grad_sync_dtype=bf16 (NeMo-Framework-Launcher
//               examples/training/gpt/h100/175b_fp8_16node.sh, llama/h100/llama3_8b_fp8.sh, ...).
//               The generator reduces these gradients in 2 bytes (training_state.cpp).
//
// training.cross_entropy, the bytes per logit element (s b V / t of them) alive at the loss's peak:
//   vocab_parallel  6  Megatron-Core's vocab-parallel cross entropy
//                      (megatron/core/tensor_parallel/cross_entropy.py): the 16-bit logits (2) are cast
//                      to fp32 (4) while still referenced by the model's forward; the softmax is computed
//                      in place in the fp32 copy, saved, and turned into the gradient in place; the
//                      backward of the cast adds the 16-bit gradient (2): 6 bytes at both moments.
//   eager           12 torch.nn.functional.cross_entropy(logits.float(), target): log_softmax saves its
//                      fp32 output (4, aten derivatives.yaml: _log_softmax_backward_data uses `result`);
//                      in the backward pass nll_loss returns a dense fp32 gradient for it (4) and
//                      log_softmax's backward produces the fp32 gradient of the logits (4) before either
//                      input is freed: 12. The forward holds at most 10 (16-bit logits 2, fp32 copy 4,
//                      log-softmax output 4). Matches h100-device: peak - model state - 32 s b h L
//                      activations = 12.2-13.0 bytes per logit element on the 8 rows whose peak is the
//                      loss (the rest: the output head's inputs and the cuBLAS workspaces).
//   fused           4  flash_attn.losses.cross_entropy.CrossEntropyLoss (llm-foundry's default loss_fn
//                      "fused_crossentropy", llmfoundry/models/mpt/modeling_mpt.py): one Triton kernel
//                      reads the 16-bit logits and writes the loss and the log-sum-exp (s b floats),
//                      saving the logits themselves (2); its backward writes the 16-bit gradient of the
//                      logits into a new tensor (inplace_backward=False, 2): 4 bytes, no fp32 copy.
//
// The same recipes' kernel traffic, bytes read + written per logit element (forward / backward), counted
// from each source's kernels (fp32 = 4 bytes, 16-bit logits = 2):
//   vocab_parallel  38 / 14  Megatron-Core 2024 (megatron/core/models/common/language_module/
//                      language_module.py compute_language_model_loss: vocab_parallel_cross_entropy(
//                      logits.float(), labels); megatron/core/tensor_parallel/cross_entropy.py):
//                      forward .float() (2 + 4), max over the vocabulary (4), logits -= max in place
//                      (4 + 4), torch.exp(out=) (4 + 4), sum (4), exp_logits.div_(sum) (4 + 4) = 38;
//                      backward grad_input.mul_(grad_output) on the saved softmax (4 + 4; the target's
//                      "- 1" touches one element per token) and the cast's backward to bf16 (4 + 2) = 14.
//   eager           22 / 26  torch.nn.functional.cross_entropy(pred.float(), labels) (torchtitan
//                      train.py): forward .float() (2 + 4), log_softmax (one kernel, three passes over
//                      its row: reads 4 + 4 + 4, writes 4), nll_loss (one element per token) = 22;
//                      backward nll_loss_backward's dense fp32 gradient (zero-filled: writes 4),
//                      _log_softmax_backward_data (two passes: reads the gradient 4, then the gradient
//                      and the saved output 4 + 4, writes 4), the cast's backward (4 + 2) = 26.
//                      The passes: PyTorch's aten/src/ATen/native/cuda/SoftMax.cu (read at
//                      pytorch/pytorch @ 000cace5a401, not at torchtitan's torch 1963fc8 itself; the
//                      three-pass kernel is THCUNN's, older than both): a row longer
//                      than 1024 elements that does not fit sharedMemPerBlock (48 KiB: 12K fp32, any
//                      LLM vocabulary) runs cunn_SoftMaxForward, one block per row: ilpReduce for the
//                      max, ilpReduce again for the sum of exponentials, then WriteFpropResults reads
//                      the row a third time; cunn_SoftMaxBackward reduces gradOutput, then reads it
//                      again with the output. Each re-read is counted from memory: the forward's
//                      blocks resident at once (1024 threads, 2 per SM; the backward's 512, 4 per SM)
//                      hold 264 rows, 135 MB of fp32 at 128256 logits, beyond an H100's 50 MB L2 (at
//                      GPT-2's 50304 logits 53 MB, about the L2: part of the re-reads may hit it).
//   fused           2 / 4    flash_attn/ops/triton/cross_entropy.py (flash-attn 2.x): the forward kernel
//                      reads the 16-bit logits once (2) and writes the loss and log-sum-exp per row; the
//                      backward kernel reads them again (2) and writes their 16-bit gradient (2) = 4.
//
// training.selective_recompute, what recompute "selective" keeps of a layer (bytes in memory_model.cpp):
//   attention_core  Megatron-LM --recompute-granularity selective (Korthikanti et al. 2022, section
//                   4.2): everything but the core attention's a x s x s tensors, which are recomputed
//   matmul_outputs  torchtitan's op-level selective activation checkpointing (selective_ac_option
//                   "op", torchtitan/parallelisms/parallelize_llama.py _save_list and _custom_policy):
//                   the layer's input, the output of every other matmul (the 1st, 3rd, ... in call
//                   order) and of scaled_dot_product_attention; the rest is recomputed in the backward
#include "workloads/memory_recipe.hpp"

#include <algorithm>

namespace clustersim {
namespace {

constexpr GradBufferRecipe kGradBuffers[] = {
    {"persistent", "one contiguous fp32 buffer allocated before the first step (Megatron-LM DDP)", true, false},
    {"per_step", "allocated during the backward pass, freed after the optimizer step (PyTorch eager)", false, false},
    {"persistent_bf16", "Megatron-Core's buffer in the 16-bit parameter dtype (NeMo grad_sync_dtype bf16)", true, true},
};

constexpr CrossEntropyRecipe kCrossEntropies[] = {
    {"vocab_parallel", "Megatron-Core's vocab-parallel cross entropy: fp32 softmax, gradient in place", 6.0, 38.0,
     14.0},
    {"eager", "PyTorch F.cross_entropy on fp32 logits: log-softmax output, its gradient, the logits' gradient", 12.0,
     22.0, 26.0},
    {"fused",
     "a fused softmax cross entropy kernel (flash-attn's Triton CrossEntropyLoss): 16-bit logits and their gradient",
     4.0, 2.0, 4.0},
};

constexpr SelectiveRecomputeRecipe kSelectiveRecomputes[] = {
    {"attention_core", "Megatron-LM: keep everything but the core attention's scores, recompute them"},
    {"matmul_outputs", "torchtitan op-level AC: keep the layer input, every other matmul's output and attention's"},
};

}  // namespace

template <>
std::span<const GradBufferRecipe> memory_recipes() {
  return kGradBuffers;
}

template <>
std::span<const CrossEntropyRecipe> memory_recipes() {
  return kCrossEntropies;
}

template <>
std::span<const SelectiveRecomputeRecipe> memory_recipes() {
  return kSelectiveRecomputes;
}

}  // namespace clustersim
