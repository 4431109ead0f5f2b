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

double replicated_layer_parameters(const ModelSpec& m) {
  const LayerParameterGroups g = layer_parameter_groups(m);
  if (llama_style(m)) return g.norms;  // no biases
  const double experts = m.moe.experts > 0 ? m.moe.experts : 1.0;
  return g.norms + double(m.hidden) /* attention output bias */ + experts * m.hidden /* MLP down bias */;
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
  r.attention_out = (g.attention_out - (bias ? h : 0.0)) / t + (bias ? h : 0.0);
  r.mlp_up = g.mlp_up / t * expert_share;
  const double down_bias = bias ? experts * h : 0.0;
  r.mlp_down = ((g.mlp_down - down_bias) / t + down_bias) * expert_share;
  r.router = g.router;
  r.norms = g.norms;
  return r;
}

RankParameters stage_rank_parameters(const WorkloadSpec& spec, int stage) {
  const ModelSpec& m = spec.model;
  const ParallelismSpec& p = spec.parallelism;
  const LayerParameterGroups g = rank_layer_parameter_groups(m, p);
  const double layers = stage_layers(m, p, stage);
  RankParameters r;
  const double expert = m.moe.experts > 0 ? g.mlp_up + g.mlp_down : 0.0;
  r.expert = layers * expert;
  r.dense = layers * (g.sum() - expert);
  const EmbeddingParameterGroups e = embedding_parameter_groups(m);
  if (stage == 0) r.dense += e.word / p.tp + e.position;
  if (stage == p.pp - 1) {
    r.dense += e.final_norm;
    if (e.output > 0.0)
      r.dense += e.output / p.tp;
    else if (p.pp > 1)
      r.dense += e.word / p.tp;  // tied: the last stage's copy of the word embedding
  }
  return r;
}

}  // namespace clustersim
