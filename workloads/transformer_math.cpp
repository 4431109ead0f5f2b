// Closed-form parameter and flop counts of a decoder-only transformer.
//
// Notation: h hidden, a heads, g kv_heads (GQA; g = a for multi-head attention), d head_dim
// (a * d = h unless head_dim is given), f ffn_hidden, L layers, s seq_len, V vocab, E experts,
// k top_k, f_e expert_ffn_hidden (f when 0).
//
// Two layer styles, chosen by the activation (the model families these shapes come from):
//  - GPT-style (gelu, squared_relu): biases on every linear layer, LayerNorm (scale + shift: 2h per
//    norm), learned position embedding (s * h). GPT-2/GPT-3 and Megatron-LM's GPT model.
//  - Llama-style (swiglu): no biases, RMSNorm (scale only: h per norm), rotary position embedding (no
//    parameters). Llama 1/2/3, Mistral.
//
// Parameters of one layer:
//   QKV projection      h * (a*d + 2*g*d)      + (a*d + 2*g*d)  bias (GPT)
//   output projection   a*d * h                + h              bias (GPT)
//   MLP, dense          2 * h * f  (swiglu: 3 * h * f: gate, up, down)  + f + h bias (GPT)
//   MLP, MoE            E copies of the MLP with f_e, plus the router h * E
//   two norms           4h (LayerNorm) or 2h (RMSNorm)
// Outside the layers: word embedding V * h, position embedding s * h (GPT), final norm 2h or h,
// untied output projection V * h.
// GPT-3 175B (L 96, h 12288, a 96, f 4h, V 51200, s 2048, tied) = 96 * (12h^2 + 13h) + Vh + sh + 2h
// = 174,615,846,912 parameters; Llama-2-7B (L 32, h 4096, f 11008, V 32000, untied)
// = 32 * (4h^2 + 3hf + 2h) + 2Vh + h = 6,738,415,616.
//
// Multi-head latent attention (model.attention_type "mla"; DeepSeek-V2, arXiv:2405.04434 sec. 2.1, and
// DeepSeek-V3, arXiv:2412.19437 sec. 2.1.1; shapes as the released modeling_deepseek.py names them),
// with r_q q_lora_rank, r_kv kv_lora_rank, n qk_nope_head_dim, r qk_rope_head_dim, v v_head_dim:
//   query   h * r_q (q_a_proj) + r_q (its RMSNorm) + r_q * a(n + r) (q_b_proj);   r_q = 0: h * a(n + r)
//   key/value  h * (r_kv + r) (kv_a_proj_with_mqa: the latent and the shared rotary key)
//              + r_kv (its RMSNorm) + r_kv * a(n + v) (kv_b_proj: per-head keys and values)
//   output  a v * h
// all in the qkv group; no biases. Attention per head: scores over n + r dimensions, values of v.
// KV cache per token and layer: the latent and the rotary key, r_kv + r elements (the keys and values
// are recomputed from it, or the up projections absorbed into the query and output: sec. 2.1.1).
// DeepSeek-V3 (h 7168, a 128, r_q 1536, r_kv 512, n 128, r 64, v 128): 187,107,328 attention weights
// per layer; KV cache 576 elements = 1,152 bytes per token and layer in bf16.
// MoE layers of DeepSeek-V3 (3 dense of f 18432, 58 MoE of 256 routed experts top-8 + 1 shared, f_e
// 2048, V 129,280 untied): 671,026,404,352 parameters (the paper's 671B), of which a token uses
// 37,552,282,624 (activated_parameters), 36,625,603,584 without the input embedding's lookup table: the
// paper's "37B" rounds the latter (the former would round to 38B).
//
// Model flops of one training step (Megatron-LM's convention):
//   forward per sequence = L * (2 * s * P_mm + 4 * s^2 * a*d) + 2 * s * h * V
// (MLA: 2 s^2 a (n + r + v) for the attention, the scores over n + r and the values of v; a MoE model's
// first dense layers with their dense MLP)
// where P_mm is layer_matmul_parameters (the weights each token multiplies: QKV, output projection,
// router and the top_k experts' MLP), 4 s^2 a d the attention scores QK^T and the weighted sum AV
// (2 s^2 a d each; causal masking NOT halved, as in Megatron's convention), 2 s h V the logits.
// Training = 3 x forward (backward = 2 x forward; recomputation is not model flops).
// For a GPT model (P_mm = 12h^2, a*d = h) and B sequences this is
//   72 B s L h^2 (1 + s/(6h) + V/(12 L h)),
// the model-flops form (no recomputation) of Narayanan et al. 2021 ("Efficient Large-Scale Language
// Model Training on GPU Clusters Using Megatron-LM", appendix: 96 B s L h^2 (1 + s/(6h) + V/(16 L h))
// counts the full-recompute forward too), as used for MFU by Korthikanti et al. 2022.
#include "workloads/transformer_math.hpp"

#include <algorithm>

namespace clustersim {
namespace {

double mlp_matrices(const ModelSpec& m) {
  return m.activation == "swiglu" ? 3.0 : 2.0;
}

double expert_ffn(const ModelSpec& m) {
  return m.moe.expert_ffn_hidden > 0 ? m.moe.expert_ffn_hidden : m.ffn_hidden;
}

// Widths of the attention projections (MHA / GQA).
double q_width(const ModelSpec& m) {
  return double(m.heads) * m.effective_head_dim();
}
double kv_width(const ModelSpec& m) {
  return double(m.effective_kv_heads()) * m.effective_head_dim();
}

// The attention's weights (MLA: see the top of the file) and its norms' (MLA's latent RMSNorms).
struct AttentionWeights {
  double qkv = 0.0, out = 0.0, norms = 0.0;
};
AttentionWeights attention_weights(const ModelSpec& m) {
  const double h = m.hidden;
  AttentionWeights w;
  if (!m.latent_attention()) {
    w.qkv = h * (q_width(m) + 2.0 * kv_width(m));
    w.out = q_width(m) * h;
    return w;
  }
  const MlaSpec& l = m.mla;
  const double a = m.heads, qk = double(l.qk_nope_head_dim) + l.qk_rope_head_dim;
  const double query = l.q_lora_rank > 0 ? h * l.q_lora_rank + double(l.q_lora_rank) * a * qk : h * a * qk;
  const double key_value = h * (double(l.kv_lora_rank) + l.qk_rope_head_dim) +
                           double(l.kv_lora_rank) * a * (double(l.qk_nope_head_dim) + l.v_head_dim);
  w.qkv = query + key_value;
  w.out = a * l.v_head_dim * h;
  w.norms = double(l.q_lora_rank) + l.kv_lora_rank;
  return w;
}

// Sums f(layer model) over the layers: the first dense ones and the rest.
template <typename F>
double over_layers(const ModelSpec& m, F f) {
  const int moe = moe_layer_count(m);
  const double dense = m.layers - moe;
  return (dense > 0 ? dense * f(dense_layer_model(m)) : 0.0) + (moe > 0 ? moe * f(m) : 0.0);
}

}  // namespace

bool llama_style(const ModelSpec& m) {
  return m.activation == "swiglu";
}

ModelSpec dense_layer_model(const ModelSpec& m) {
  ModelSpec dense = m;
  dense.moe = MoeSpec{};
  return dense;
}

int moe_layer_count(const ModelSpec& m) {
  return m.moe.experts > 0 ? m.layers - m.moe.first_dense_layers : 0;
}

AttentionShape attention_shape(const ModelSpec& m) {
  AttentionShape a;
  a.heads = m.heads;
  if (m.latent_attention()) {
    a.kv_heads = m.heads;
    a.qk_head_dim = double(m.mla.qk_nope_head_dim) + m.mla.qk_rope_head_dim;
    a.v_head_dim = m.mla.v_head_dim;
  } else {
    a.kv_heads = m.effective_kv_heads();
    a.qk_head_dim = a.v_head_dim = m.effective_head_dim();
  }
  return a;
}

double kv_cache_elements_per_token_layer(const ModelSpec& m) {
  if (m.latent_attention()) return double(m.mla.kv_lora_rank) + m.mla.qk_rope_head_dim;
  return 2.0 * kv_width(m);
}

LayerParameterGroups layer_parameter_groups(const ModelSpec& m) {
  const double h = m.hidden;
  const bool bias = !llama_style(m);
  const double qkv_out = q_width(m) + 2.0 * kv_width(m);
  const AttentionWeights attention = attention_weights(m);
  LayerParameterGroups g;
  g.qkv = attention.qkv + attention.norms + (bias ? qkv_out : 0.0);
  g.attention_out = attention.out + (bias ? h : 0.0);
  const double experts = m.moe.experts > 0 ? m.moe.experts : 1.0;
  const double f = m.moe.experts > 0 ? expert_ffn(m) : double(m.ffn_hidden);
  // Up (and gate) projections: (matrices - 1) * h * f weights, one bias of f each (GPT: one matrix).
  g.mlp_up = experts * ((mlp_matrices(m) - 1.0) * h * f + (bias ? (mlp_matrices(m) - 1.0) * f : 0.0));
  g.mlp_down = experts * (f * h + (bias ? h : 0.0));
  g.router = m.moe.experts > 0 ? h * m.moe.experts : 0.0;
  g.norms = 2.0 * (llama_style(m) ? h : 2.0 * h);
  // shared experts: one MLP of shared_experts x f_e, biased like the routed ones
  const double shared_f = double(m.moe.shared_experts) * f;
  if (m.moe.experts > 0 && shared_f > 0.0)
    g.shared_experts = mlp_matrices(m) * h * shared_f + (bias ? (mlp_matrices(m) - 1.0) * shared_f + h : 0.0);
  return g;
}

EmbeddingParameterGroups embedding_parameter_groups(const ModelSpec& m) {
  const double h = m.hidden;
  EmbeddingParameterGroups e;
  e.word = double(m.vocab) * h;
  e.position = llama_style(m) ? 0.0 : double(m.seq_len) * h;
  e.final_norm = llama_style(m) ? h : 2.0 * h;
  e.output = m.tied_embeddings ? 0.0 : double(m.vocab) * h;
  return e;
}

double layer_matmul_parameters(const ModelSpec& m) {
  const double h = m.hidden;
  const AttentionWeights w = attention_weights(m);
  const double attention = w.qkv + w.out;
  if (m.moe.experts == 0) return attention + mlp_matrices(m) * h * m.ffn_hidden;
  return attention + h * m.moe.experts + (m.moe.top_k + m.moe.shared_experts) * mlp_matrices(m) * h * expert_ffn(m);
}

double layer_parameters(const ModelSpec& m) {
  return layer_parameter_groups(m).sum();
}

double embedding_parameters(const ModelSpec& m) {
  return embedding_parameter_groups(m).sum();
}

// Multi-token prediction (DeepSeek-AI 2024, arXiv:2412.19437 sec. 2.2, eq. 21-23): module k combines
// RMSNorm(h_i^{k-1}) and RMSNorm(Emb(t_{i+k})) through M_k (d x 2d), runs TRM_k, one transformer block,
// and the shared output head; the released weights (deepseek-ai/DeepSeek-V3 model.layers.61: enorm,
// hnorm, eh_proj, shared_head.norm and a MoE decoder layer) give the head a norm of its own. A norm is
// h weights (RMSNorm) or 2h (LayerNorm, the GPT-style models here).
ModelSpec mtp_layer_model(const ModelSpec& m) {
  return m.moe_layer(m.layers - 1) ? m : dense_layer_model(m);
}

double mtp_module_extra_parameters(const ModelSpec& m) {
  const double h = m.hidden;
  const double norm = llama_style(m) ? h : 2.0 * h;
  return 2.0 * h * h + 3.0 * norm;
}

double mtp_parameters(const ModelSpec& m) {
  if (m.mtp_depth == 0) return 0.0;
  return m.mtp_depth * (layer_parameters(mtp_layer_model(m)) + mtp_module_extra_parameters(m));
}

double total_parameters(const ModelSpec& m) {
  return over_layers(m, [](const ModelSpec& l) { return layer_parameters(l); }) + embedding_parameters(m) +
         mtp_parameters(m);
}

double activated_parameters(const ModelSpec& m) {
  const double mtp_moe_layers = m.moe_layer(m.layers - 1) ? m.mtp_depth : 0;
  const double unused_experts = double(m.moe.experts - m.moe.top_k) * (moe_layer_count(m) + mtp_moe_layers);
  const double expert =
      (layer_parameter_groups(m).mlp_up + layer_parameter_groups(m).mlp_down) / std::max(1, m.moe.experts);
  return total_parameters(m) - unused_experts * expert;
}

double training_flops_per_step(const ModelSpec& m, double sequences) {
  const double s = m.seq_len;
  const AttentionShape a = attention_shape(m);
  const double scores = 2.0 * s * s * a.heads * (a.qk_head_dim + a.v_head_dim);
  const double layers =
      over_layers(m, [s, scores](const ModelSpec& l) { return 2.0 * s * layer_matmul_parameters(l) + scores; });
  const double logits = 2.0 * s * double(m.hidden) * m.vocab;
  // each multi-token prediction module: its projection from 2h, its layer and the output head
  const double h = m.hidden;
  const double mtp =
      m.mtp_depth * (2.0 * s * (2.0 * h * h + layer_matmul_parameters(mtp_layer_model(m))) + scores + logits);
  return sequences * 3.0 * (layers + logits + mtp);
}

}  // namespace clustersim
