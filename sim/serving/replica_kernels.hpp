#pragma once
// The kernels of a served replica's forward pass on one of its GPUs, as ComputeOps for the kernel
// model (sim/hardware/kernel_model.hpp): one transformer layer's over a batch of tokens (attention
// apart), attention per prefill chunk and for the decoding requests, the first stage's embedding and
// the last stage's final norm, LM head and sampling. Shapes, bytes and sources in replica_kernels.cpp.
#include <cstddef>

#include "sim/hardware/gpu_spec.hpp"
#include "sim/hardware/kernel_model.hpp"
#include "sim/serving/replica_layout.hpp"
#include "workloads/execution_graph.hpp"

namespace clustersim {

// The most kernels layer_kernels fills in.
inline constexpr std::size_t kMaxLayerKernels = 17;

// vLLM (V1, the default engine since 0.8) captures the forward pass in piecewise CUDA graphs for
// batches of up to 512 tokens (CompilationConfig.cudagraph_capture_sizes, largest 512) and replays
// them: the GEMMs, norms and elementwise kernels of such an iteration pay a kernel's duration, not a
// library call's host-side work (kernel_model.hpp: KernelTiming::kernel_duration), while attention runs
// outside the graph pieces (per call). Larger batches run eagerly (per call).
inline constexpr double kCudaGraphMaxTokens = 512;
inline KernelTiming graph_timing(double tokens) {
  return tokens <= kCudaGraphMaxTokens ? KernelTiming::kernel_duration : KernelTiming::per_call;
}

class ReplicaKernels {
 public:
  ReplicaKernels(const ReplicaConfig& replica, const ReplicaLayout& layout, const GpuSpec& gpu);

  // One transformer layer over `tokens` batched tokens, attention excluded: norms, QKV, rope, the
  // attention output projection, the MLP (or the MoE router and experts), residual adds. Writes them
  // to `out` (at least kMaxLayerKernels long) and returns how many.
  // `dense_layer`: one of a MoE model's first dense layers (a dense model's layers are all dense).
  std::size_t layer_kernels(double tokens, ComputeOp* out, bool dense_layer = false) const;
  // The same layer in its two halves (layer_kernels is the first's kernels, then the second's): the
  // attention block (input norm, QKV, rope, KV-cache write, attention output, residual) and the MLP
  // block (post-attention norm, the MLP or the MoE router and experts, residual). Data-parallel
  // attention runs the first over a rank's tokens and the second over every rank's.
  std::size_t attention_block_kernels(double tokens, ComputeOp* out) const;
  std::size_t mlp_block_kernels(double tokens, ComputeOp* out, bool dense_layer = false) const;
  // FlashAttention over a prompt chunk of `new_tokens` after `context_tokens` in the KV cache (causal).
  ComputeOp prefill_attention(double new_tokens, double context_tokens) const;
  // The decode kernel (paged attention / flash-decoding; MLA: FlashMLA over the latent) of `requests`
  // decoding requests whose KV caches hold `kv_tokens` tokens together (their new token included).
  ComputeOp decode_attention(double requests, double kv_tokens) const;
  // MLA only (none otherwise; writes at most 2 to `out`, returns how many): a prefill chunk's
  // up-projection of its `keys` latents to per-head keys and values (kv_b_proj), and the decoding
  // requests' absorbed projections (the query through W_UK before the kernel, the latent output through
  // W_UV after it).
  std::size_t prefill_up_projection(double keys, ComputeOp* out) const;
  std::size_t decode_absorption(double requests, ComputeOp* out) const;
  // The GPU as the decode kernel runs on it: MLA takes FlashMLA's published efficiencies
  // (replica_kernels.cpp); multi-head attention the GPU's own.
  GpuSpec decode_attention_gpu(const GpuSpec& gpu) const;
  // First stage: the embedding lookup of `tokens` tokens.
  ComputeOp embedding(double tokens) const;
  // Last stage: the final norm over the `tokens` tokens.
  ComputeOp final_norm(double tokens) const;
  // Last stage: the LM head GEMM over the `rows` sampled tokens only, and the sampler over their logits.
  ComputeOp lm_head(double rows) const;
  ComputeOp sampling(double rows) const;

  // Bytes of one layer's linear weights on one GPU in the weight dtype, and of its 16-bit tensors
  // (norms, biases, MoE router).
  double layer_linear_weight_bytes(bool dense_layer = false) const;
  double layer_16bit_weight_bytes(bool dense_layer = false) const;
  // One token's K and V of one layer on one GPU, in the KV-cache dtype.
  double kv_bytes_per_token_layer() const { return kv_bytes_per_token_layer_; }

 private:
  ComputeOp gemm(const char* name, double m, double n, double k, double batch = 1.0) const;        // a linear layer's
  ComputeOp gemm_16bit(const char* name, double m, double n, double k, double batch = 1.0) const;  // LM head, router
  std::size_t mla_attention_block_kernels(double tokens, ComputeOp* out) const;

  ReplicaLayout l_;
  Precision compute_;           // attention, norms, 16-bit GEMMs
  Precision gemm_;              // the linear layers' GEMMs (fp8 where the GPU has the path and weights are fp8)
  double input_bytes_ = 2.0;    // bytes of a GEMM's activation operand
  double weight_bytes_ = 2.0;   // bytes per weight element of the linear layers
  bool fp8_blockwise_ = false;  // the linear layers' fp8 GEMMs are block-scaled (ReplicaConfig::fp8_block_scales)
  double kv_element_bytes_ = 2.0;
  double kv_bytes_per_token_layer_ = 0.0;
};

}  // namespace clustersim
