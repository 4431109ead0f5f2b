#pragma once
// Bytes moved by the PyTorch-eager forms of three Llama ops that fused stacks run as one kernel (or none),
// per element of the tensor they act on, for activations of `activation_bytes` (2: bf16). Used by the
// transformer generator when a stack profile says fused.rmsnorm / fused.rope / fused.swiglu false
// (Llama-style models only). The intermediate tensors are fp32 (4 bytes), as the source casts them. See the .cpp for
// the kernel-by-kernel count and its source.

namespace clustersim {

// Memory-bound kernels over the [tokens x hidden] tensor (the reductions' [tokens x 1] outputs and the
// scalar kernels on them not counted).
inline constexpr int kEagerRmsNormForwardKernels = 6;
inline constexpr int kEagerRmsNormBackwardKernels = 10;
inline constexpr int kEagerRopeForwardKernels = 3;
inline constexpr int kEagerRopeBackwardKernels = 3;

double eager_rmsnorm_forward_bytes_per_element(double activation_bytes);
double eager_rmsnorm_backward_bytes_per_element(double activation_bytes);
// Per element of q and k (rank's query + key widths x tokens); forward and backward alike.
double eager_rope_bytes_per_element(double activation_bytes);

// Eager SwiGLU, F.silu(gate) * up (stack fused.swiglu false), per element of its [tokens x ffn] output.
inline constexpr int kEagerSwigluForwardKernels = 2;
inline constexpr int kEagerSwigluBackwardKernels = 3;
double eager_swiglu_forward_bytes_per_element(double activation_bytes);
double eager_swiglu_backward_bytes_per_element(double activation_bytes);

}  // namespace clustersim
