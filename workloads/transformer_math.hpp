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

  double sum() const { return qkv + attention_out + mlp_up + mlp_down + router + norms; }
};

// The parameters outside the layers.
struct EmbeddingParameterGroups {
  double word = 0.0;        // token embedding (shared with the output projection when tied)
  double position = 0.0;    // learned position embedding (0: rotary, Llama-style)
  double final_norm = 0.0;  // norm before the output projection
  double output = 0.0;      // untied output projection (0 when tied)

  double sum() const { return word + position + final_norm + output; }
};

LayerParameterGroups layer_parameter_groups(const ModelSpec& m);
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
double total_parameters(const ModelSpec& m);
// Model flops of one training step (forward + backward = 3x forward, no recompute), for MFU, for
// `sequences` sequences of the model's seq_len.
double training_flops_per_step(const ModelSpec& m, double sequences);

}  // namespace clustersim
