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
// Model flops of one training step (Megatron-LM's convention):
//   forward per sequence = L * (2 * s * P_mm + 4 * s^2 * a*d) + 2 * s * h * V
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

namespace clustersim {
namespace {

double mlp_matrices(const ModelSpec& m) {
  return m.activation == "swiglu" ? 3.0 : 2.0;
}

double expert_ffn(const ModelSpec& m) {
  return m.moe.expert_ffn_hidden > 0 ? m.moe.expert_ffn_hidden : m.ffn_hidden;
}

// Widths of the attention projections.
double q_width(const ModelSpec& m) {
  return double(m.heads) * m.effective_head_dim();
}
double kv_width(const ModelSpec& m) {
  return double(m.effective_kv_heads()) * m.effective_head_dim();
}

}  // namespace

bool llama_style(const ModelSpec& m) {
  return m.activation == "swiglu";
}

LayerParameterGroups layer_parameter_groups(const ModelSpec& m) {
  const double h = m.hidden;
  const bool bias = !llama_style(m);
  const double qkv_out = q_width(m) + 2.0 * kv_width(m);
  LayerParameterGroups g;
  g.qkv = h * qkv_out + (bias ? qkv_out : 0.0);
  g.attention_out = q_width(m) * h + (bias ? h : 0.0);
  const double experts = m.moe.experts > 0 ? m.moe.experts : 1.0;
  const double f = m.moe.experts > 0 ? expert_ffn(m) : double(m.ffn_hidden);
  // Up (and gate) projections: (matrices - 1) * h * f weights, one bias of f each (GPT: one matrix).
  g.mlp_up = experts * ((mlp_matrices(m) - 1.0) * h * f + (bias ? (mlp_matrices(m) - 1.0) * f : 0.0));
  g.mlp_down = experts * (f * h + (bias ? h : 0.0));
  g.router = m.moe.experts > 0 ? h * m.moe.experts : 0.0;
  g.norms = 2.0 * (llama_style(m) ? h : 2.0 * h);
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
  const double attention = h * (q_width(m) + 2.0 * kv_width(m)) + q_width(m) * h;
  if (m.moe.experts == 0) return attention + mlp_matrices(m) * h * m.ffn_hidden;
  return attention + h * m.moe.experts + m.moe.top_k * mlp_matrices(m) * h * expert_ffn(m);
}

double layer_parameters(const ModelSpec& m) {
  return layer_parameter_groups(m).sum();
}

double embedding_parameters(const ModelSpec& m) {
  return embedding_parameter_groups(m).sum();
}

double total_parameters(const ModelSpec& m) {
  return m.layers * layer_parameters(m) + embedding_parameters(m);
}

double training_flops_per_step(const ModelSpec& m, double sequences) {
  const double s = m.seq_len;
  const double layer = 2.0 * s * layer_matmul_parameters(m) + 4.0 * s * s * q_width(m);
  const double logits = 2.0 * s * double(m.hidden) * m.vocab;
  return sequences * 3.0 * (m.layers * layer + logits);
}

}  // namespace clustersim
