#pragma once
// Closed-form counts of a transformer: parameters and training flops. Used by the generator, the
// memory model and the report's MFU. Formulas and their sources are in transformer_math.cpp.
#include <cstdint>

#include "workloads/workload_spec.hpp"

namespace clustersim {

// The parameters of one layer, grouped by the kernel whose weight-gradient GEMM (or norm backward)
// produces their gradients. Biases are counted with their matrix. MoE: all experts.
struct LayerParameterGroups {
  double qkv = 0.0;            // fused Q, K, V projection
  double attention_out = 0.0;  // attention output projection
  double mlp_up = 0.0;         // MLP up projection (swiglu: gate and up)
  double mlp_down = 0.0;       // MLP down projection
  double router = 0.0;         // MoE router (0 for dense models)
  double norms = 0.0;          // the layer's two norms together
  // MoE shared experts (model.moe.shared_experts): their up (and gate) and down projections together,
  // split over tp like a dense MLP, not over ep.
  double shared_experts = 0.0;

  double sum() const { return qkv + attention_out + mlp_up + mlp_down + router + norms + shared_experts; }
};

// The attention's shape as its kernel sees it: query/key and value dimensions per head, and the
// key/value heads it reads (MLA: every head has its own key and value once the latent is projected up).
struct AttentionShape {
  double heads = 0.0;
  double kv_heads = 0.0;
  double qk_head_dim = 0.0;  // MHA: head_dim; MLA: qk_nope_head_dim + qk_rope_head_dim
  double v_head_dim = 0.0;   // MHA: head_dim; MLA: v_head_dim
};

// The parameters outside the layers.
struct EmbeddingParameterGroups {
  double word = 0.0;        // token embedding (shared with the output projection when tied)
  double position = 0.0;    // learned position embedding (0: rotary, Llama-style)
  double final_norm = 0.0;  // norm before the output projection
  double output = 0.0;      // untied output projection (0 when tied)

  double sum() const { return word + position + final_norm + output; }
};

// A layer of `m` as the model's MoE layers are (every layer of a dense model); the first
// first_dense_layers of a MoE model are layers of dense_layer_model(m).
LayerParameterGroups layer_parameter_groups(const ModelSpec& m);
// `m` with a dense MLP of ffn_hidden instead of the experts: the shape of a MoE model's first dense layers.
ModelSpec dense_layer_model(const ModelSpec& m);
// Layers with experts: layers - first_dense_layers (0 for a dense model).
int moe_layer_count(const ModelSpec& m);
AttentionShape attention_shape(const ModelSpec& m);
// Elements one token keeps in the KV cache per layer: its key and value (2 x kv_heads x head_dim), or
// with MLA the compressed latent and the shared rotary key (kv_lora_rank + qk_rope_head_dim). The one
// rule for serving's KV cache and its transfers.
double kv_cache_elements_per_token_layer(const ModelSpec& m);
EmbeddingParameterGroups embedding_parameter_groups(const ModelSpec& m);
// Weights of the matrix multiplications one token passes through in one layer (no biases or norms;
// MoE: the router and top_k experts). Forward GEMM flops of a layer = 2 * this * tokens.
double layer_matmul_parameters(const ModelSpec& m);
// True for Llama-style models (swiglu): no biases, RMSNorm, rotary positions. See the .cpp.
bool llama_style(const ModelSpec& m);

// Parameters of one transformer layer (attention + MLP, norms and biases included; MoE: all experts).
double layer_parameters(const ModelSpec& m);
// Everything outside the layers: embeddings, final norm, and the output projection when untied.
double embedding_parameters(const ModelSpec& m);
// Multi-token prediction (model.mtp_depth, DeepSeek-V3 sec. 2.2): the model of a module's layer (the
// model's last layer: MoE past first_dense_layers) and the parameters of one module outside that
// layer: the projection 2h x h and three norms (the previous depth's, the embedding's, the final one).
ModelSpec mtp_layer_model(const ModelSpec& m);
double mtp_module_extra_parameters(const ModelSpec& m);
// All mtp_depth modules: each its layer and its extras (the embedding and output head are shared).
double mtp_parameters(const ModelSpec& m);
// The layers, the embeddings and output projection, and the multi-token prediction modules.
double total_parameters(const ModelSpec& m);
// Parameters one token uses (the "activated" parameters of MoE papers): all but the routed experts it
// is not sent to (experts - top_k per MoE layer); embeddings included, as Mixtral's 12.9B counts them.
double activated_parameters(const ModelSpec& m);
// Model flops of one training step (forward + backward = 3x forward, no recompute), for MFU, for
// `sequences` sequences of the model's seq_len; with multi-token prediction, its modules' too.
double training_flops_per_step(const ModelSpec& m, double sequences);

}  // namespace clustersim
