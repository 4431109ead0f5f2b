#include "workloads/parameter_sharding.hpp"

namespace clustersim {

int model_chunks(const ParallelismSpec& p) {
  return p.pp * p.virtual_stages;
}

int chunk_layers(const ModelSpec& m, const ParallelismSpec& p, int chunk) {
  const int chunks = model_chunks(p);
  return m.layers / chunks + (chunk < m.layers % chunks ? 1 : 0);
}

int stage_layers(const ModelSpec& m, const ParallelismSpec& p, int stage) {
  int layers = 0;
  for (int v = 0; v < p.virtual_stages; ++v)
    layers += chunk_layers(m, p, v * p.pp + stage);
  return layers;
}

int chunk_first_layer(const ModelSpec& m, const ParallelismSpec& p, int chunk) {
  int first = 0;
  for (int c = 0; c < chunk; ++c)
    first += chunk_layers(m, p, c);
  return first;
}

double replicated_layer_parameters(const ModelSpec& m) {
  const LayerParameterGroups g = layer_parameter_groups(m);
  if (llama_style(m)) return g.norms;  // no biases
  const double experts = m.moe.experts > 0 ? m.moe.experts : 1.0;
  const double shared = g.shared_experts > 0.0 ? double(m.hidden) : 0.0;  // shared experts' down bias
  return g.norms + double(m.hidden) /* attention output bias */ + experts * m.hidden /* MLP down bias */ + shared;
}

LayerParameterGroups rank_layer_parameter_groups(const ModelSpec& m, const ParallelismSpec& p) {
  const LayerParameterGroups g = layer_parameter_groups(m);
  const double t = p.tp;
  const bool bias = !llama_style(m);
  const double h = m.hidden;
  const double experts = m.moe.experts > 0 ? m.moe.experts : 1.0;
  const double expert_share = m.moe.experts > 0 ? 1.0 / p.ep : 1.0;
  LayerParameterGroups r;
  r.qkv = g.qkv / t;
  if (m.latent_attention()) {
    const MlaSpec& l = m.mla;
    const double whole =
        h * l.q_lora_rank + h * (double(l.kv_lora_rank) + l.qk_rope_head_dim) + double(l.q_lora_rank) + l.kv_lora_rank;
    r.qkv = whole + (g.qkv - whole) / t;
  }
  r.attention_out = (g.attention_out - (bias ? h : 0.0)) / t + (bias ? h : 0.0);
  // the routed experts split over the expert tensor-parallel ranks (etp), a dense MLP over tp
  const double mlp_t = m.moe.experts > 0 ? p.effective_etp() : t;
  r.mlp_up = g.mlp_up / mlp_t * expert_share;
  const double down_bias = bias ? experts * h : 0.0;
  r.mlp_down = ((g.mlp_down - down_bias) / mlp_t + down_bias) * expert_share;
  r.router = g.router;
  r.norms = g.norms;
  r.shared_experts = g.shared_experts > 0.0 ? (g.shared_experts - (bias ? h : 0.0)) / t + (bias ? h : 0.0) : 0.0;
  return r;
}

RankParameters mtp_rank_parameters(const WorkloadSpec& spec) {
  const ModelSpec& m = spec.model;
  const ParallelismSpec& p = spec.parallelism;
  RankParameters r;
  if (m.mtp_depth == 0) return r;
  const LayerParameterGroups layer = rank_layer_parameter_groups(mtp_layer_model(m), p);
  const double experts = m.moe_layer(m.layers - 1) ? layer.mlp_up + layer.mlp_down : 0.0;
  r.dense = m.mtp_depth * (layer.sum() - experts + mtp_module_extra_parameters(m));
  r.expert = m.mtp_depth * experts;
  const EmbeddingParameterGroups e = embedding_parameter_groups(m);
  // the shared embedding's copy on the last stage (untied; a tied one is there already)
  if (p.pp > 1 && e.output > 0.0) r.dense += e.word / p.tp;
  return r;
}

RankParameters stage_rank_parameters(const WorkloadSpec& spec, int stage) {
  const ModelSpec& m = spec.model;
  const ParallelismSpec& p = spec.parallelism;
  const LayerParameterGroups moe = rank_layer_parameter_groups(m, p);
  const LayerParameterGroups dense = rank_layer_parameter_groups(dense_layer_model(m), p);
  RankParameters r;
  for (int c = stage; c < model_chunks(p); c += p.pp) {
    const int first = chunk_first_layer(m, p, c);
    for (int layer = first; layer < first + chunk_layers(m, p, c); ++layer) {
      if (m.moe_layer(layer)) {
        r.expert += moe.mlp_up + moe.mlp_down;
        r.dense += moe.sum() - moe.mlp_up - moe.mlp_down;
      } else {
        r.dense += dense.sum();
      }
    }
  }
  const EmbeddingParameterGroups e = embedding_parameter_groups(m);
  if (stage == 0) r.dense += e.word / p.tp + e.position;
  if (stage == p.pp - 1) {
    r.dense += e.final_norm;
    if (e.output > 0.0)
      r.dense += e.output / p.tp;
    else if (p.pp > 1)
      r.dense += e.word / p.tp;  // tied: the last stage's copy of the word embedding
    const RankParameters mtp = mtp_rank_parameters(spec);
    r.dense += mtp.dense;
    r.expert += mtp.expert;
  }
  return r;
}

}  // namespace clustersim
