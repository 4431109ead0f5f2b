#pragma once
// A test double of the iteration model: time = fixed_s + per_token_s x (new tokens of the batch), so
// the hand-worked cases of the serving tests are exact; a KV cache of `kv_tokens` tokens.
#include <array>
#include <optional>
#include <span>
#include <string>

#include <gtest/gtest.h>

#include "../calibrated_gpu.hpp"
#include "../transformer_fixture.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/kernel_model.hpp"
#include "sim/serving/iteration_model.hpp"
#include "sim/serving/replica_kernels.hpp"
#include "sim/serving/replica_layout.hpp"
#include "sim/serving/serving_spec.hpp"

namespace clustersim::testing {

class LinearIterationModel final : public IterationModel {
 public:
  LinearIterationModel(double fixed_s, double per_token_s, std::int64_t kv_tokens)
      : fixed_s_(fixed_s), per_token_s_(per_token_s) {
    memory_.kv_capacity_tokens = kv_tokens;
  }

  IterationTime iteration_time(std::span<const IterationEntry> batch) const override {
    std::int64_t tokens = 0;
    for (const IterationEntry& e : batch)
      tokens += e.new_tokens;
    IterationTime t;
    t.compute_s = fixed_s_ + per_token_s_ * static_cast<double>(tokens);
    t.time_s = t.compute_s;
    return t;
  }

  const ReplicaMemory& memory() const override { return memory_; }
  // Data-parallel attention: the KV tokens split evenly over `ranks` ranks.
  void set_attention_ranks(int ranks) {
    memory_.attention_dp_ranks = ranks;
    memory_.kv_capacity_tokens_per_rank = memory_.kv_capacity_tokens / ranks;
  }

 private:
  double fixed_s_;
  double per_token_s_;
  ReplicaMemory memory_;
};

// Llama-2-7B or -70B as their released config.json files give them (the models of Vidur's operator
// tables and of TensorRT-LLM's static-batch figures).
inline ModelSpec llama2(bool seventy) {
  if (seventy)
    return swiglu_decoder(
        {.layers = 80, .hidden = 8192, .heads = 64, .ffn_hidden = 28672, .seq_len = 4096, .vocab = 32000}, 8);
  return swiglu_decoder(
      {.layers = 32, .hidden = 4096, .heads = 32, .ffn_hidden = 11008, .seq_len = 4096, .vocab = 32000}, 32);
}

// Llama-3-8B (meta-llama/Meta-Llama-3-8B config.json): 32 layers, hidden 4096, 32 heads, 8 KV heads,
// head dim 128, ffn 14336, vocabulary 128256, SwiGLU, untied embeddings.
inline ModelSpec llama3_8b() {
  return swiglu_decoder(
      {.layers = 32, .hidden = 4096, .heads = 32, .ffn_hidden = 14336, .seq_len = 8192, .vocab = 128256}, 8);
}

// DeepSeek-V3's dense shape (config.json of deepseek-ai/DeepSeek-V3): hidden 7168, 128 heads, the first
// layers' MLP of 18432, vocabulary 129280, SwiGLU, context 4096 here; plain multi-head attention and no
// experts until a test sets them.
inline ModelSpec deepseek_v3_shape(int layers) {
  return swiglu_decoder(
      {.layers = layers, .hidden = 7168, .heads = 128, .ffn_hidden = 18432, .seq_len = 4096, .vocab = 129280}, 128);
}

// Mixtral-8x7B (mistralai/Mixtral-8x7B-v0.1 config.json): Llama-3-8B's layers (32 layers, hidden 4096,
// 32 heads, 8 KV heads, SwiGLU) with 8 experts of 14336, top 2, vocabulary 32000, context 32768.
inline ModelSpec mixtral_8x7b() {
  ModelSpec m = llama3_8b();
  m.seq_len = 32768;
  m.vocab = 32000;
  m.moe.experts = 8;
  m.moe.top_k = 2;
  return m;
}

// Replica `r`'s kernels on `gpu`, laid out as the replica's own layout places them.
inline ReplicaKernels kernels_of(const ReplicaConfig& r, const GpuSpec& gpu) {
  return ReplicaKernels(r, replica_layout(r), gpu);
}

// The kernel model's time of the kernels a ReplicaKernels block function (&ReplicaKernels::layer_kernels,
// mlp_block_kernels, ...) writes for `tokens` tokens of replica `r`, only those of class `only` when given.
inline double block_kernels_s(const ReplicaConfig& r, const GpuSpec& gpu, double tokens,
                              std::size_t (ReplicaKernels::*block)(double, ComputeOp*, bool) const, KernelTiming timing,
                              std::optional<KernelClass> only = std::nullopt, bool dense_layer = false) {
  const ReplicaKernels kernels = kernels_of(r, gpu);
  std::array<ComputeOp, kMaxLayerKernels> ops{};
  const std::size_t n = (kernels.*block)(tokens, ops.data(), dense_layer);
  double s = 0.0;
  for (std::size_t i = 0; i < n; ++i)
    if (!only || ops[i].kernel == *only) s += kernel_time(gpu, ops[i], timing).time_s;
  return s;
}

// A replica's memory against its hand-worked breakdown: weights, activations and workspace to the byte,
// the KV cache (the rest of the usable capacity, a fraction of it) to a byte, and its bytes per token.
inline void expect_memory_breakdown(const ReplicaMemory& m, double weights_bytes, double activation_bytes,
                                    double workspace_bytes, double kv_cache_bytes, double kv_bytes_per_token) {
  EXPECT_DOUBLE_EQ(m.weights_bytes, weights_bytes);
  EXPECT_DOUBLE_EQ(m.activation_bytes, activation_bytes);
  EXPECT_DOUBLE_EQ(m.workspace_bytes, workspace_bytes);
  EXPECT_NEAR(m.kv_cache_bytes, kv_cache_bytes, 1.0);
  EXPECT_DOUBLE_EQ(m.kv_bytes_per_token, kv_bytes_per_token);
}

// A serving spec for the engine's tests: one replica, a context of 1 M tokens.
inline ServingSpec test_serving_spec(const char* scheduler, std::int64_t max_batch_tokens,
                                     std::int64_t max_batch_requests, std::int64_t block_size) {
  ServingSpec s;
  s.model.seq_len = 1 << 20;
  s.scheduler = scheduler;
  s.max_batch_tokens = max_batch_tokens;
  s.max_batch_requests = max_batch_requests;
  s.block_size = block_size;
  return s;
}

}  // namespace clustersim::testing
