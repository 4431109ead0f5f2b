#pragma once
// A test double of the iteration model: time = fixed_s + per_token_s x (new tokens of the batch), so
// the hand-worked cases of the serving tests are exact; a KV cache of `kv_tokens` tokens.
#include <array>
#include <optional>
#include <span>
#include <string>

#include "sim/hardware/calibration_profile.hpp"
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

// A catalogue GPU with its shipped calibration profile applied (as a simulation times its kernels).
inline GpuSpec calibrated_gpu(const std::string& id) {
  GpuSpec gpu = find_gpu(id, "test", "");
  apply_calibration_profile(gpu);
  return gpu;
}

// Llama-2-7B or -70B as their released config.json files give them (the models of Vidur's operator
// tables and of TensorRT-LLM's static-batch figures).
inline ModelSpec llama2(bool seventy) {
  ModelSpec m;
  m.layers = seventy ? 80 : 32;
  m.hidden = seventy ? 8192 : 4096;
  m.heads = seventy ? 64 : 32;
  m.kv_heads = seventy ? 8 : 32;
  m.ffn_hidden = seventy ? 28672 : 11008;
  m.vocab = 32000;
  m.seq_len = 4096;
  m.activation = "swiglu";
  return m;
}

// Llama-3-8B (meta-llama/Meta-Llama-3-8B config.json): 32 layers, hidden 4096, 32 heads, 8 KV heads,
// head dim 128, ffn 14336, vocabulary 128256, SwiGLU, untied embeddings.
inline ModelSpec llama3_8b() {
  ModelSpec m;
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 8;
  m.ffn_hidden = 14336;
  m.seq_len = 8192;
  m.vocab = 128256;
  m.activation = "swiglu";
  return m;
}

// DeepSeek-V3's dense shape (config.json of deepseek-ai/DeepSeek-V3): hidden 7168, 128 heads, the first
// layers' MLP of 18432, vocabulary 129280, SwiGLU, context 4096 here; plain multi-head attention and no
// experts until a test sets them.
inline ModelSpec deepseek_v3_shape(int layers) {
  ModelSpec m;
  m.layers = layers;
  m.hidden = 7168;
  m.heads = 128;
  m.kv_heads = 128;
  m.ffn_hidden = 18432;
  m.seq_len = 4096;
  m.vocab = 129280;
  m.activation = "swiglu";
  return m;
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

// The kernel model's time of the kernels a ReplicaKernels block function (&ReplicaKernels::layer_kernels,
// mlp_block_kernels, ...) writes for `tokens` tokens of replica `r`, only those of class `only` when given.
inline double block_kernels_s(const ReplicaConfig& r, const GpuSpec& gpu, double tokens,
                              std::size_t (ReplicaKernels::*block)(double, ComputeOp*, bool) const,
                              KernelTiming timing, std::optional<KernelClass> only = std::nullopt,
                              bool dense_layer = false) {
  const ReplicaKernels kernels(r, replica_layout(r), gpu);
  std::array<ComputeOp, kMaxLayerKernels> ops{};
  const std::size_t n = (kernels.*block)(tokens, ops.data(), dense_layer);
  double s = 0.0;
  for (std::size_t i = 0; i < n; ++i)
    if (!only || ops[i].kernel == *only) s += kernel_time(gpu, ops[i], timing).time_s;
  return s;
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
