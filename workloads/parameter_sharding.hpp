#pragma once
// How many parameters each rank holds under tensor, pipeline and expert parallelism (before ZeRO):
// Megatron-LM's split. Shared by the generator (gradient buckets, optimizer step) and the memory model.
#include "workloads/transformer_math.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

// The global model chunks: pp * virtual_stages; chunk g runs on stage g mod pp.
int model_chunks(const ParallelismSpec& p);
// Layers of global chunk g: layers / chunks, the first (layers mod chunks) chunks one more.
int chunk_layers(const ModelSpec& m, const ParallelismSpec& p, int chunk);
int stage_layers(const ModelSpec& m, const ParallelismSpec& p, int stage);
// The model's index of global chunk g's first layer (the chunks hold consecutive layers in order).
int chunk_first_layer(const ModelSpec& m, const ParallelismSpec& p, int chunk);

// Parameters of one layer that every tp rank holds whole: norms and the row-parallel layers' biases.
double replicated_layer_parameters(const ModelSpec& m);

// One rank's share of one layer's parameter groups: column- and row-parallel matrices / tp, norms
// and row-parallel biases whole, experts / ep (and / etp), shared experts / tp, the router whole; MLA's
// down projections and latent norms whole (Megatron-Core's MLASelfAttention builds
// linear_q_down_proj and linear_kv_down_proj with parallel_mode "duplicated"), its up projections / tp.
// `m` is the layer's model (dense_layer_model for a MoE model's first dense layers).
LayerParameterGroups rank_layer_parameter_groups(const ModelSpec& m, const ParallelismSpec& p);

struct RankParameters {
  double dense = 0.0;   // reduced over the data- and context-parallel ranks
  double expert = 0.0;  // MoE experts: reduced over the expert-data-parallel ranks (tp cp dp / (ep etp))
  double total() const { return dense + expert; }
};
// The multi-token prediction modules' parameters on a rank of the last stage: each module's layer (its
// experts / ep and / etp), its projection 2h x h and three norms whole (replicated over tp), and with
// pp > 1 and untied embeddings the last stage's copy of the shared word embedding / tp.
RankParameters mtp_rank_parameters(const WorkloadSpec& spec);
// The parameters of one rank of pipeline stage `stage`: its layers, the vocabulary-parallel word
// embedding / tp and the position embedding on the first stage, the final norm and the output layer
// / tp on the last (with tied embeddings and pp > 1, the last stage keeps a copy of the word embedding).
RankParameters stage_rank_parameters(const WorkloadSpec& spec, int stage);

}  // namespace clustersim
