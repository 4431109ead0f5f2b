// The memory of one GPU of a served replica (vLLM's layout: vllm/worker/worker.py determine_num_
// available_blocks, v1 gpu_worker.py: the KV cache gets total x gpu_memory_utilization less the
// weights, the profiled peak activations and the memory outside PyTorch's allocator).
//
// Per pipeline stage s (the binding stage is the one that holds the fewest KV tokens; its lines are
// reported):
//   weights      L_s x (linear layers in the weight dtype + norms, biases, router in 16 bits)
//                (replica_kernels.cpp) + stage 0: the word embedding V / tp x h (16-bit; GPT-style
//                also the learned positions seq_len x h) + last stage: the final norm and the LM head
//                V / tp x h (none when the embeddings are tied and one stage holds both)
//   activations  the profile run's peak, an iteration of T = max_batch_tokens tokens (16-bit):
//                the residual stream (hidden states and residual, 2 T h e), and the larger of a layer's
//                attention block (QKV output T (q + 2 kv) e and attention output T q e) and its MLP
//                (input projections' output T c f e and the activation's T f e; MoE: R = T k u / ep
//                routed rows, R (c + 1) f_e e, and the sorted copy and output R 2 h e), or at the
//                end of the pass the sampler's logits: min(T, 256) rows (vLLM's default max_num_seqs,
//                the dummy sampler run's rows) x V x 4 bytes (fp32) x 2 (logits and probabilities)
//                beside the T h e hidden states
//   workspace    one cuBLAS workspace (sim/hardware/memory_model.cpp's figure: 32 MiB on Hopper and
//                later; one handle: the model runs in one thread) and
//                NCCL's buffers: per channel and peer connection, Simple 4 MiB + LL128 4,915,200 B +
//                LL 512 KiB (NCCL src/init.cc DEFAULT_BUFFSIZE, DEFAULT_LL128_BUFFSIZE,
//                DEFAULT_LL_BUFFSIZE), for 2 connections per channel of the tensor-parallel
//                communicator (a ring's receive from its predecessor, the tree's) and 2 for the
//                pipeline's point-to-point peers (the previous and the next stage)
//                Not the CUDA context (memory_model.cpp's 400 MiB): vLLM measures the memory outside
//                PyTorch from a snapshot taken after CUDA's initialization (vllm/v1/worker/gpu_worker.py
//                determine_available_memory: non_kv_cache_memory = non_torch_increase +
//                torch_peak_increase + weights_memory, non_torch_increase over the init snapshot), so
//                the context lies in the 1 - gpu_memory_utilization margin.
//   capacity     HBM x gpu_memory_utilization
//   KV cache     capacity - weights - activations - workspace
//   kv_bytes_per_token = L_s x KV elements per token and layer on one GPU x bytes(kv dtype): 2 x kv
//                heads per GPU x d (kv heads replicated when tp > kv_heads), or MLA's whole latent and
//                rotary key (replica_layout.cpp; the model's rule in workloads/transformer_math.hpp)
//   kv_capacity_tokens = floor(KV cache / kv_bytes_per_token): every GPU of the replica holds the same
//                tokens (tp splits heads, pp splits layers), so this is the replica's.
//   Data-parallel attention (D ranks of tp / D GPUs, replica_layout.cpp): the lines above with the
//   attention's widths over tp / D GPUs (its weights, activations and KV heads per GPU); each rank's GPUs
//   hold the KV cache of that rank's requests only, so kv_capacity_tokens_per_rank = floor(KV cache /
//   kv_bytes_per_token) and the replica holds D x as many (kv_capacity_tokens).
#include "sim/serving/replica_memory.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/hardware/memory_model.hpp"

namespace clustersim {
namespace {

constexpr double kActivationBytes = 2.0;
constexpr double kLogitBytes = 4.0 * 2.0;  // fp32 logits and probabilities
constexpr double kSamplerRows = 256.0;     // vLLM's default max_num_seqs
constexpr double kNcclConnectionBytes = 4.0 * units::kMiB + 4915200.0 + 512.0 * 1024.0;
constexpr double kConnectionsPerChannel = 2.0;
constexpr double kPipelineConnections = 2.0;

std::string gib(double bytes) {
  std::ostringstream s;
  s.precision(2);
  s << std::fixed << bytes / units::kGiB << " GiB";
  return s.str();
}

double activation_bytes(const ReplicaConfig& r, const ReplicaLayout& l) {
  const double T = double(r.max_batch_tokens), e = kActivationBytes, h = l.hidden;
  const double residual = 2.0 * T * h * e;
  const double attention = T * (l.q_width_per_gpu() + 2.0 * l.kv_width_per_gpu()) * e + T * l.q_width_per_gpu() * e;
  double mlp = 0.0;
  const double dense_mlp = T * (l.mlp_input_matrices + 1.0) * l.ffn_per_gpu * e;
  if (l.moe) {
    const double rows = T * l.top_k * l.load_imbalance / l.ep;
    mlp = rows * (l.mlp_input_matrices + 1.0) * l.expert_ffn_per_gpu * e + rows * 2.0 * h * e +
          T * (l.mlp_input_matrices + 1.0) * l.shared_expert_ffn_per_gpu * e;
    if (l.dense_layers > 0) mlp = std::max(mlp, dense_mlp);
  } else {
    mlp = dense_mlp;
  }
  const double logits = T * h * e + std::min(T, kSamplerRows) * l.vocab * kLogitBytes;
  return std::max(residual + std::max(attention, mlp), logits);
}

double stage_weight_bytes(const ReplicaLayout& l, const ReplicaKernels& k, int stage) {
  const double layer = k.layer_linear_weight_bytes() + k.layer_16bit_weight_bytes();
  const double dense_layer = k.layer_linear_weight_bytes(true) + k.layer_16bit_weight_bytes(true);
  const int dense = l.stage_dense_layers(stage);
  double w = (l.stage_layers[static_cast<std::size_t>(stage)] - dense) * layer + dense * dense_layer;
  const double table = l.vocab_per_gpu * l.hidden * kActivationBytes;
  const bool first = stage == 0, last = stage == l.pp - 1;
  if (first) w += table + (l.position_embedding ? l.seq_len * l.hidden * kActivationBytes : 0.0);
  if (last) {
    w += (l.biases ? 2.0 : 1.0) * l.hidden * kActivationBytes;  // final norm
    if (!(l.tied_embeddings && first)) w += table;              // LM head
  }
  return w;
}

}  // namespace

ReplicaMemory replica_memory(const ReplicaConfig& r, const ReplicaLayout& l, const ReplicaKernels& k,
                             const GpuSpec& gpu, int tp_channels) {
  const double workspace =
      cublas_workspace_bytes(gpu) +
      kNcclConnectionBytes * (tp_channels * kConnectionsPerChannel + (l.pp > 1 ? kPipelineConnections : 0.0));
  const double activations = activation_bytes(r, l);
  ReplicaMemory best;
  best.kv_capacity_tokens = std::numeric_limits<std::int64_t>::max();
  for (int s = 0; s < l.pp; ++s) {
    ReplicaMemory m;
    m.capacity_bytes = gpu.hbm_capacity_bytes * r.gpu_memory_utilization;
    m.weights_bytes = stage_weight_bytes(l, k, s);
    m.activation_bytes = activations;
    m.workspace_bytes = workspace;
    m.kv_cache_bytes = m.capacity_bytes - m.weights_bytes - m.activation_bytes - m.workspace_bytes;
    m.kv_bytes_per_token = l.stage_layers[static_cast<std::size_t>(s)] * k.kv_bytes_per_token_layer();
    m.kv_capacity_tokens =
        m.kv_cache_bytes > 0.0 ? static_cast<std::int64_t>(std::floor(m.kv_cache_bytes / m.kv_bytes_per_token)) : 0;
    if (m.kv_capacity_tokens < best.kv_capacity_tokens) best = m;
  }
  best.attention_dp_ranks = l.attention_dp;
  best.kv_capacity_tokens_per_rank = best.kv_capacity_tokens;
  best.kv_capacity_tokens *= l.attention_dp;
  if (best.kv_capacity_tokens < 1) {
    std::ostringstream msg;
    msg << "the replica does not fit: on one GPU" << (l.pp > 1 ? " of its tightest pipeline stage" : "") << ", HBM "
        << gib(gpu.hbm_capacity_bytes) << " x gpu_memory_utilization " << r.gpu_memory_utilization << " = "
        << gib(best.capacity_bytes) << ", weights " << gib(best.weights_bytes) << ", activations of "
        << r.max_batch_tokens << " tokens " << gib(best.activation_bytes) << ", workspace (cuBLAS, NCCL) "
        << gib(best.workspace_bytes) << " leave " << gib(best.kv_cache_bytes) << " for the KV cache ("
        << best.kv_bytes_per_token / 1024.0
        << " KiB per token): use more GPUs per replica (tp, pp), a smaller weight dtype"
        << " or fewer max_batch_tokens";
    throw SpecError("serving replica", "/gpu_memory_utilization", msg.str());
  }
  return best;
}

}  // namespace clustersim
