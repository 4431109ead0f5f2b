// Per-parameter training state, following Megatron-LM's mixed-precision recipe (Micikevicius et al.
// 2018, "Mixed Precision Training"; Rajbhandari et al. 2020, ZeRO, section 3.1: 2 + 2 + 12 bytes per
// parameter for fp16 weights, fp16 gradients and fp32 Adam state).
//
// Mixed precision (fp16, bf16, fp8 compute):
//   weights     2 bytes  (the 16-bit copy the kernels read; fp8 recipes also keep 16-bit weights)
//   gradients   4 bytes  fp32 "main grads": Megatron-LM accumulates gradients across micro-batches
//                        and all-reduces them in fp32 for bf16 (accumulate_allreduce_grads_in_fp32);
//                        we assume the same for fp16 and fp8. (ZeRO's paper counts 2-byte gradients.)
//                        2 bytes with training.grad_buffer persistent_bf16 (Megatron-Core's
//                        grad_reduce_in_fp32 = False: gradients kept and reduced in the 16-bit dtype)
//   optimizer   4 bytes  fp32 master weights + 4 bytes per moment (Adam: m and v; SGD: momentum)
// Full precision (fp32, tf32): weights 4, gradients 4, optimizer 4 bytes per moment (no master copy).
//
// fp8 (Transformer Engine, fp8_recipe.cpp): the linear layers keep, besides their 16-bit weights, the
// quantized weight and its transpose (TE's fp8 weight workspaces, reused by every micro-batch and by
// the backward's dgrad): quantized_copies_bytes per parameter, 2 for delayed and current scaling,
// 2 x (1 + 1/32) for mxfp8, 2 x (0.5 + 1/16) for nvfp4. Other parameters (embeddings, norms, the
// output layer, the router) have none.
//
// One fused optimizer step per parameter reads the gradient (4), reads and writes the fp32 weights
// (master or only copy: 8) and every moment (8 each), and in mixed precision writes the 16-bit copy
// (2): Adam 30 bytes (28 in fp32), SGD with momentum 22 (20). Flops: Adam ~12 per parameter (moment
// updates, bias correction, square root, division, weight decay), SGD ~4.
#include "workloads/training_state.hpp"

#include <span>
#include <string_view>

#include "sim/core/named_table.hpp"
#include "workloads/fp8_recipe.hpp"
#include "workloads/memory_recipe.hpp"

namespace clustersim {
namespace {

struct OptimizerInfo {
  std::string_view name;
  double moments;  // fp32 state tensors per parameter besides the master weights
  double flops_per_parameter;
};
constexpr OptimizerInfo kOptimizers[] = {
    {"adam", 2.0, 12.0},
    {"sgd", 1.0, 4.0},
};

const OptimizerInfo& optimizer_info(const TrainingSpec& t) {
  return find_named(std::span<const OptimizerInfo>(kOptimizers), t.optimizer, "optimizer");
}

bool mixed_precision(const TrainingSpec& t) {
  return t.precision == Precision::fp16 || t.precision == Precision::bf16 || t.precision == Precision::fp8;
}

constexpr double kFp32Bytes = 4.0;
constexpr double kHalfBytes = 2.0;

}  // namespace

ParameterStateBytes parameter_state_bytes(const TrainingSpec& t) {
  const OptimizerInfo& o = optimizer_info(t);
  ParameterStateBytes b;
  b.weights = mixed_precision(t) ? kHalfBytes : kFp32Bytes;
  b.gradients = memory_recipe<GradBufferRecipe>(t.grad_buffer).parameter_dtype ? b.weights : kFp32Bytes;
  b.optimizer = (mixed_precision(t) ? kFp32Bytes : 0.0) + o.moments * kFp32Bytes;
  return b;
}

double fp8_weight_copy_bytes(const TrainingSpec& t) {
  return t.precision == Precision::fp8 ? quantized_copies_bytes(t.fp8_recipe, Fp8Operand::weight) : 0.0;
}

OptimizerStepCost optimizer_step_cost(const TrainingSpec& t) {
  const OptimizerInfo& o = optimizer_info(t);
  OptimizerStepCost c;
  c.bytes = kFp32Bytes + 2.0 * kFp32Bytes + o.moments * 2.0 * kFp32Bytes + (mixed_precision(t) ? kHalfBytes : 0.0);
  c.flops = o.flops_per_parameter;
  return c;
}

}  // namespace clustersim
