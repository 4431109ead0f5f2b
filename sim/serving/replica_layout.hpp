#pragma once
// How a served replica splits its model over its GPUs (vLLM's layout; rules and sources in
// replica_layout.cpp): the per-GPU widths the kernels and the memory lines are built from.
#include <vector>

#include "sim/serving/iteration_model.hpp"

namespace clustersim {

// The most data-parallel attention ranks of a replica (ReplicaConfig::dp_attention).
inline constexpr int kMaxAttentionRanks = 64;

struct ReplicaLayout {
  int tp = 1, pp = 1, ep = 1;
  int attention_dp = 1;  // data-parallel attention ranks (ReplicaConfig::dp_attention)
  int attention_tp = 1;  // GPUs of one attention rank: tp / attention_dp (tp without data-parallel attention)
  double hidden = 0.0;
  double head_dim = 0.0;
  double q_heads_per_gpu = 0.0;   // heads / attention_tp
  double kv_heads_per_gpu = 0.0;  // kv_heads / attention_tp, or 1 when more (each GPU keeps a copy of one)
  // KV-cache elements of one token and layer on one GPU: its kv heads' keys and values, or MLA's whole
  // latent and rotary key (replicated on every tensor-parallel GPU)
  double kv_cache_elements_per_gpu = 0.0;
  // Multi-head latent attention (model.attention_type "mla"; replica_kernels.cpp): the query and KV
  // latent ranks and the per-head widths (query and key qk_nope + qk_rope, value v_head_dim)
  bool mla = false;
  double q_lora_rank = 0.0, kv_lora_rank = 0.0, qk_nope_head_dim = 0.0, qk_rope_head_dim = 0.0, v_head_dim = 0.0;
  double mlp_input_matrices = 1.0;  // 2 for swiglu (gate and up), 1 otherwise
  double ffn_per_gpu = 0.0;         // dense MLP width on one GPU: ffn_hidden / tp
  bool moe = false;
  double experts = 0.0, top_k = 0.0, load_imbalance = 1.0;
  double experts_per_gpu = 0.0;     // experts / ep
  double expert_ffn_per_gpu = 0.0;  // expert width on one GPU: expert_ffn_hidden / (tp / ep)
  // MoE shared experts (model.moe.shared_experts), run as one MLP of shared_experts x expert_ffn_hidden
  // split over the tp GPUs like a dense MLP; 0 without
  double shared_expert_ffn_per_gpu = 0.0;
  int dense_layers = 0;             // a MoE model's first_dense_layers: dense MLPs of ffn_per_gpu
  double vocab = 0.0;               // padded to a multiple of 64
  double vocab_per_gpu = 0.0;       // padded vocab / attention_tp
  bool biases = false;              // GPT-style layers (not llama_style)
  bool position_embedding = false;  // learned (GPT-style), seq_len x hidden on the first stage
  double seq_len = 0.0;
  bool tied_embeddings = false;
  std::vector<int> stage_layers;  // transformer layers of each pipeline stage
  int layers = 0;

  double q_width_per_gpu() const { return q_heads_per_gpu * head_dim; }
  double kv_width_per_gpu() const { return kv_heads_per_gpu * head_dim; }
  int max_stage_layers() const;
  // Dense layers (the model's first dense_layers) among stage `stage`'s layers (all of a dense model's).
  int stage_dense_layers(int stage) const;
};

// Checks that the parallelism divides the model and computes the layout. Throws SpecError naming the
// ReplicaConfig field ("/tp", "/model/heads", ...) of file "serving replica".
ReplicaLayout replica_layout(const ReplicaConfig& replica);

}  // namespace clustersim
