// The iteration model backed by the calibrated kernel model and the cluster's links
// (iteration_model.hpp). docs/serving_iteration_model.md has the equations with their sources.
//
// One iteration on a replica of pp stages, L_s layers on stage s, T = sum of new_tokens, r = entries
// (each samples one token: the scheduler does not say which prompt chunks are a prompt's last, so an
// intermediate chunk's LM head row is counted too), D the decoding entries (new_tokens 1) whose caches
// hold K = sum (context + 1) tokens, P the prefill entries:
//   compute = L x (layer(T) + sum_P prefill_attention + decode_attention(D, K))
//             + embedding(T) + final_norm(T) + lm_head(r) + sampling(r)
//   communication = L x 2 x all_reduce(T h e) + [tp > 1] all_reduce(T h e) (the vocabulary-parallel
//             embedding's) + [tp > 1] all_gather(r V / tp e) (the logits) + (pp - 1) x send(2 T h e)
//             (hidden states and residual to the next stage)
//   time = compute + communication + host_overhead_s
// with layer(T) the sum of kernel_time over the layer's kernels (replica_kernels.cpp) and every time
// by the kernel model or the collective model (replica_links.cpp). Kernels time per call, but those
// of an iteration of <= 512 tokens outside attention, which vLLM replays from a CUDA graph: a
// kernel's duration (replica_kernels.hpp, graph_timing). The all-reduces are on
// the critical path (vLLM runs them between the layer's GEMMs, on the compute stream).
// Pipeline (v1): a replica runs one iteration at a time and the batch is not split into micro-batches,
// so the batch crosses the stages one after another: the iteration's time is the sum of the stages'
// (each stage's the same formula over its own layers; the stages' layers sum to L). An engine that
// keeps pp batches in flight (vLLM's virtual engines) would start one every max-stage time: not
// modelled.
// Speed: everything that depends only on T or r (layer(T), the all-reduces, the sends, the head) is
// tabulated at construction over the token grid (token_grid.hpp) up to max_batch_tokens; a call costs
// one pass over the entries, the grid lookups, one kernel_time per prefill entry and one for the
// decode kernel, and no allocation.
// Attention: vLLM V1's FlashAttention backend runs every request of the batch in one varlen kernel
// per layer: each prefill chunk's and the decoding requests' parts are timed as their own kernels
// (replica_kernels.cpp) and added, the kernel's fixed time (gemm_launch_s, per call) paid once.
// Multi-head latent attention (replica_kernels.cpp): a prefill chunk adds its keys' up-projection
// (a GEMM) to its attention kernel, the decoding requests their absorbed projections (two batched
// GEMMs) to theirs; the decode kernel is FlashMLA's, at its published efficiencies.
// Data-parallel attention (D = dp_attention > 1 ranks of a = tp / D GPUs, MoE, pp 1; replica_layout.cpp):
// the batch's entries go to the ranks one by one, each to the rank with the fewest new tokens so far
// (lowest index on ties: decodes spread round-robin, prompts balance; SGLang's DP controller sends each
// request to one rank, its shortest-queue policy balancing them). Rank j has T_j tokens, r_j entries;
// the ranks run their attention side by side and meet at every MoE layer (SGLang runs idle ranks
// on an empty batch), so
//   compute = max_j [ L x (attention_block(T_j) + attention_j) + embedding(T_j) + final_norm(T_j)
//                     + lm_head(r_j) + sampling(r_j) ] + L x mlp_block(T)
//   communication = (L + 1) x all_reduce_a(T_max h e) + all_gather_a(r_max V / a e)
//                   + L x 2 x all_to_all(T_max / a x k x h x e)
// with T_max, r_max the busiest rank's, the all-reduce and all-gather over a rank's a GPUs (the
// attention output's and the embedding's), and per layer the all-to-alls over the replica's tp GPUs
// that send each token's hidden state to its top-k experts and back (dispatch and combine: DeepEP's
// pattern; each of a rank's a GPUs sends its 1 / a of the rank's tokens, 16-bit both ways (DeepEP
// dispatches fp8: this is an upper bound)); the MLP's all-reduce is replaced by the combine.
#include "sim/serving/iteration_model.hpp"

#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/hardware/kernel_model.hpp"
#include "sim/serving/replica_kernels.hpp"
#include "sim/serving/replica_layout.hpp"
#include "sim/serving/replica_links.hpp"
#include "sim/serving/replica_memory.hpp"
#include "sim/serving/token_grid.hpp"

namespace clustersim {
namespace {

constexpr double kActivationBytes = 2.0;
constexpr double kStageSendTensors = 2.0;  // hidden states and residual (vLLM's IntermediateTensors)
constexpr double kAllReducesPerLayer = 2.0;
constexpr double kAllToAllsPerLayer = 2.0;  // data-parallel attention: MoE dispatch and combine

class KernelIterationModel final : public IterationModel {
 public:
  KernelIterationModel(const ReplicaConfig& replica, const GpuSpec& gpu, const ClusterSpec& cluster)
      : KernelIterationModel(replica, gpu, cluster, replica_layout(replica)) {}

  KernelIterationModel(const ReplicaConfig& replica, const GpuSpec& gpu, const ClusterSpec& cluster,
                       ReplicaLayout layout)
      : gpu_(gpu),
        layout_(std::move(layout)),
        kernels_(replica, layout_, gpu),
        decode_gpu_(kernels_.decode_attention_gpu(gpu)),
        kernel_grid_(replica.max_batch_tokens, TokenGrid::Spacing::tile_intervals),
        communication_grid_(replica.max_batch_tokens, TokenGrid::Spacing::geometric),
        host_s_(replica.host_overhead_s),
        dense_layers_(layout_.moe ? layout_.dense_layers : 0.0) {
    const ReplicaLinks links(cluster, replica.tp, replica.pp, layout_.attention_tp, replica.custom_all_reduce);
    memory_ = replica_memory(replica, layout_, kernels_, gpu, links.tensor_parallel_channels());
    if (layout_.attention_dp > 1) {
      tabulate_data_parallel_attention(links);
      return;
    }
    const double h = layout_.hidden, layers = layout_.layers;
    for (const std::int64_t point : kernel_grid_.points()) {
      const double t = double(point);
      const KernelTiming timing = graph_timing(t);
      compute_.push_back(all_layers_s(&ReplicaKernels::layer_kernels, t, timing) +
                         time_of(kernels_.embedding(t), timing) + time_of(kernels_.final_norm(t), timing));
      // the head's rows (t here) run in the graph of their iteration's tokens (>= rows)
      for (const KernelTiming head : kKernelTimings)
        (head == KernelTiming::per_call ? head_eager_ : head_graph_)
            .push_back(time_of(kernels_.lm_head(t), head) + time_of(kernels_.sampling(t), head));
    }
    for (const std::int64_t point : communication_grid_.points()) {
      const double t = double(point), activation_bytes = t * h * kActivationBytes;
      communication_.push_back((layers * kAllReducesPerLayer + 1.0) * links.all_reduce_s(activation_bytes) +
                               (layout_.pp - 1) * links.stage_send_s(kStageSendTensors * activation_bytes));
      head_communication_.push_back(links.all_gather_s(t * layout_.vocab_per_gpu * kActivationBytes));
    }
  }

  IterationTime iteration_time(std::span<const IterationEntry> batch) const override {
    IterationTime r;
    if (batch.empty()) return r;
    if (layout_.attention_dp > 1) return data_parallel_attention_time(batch);
    std::int64_t tokens = 0, decoding = 0, attention_kernels = 0;
    double cached = 0.0, attention_s = 0.0;
    for (const IterationEntry& e : batch) {
      check_entry(e);
      tokens += e.new_tokens;
      if (e.new_tokens == 1) {
        ++decoding;
        cached += double(e.context_tokens) + 1.0;
      } else {
        attention_s += prefill_attention_s(e);
        ++attention_kernels;
      }
    }
    check_tokens(tokens);
    if (decoding > 0) {
      attention_s += decode_attention_s(double(decoding), cached);
      ++attention_kernels;
    }
    // one launch per layer for every request's attention (vLLM V1's varlen FlashAttention)
    attention_s -= double(attention_kernels - 1) * gpu_.gemm_launch_s;
    const auto tokens_k = kernel_grid_.locate(tokens), rows_k = kernel_grid_.locate(std::int64_t(batch.size()));
    const auto tokens_c = communication_grid_.locate(tokens),
               rows_c = communication_grid_.locate(std::int64_t(batch.size()));
    const auto& head = graph_timing(double(tokens)) == KernelTiming::per_call ? head_eager_ : head_graph_;
    r.compute_s = TokenGrid::at(compute_, tokens_k) + layout_.layers * attention_s + TokenGrid::at(head, rows_k);
    r.communication_s = TokenGrid::at(communication_, tokens_c) + TokenGrid::at(head_communication_, rows_c);
    r.host_s = host_s_;
    r.time_s = r.compute_s + r.communication_s + r.host_s;
    return r;
  }

  const ReplicaMemory& memory() const override { return memory_; }

 private:
  static void check_entry(const IterationEntry& e) {
    if (e.new_tokens < 1 || e.context_tokens < 0)
      throw SimulationError("iteration entry with " + std::to_string(e.new_tokens) + " new tokens after " +
                            std::to_string(e.context_tokens) + ": expected >= 1 new token and a context >= 0");
  }

  void check_tokens(std::int64_t tokens) const {
    if (tokens > kernel_grid_.max_tokens())
      throw SimulationError("an iteration of " + std::to_string(tokens) +
                            " tokens exceeds the replica's max_batch_tokens " +
                            std::to_string(kernel_grid_.max_tokens()) + " (its activations were sized for that)");
  }

  // Data-parallel attention's tables: at kernel_grid_'s points, a rank's attention blocks, embedding
  // and final norm (compute_), head (head_graph_, head_eager_) and every rank's MLP blocks (mlp_); at
  // communication_grid_'s, a rank's all-reduces and all-to-alls by its tokens (communication_), its
  // logits' all-gather by its rows (head_communication_).
  void tabulate_data_parallel_attention(const ReplicaLinks& links) {
    const double h = layout_.hidden, layers = layout_.layers;
    std::array<ComputeOp, kMaxLayerKernels> ops{};
    for (const std::int64_t point : kernel_grid_.points()) {
      const double t = double(point);
      const KernelTiming timing = graph_timing(t);
      double attention_block_s = 0.0;
      const std::size_t count = kernels_.attention_block_kernels(t, ops.data());
      for (std::size_t j = 0; j < count; ++j)
        attention_block_s += time_of(ops[j], timing);
      compute_.push_back(layers * attention_block_s + time_of(kernels_.embedding(t), timing) +
                         time_of(kernels_.final_norm(t), timing));
      mlp_.push_back(all_layers_s(&ReplicaKernels::mlp_block_kernels, t, timing));
      for (const KernelTiming head : kKernelTimings)
        (head == KernelTiming::per_call ? head_eager_ : head_graph_)
            .push_back(time_of(kernels_.lm_head(t), head) + time_of(kernels_.sampling(t), head));
    }
    const double a = layout_.attention_tp;
    for (const std::int64_t point : communication_grid_.points()) {
      const double t = double(point), activation_bytes = t * h * kActivationBytes;
      communication_.push_back((layers + 1.0) * links.all_reduce_s(activation_bytes) +
                               layers * kAllToAllsPerLayer * links.all_to_all_s(activation_bytes * layout_.top_k / a));
      head_communication_.push_back(links.all_gather_s(t * layout_.vocab_per_gpu * kActivationBytes));
    }
  }

  IterationTime data_parallel_attention_time(std::span<const IterationEntry> batch) const {
    const auto ranks = static_cast<std::size_t>(layout_.attention_dp);
    std::array<std::int64_t, kMaxAttentionRanks> tokens{}, rows{}, decoding{}, kernels{};
    std::array<double, kMaxAttentionRanks> cached{}, attention_s{};
    std::int64_t total = 0;
    for (const IterationEntry& e : batch) {
      check_entry(e);
      std::size_t j = 0;
      for (std::size_t k = 1; k < ranks; ++k)
        if (tokens[k] < tokens[j]) j = k;
      tokens[j] += e.new_tokens;
      total += e.new_tokens;
      ++rows[j];
      if (e.new_tokens == 1) {
        ++decoding[j];
        cached[j] += double(e.context_tokens) + 1.0;
      } else {
        attention_s[j] += prefill_attention_s(e);
        ++kernels[j];
      }
    }
    check_tokens(total);
    const auto& head = graph_timing(double(total)) == KernelTiming::per_call ? head_eager_ : head_graph_;
    double rank_s = 0.0;
    std::int64_t busiest_tokens = 0, busiest_rows = 0;
    for (std::size_t j = 0; j < ranks; ++j) {
      if (rows[j] == 0) continue;  // an idle rank runs an empty batch
      if (decoding[j] > 0) {
        attention_s[j] += decode_attention_s(double(decoding[j]), cached[j]);
        ++kernels[j];
      }
      attention_s[j] -= double(kernels[j] - 1) * gpu_.gemm_launch_s;
      const double s = TokenGrid::at(compute_, kernel_grid_.locate(tokens[j])) + layout_.layers * attention_s[j] +
                       TokenGrid::at(head, kernel_grid_.locate(rows[j]));
      rank_s = std::max(rank_s, s);
      busiest_tokens = std::max(busiest_tokens, tokens[j]);
      busiest_rows = std::max(busiest_rows, rows[j]);
    }
    IterationTime r;
    r.compute_s = rank_s + TokenGrid::at(mlp_, kernel_grid_.locate(total));
    r.communication_s = TokenGrid::at(communication_, communication_grid_.locate(busiest_tokens)) +
                        TokenGrid::at(head_communication_, communication_grid_.locate(busiest_rows));
    r.host_s = host_s_;
    r.time_s = r.compute_s + r.communication_s + r.host_s;
    return r;
  }

  // `block` (a whole layer, or its MLP block) over every layer at `t` tokens: a MoE model's expert
  // layers, then its first dense layers (dense_layers_; a dense model's layers are all the first kind).
  double all_layers_s(std::size_t (ReplicaKernels::*block)(double, ComputeOp*, bool) const, double t,
                      KernelTiming timing) const {
    std::array<ComputeOp, kMaxLayerKernels> ops{};
    double s = 0.0;
    for (const auto& [dense, layers] : {std::pair{false, layout_.layers - dense_layers_}, {true, dense_layers_}}) {
      if (layers <= 0.0) continue;
      const std::size_t count = (kernels_.*block)(t, ops.data(), dense);
      double layer_s = 0.0;
      for (std::size_t j = 0; j < count; ++j)
        layer_s += time_of(ops[j], timing);
      s += layers * layer_s;
    }
    return s;
  }

  double time_of(const ComputeOp& op, KernelTiming timing = KernelTiming::per_call) const {
    return kernel_time(gpu_, op, timing).time_s;
  }

  // One prefill chunk's attention: its attention kernel, and MLA's up-projection of the chunk's keys.
  double prefill_attention_s(const IterationEntry& e) const {
    const double fresh = double(e.new_tokens), context = double(e.context_tokens);
    std::array<ComputeOp, 2> ops{};
    double s = time_of(kernels_.prefill_attention(fresh, context));
    for (std::size_t j = 0, n = kernels_.prefill_up_projection(context + fresh, ops.data()); j < n; ++j)
      s += time_of(ops[j]);
    return s;
  }

  // The decoding requests' attention kernel (on decode_gpu_: FlashMLA's figures for MLA), and MLA's
  // absorbed projections of their queries and outputs.
  double decode_attention_s(double requests, double cached) const {
    std::array<ComputeOp, 2> ops{};
    double s = kernel_time(decode_gpu_, kernels_.decode_attention(requests, cached), KernelTiming::per_call).time_s;
    for (std::size_t j = 0, n = kernels_.decode_absorption(requests, ops.data()); j < n; ++j)
      s += time_of(ops[j]);
    return s;
  }

  GpuSpec gpu_;
  ReplicaLayout layout_;
  ReplicaKernels kernels_;
  GpuSpec decode_gpu_;  // the GPU as the decode attention kernel runs on it (ReplicaKernels::decode_attention_gpu)
  TokenGrid kernel_grid_, communication_grid_;
  double host_s_ = 0.0;
  double dense_layers_ = 0.0;  // a MoE model's first dense layers (ReplicaLayout::dense_layers)
  ReplicaMemory memory_;
  // At kernel_grid_'s points, by token count: the layers' kernels but attention, the embedding and
  // final norm; by sampled rows: the LM head and sampler. At communication_grid_'s: the all-reduces and
  // sends by token count; the logits' all-gather by sampled rows.
  // (head_graph_: as a CUDA graph replays them, head_eager_: per call; replica_kernels.hpp).
  std::vector<double> compute_, head_graph_, head_eager_, communication_, head_communication_;
  std::vector<double> mlp_;  // data-parallel attention only: every rank's MLP blocks by the replica's tokens
};

}  // namespace

std::unique_ptr<IterationModel> make_iteration_model(const ReplicaConfig& replica, const GpuSpec& gpu,
                                                     const ClusterSpec& cluster) {
  return std::make_unique<KernelIterationModel>(replica, gpu, cluster);
}

}  // namespace clustersim
