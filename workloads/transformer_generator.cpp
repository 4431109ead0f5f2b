// The data-parallel training step of a decoder-only transformer as an ExecutionGraph.
//
// Every data-parallel replica does identical work, so the graph has one RankClass with all ranks and
// one communicator "dp" whose single group is all ranks in rank order (the ring order).
//
// One step, per rank:
//   for each micro-batch (global_batch / (micro_batch * dp) of them, sequentially on stream 0):
//     forward:  embedding; per layer: norm, QKV GEMM, fused attention, output-projection GEMM,
//               residual add, norm, [MoE router GEMM], MLP up GEMM (swiglu: gate and up fused),
//               activation, MLP down GEMM, residual add; final norm, logits GEMM, loss
//     backward: loss, logits; per layer in reverse: every GEMM as two GEMMs of the forward's flops,
//               dgrad (the input's gradient) then wgrad (the weight's gradient); fused attention
//               backward = 2.5 x the forward flops (FlashAttention-2's backward recomputes QK^T and
//               the softmax and runs five matmuls to the forward's two: Dao 2023); norms and
//               elementwise ops read their saved input and the incoming gradient and write the
//               input's gradient; embedding backward scatter-adds into the fp32 gradient.
//               recompute = full re-runs the layer's forward before its backward; selective re-runs
//               only the attention core before the attention backward.
//   gradient all-reduce (stream 1, communicator "dp", only when dp > 1): the gradients are grouped
//     into buckets of bucket_size_params parameters (Megatron's default max(40e6, 1e6 * dp)) in the
//     order backward produces them (output layer, last transformer layer, ..., embedding); a bucket
//     closes when it reaches the size (a parameter tensor is never split, so a bucket may be larger),
//     the last one holds the rest. A bucket is all-reduced as fp32 main grads (training_state.hpp).
//     With overlap_grad_reduce, a bucket's all-reduce depends on the backward op that completed it,
//     during the LAST micro-batch only (earlier micro-batches accumulate locally, as Megatron's
//     no_sync); without overlap every all-reduce depends on the last backward op.
//   optimizer step (stream 0): one fused kernel over the rank's parameters (ZeRO-sharded when
//     zero_stage >= 1), after all all-reduces.
//
// Kernel sizes: GEMM C[m x n] = A[m x k] B[k x n], flops 2mnk, bytes (mk + kn + mn) x element size.
// Tokens per micro-batch T = micro_batch x seq_len. Every other kernel: operands read plus results
// written at the precision's element size (fp32 where the kernel keeps fp32: the loss's softmax,
// the attention's log-sum-exp, main grads). Vector flops of memory-bound kernels are estimates (per
// element: norm 8, residual 1, activation per kActivations, loss 5): only the kernel model's second
// roofline term uses them. Dropout is not modelled (off in current LLM recipes).
// MoE (ep = 1): tokens routed to top_k experts without dropping (dropless, capacity_factor unused),
// the experts' GEMMs as one grouped GEMM of T x top_k rows (wgrad: a batch of one GEMM per expert
// with T x top_k / E tokens each); token permutation is not modelled yet.
#include "workloads/transformer_generator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "workloads/training_state.hpp"
#include "workloads/transformer_math.hpp"

namespace clustersim {
namespace {

// Activations: how many T x f inputs they read and their vector flops per output element.
struct ActivationInfo {
  std::string_view name;
  double inputs;  // 2 for gated (swiglu: gate and up)
  double flops_per_element;
};
constexpr ActivationInfo kActivations[] = {
    {"gelu", 1.0, 8.0},  // tanh approximation
    {"swiglu", 2.0, 6.0},
    {"squared_relu", 1.0, 2.0},
};

const ActivationInfo& activation_info(const ModelSpec& m) {
  for (const auto& a : kActivations) {
    if (a.name == m.activation) return a;
  }
  return kActivations[0];  // the parser accepts only the names of this table
}

constexpr double kNormFlopsPerElement = 8.0;
constexpr double kResidualFlopsPerElement = 1.0;
constexpr double kLossFlopsPerElement = 5.0;
constexpr double kFp32Bytes = 4.0;
constexpr double kTokenIdBytes = 4.0;
// FlashAttention-2 backward flops relative to its forward (see the top of the file).
constexpr double kAttentionBackwardFactor = 2.5;

std::uint32_t u32(double v) {
  return static_cast<std::uint32_t>(v);
}

class StepBuilder {
 public:
  StepBuilder(const WorkloadSpec& spec, OpTable& ops, std::uint16_t dp_communicator)
      : spec_(spec),
        m_(spec.model),
        ops_(ops),
        dp_communicator_(dp_communicator),
        precision_(spec.training.precision),
        e_(bytes_per_element(spec.training.precision)),
        act_(activation_info(spec.model)),
        layer_groups_(layer_parameter_groups(spec.model)),
        embedding_groups_(embedding_parameter_groups(spec.model)),
        bucket_params_(static_cast<double>(spec.parallelism.effective_bucket_size_params())),
        reduce_(spec.parallelism.dp > 1) {
    b_ = spec.training.micro_batch;
    s_ = m_.seq_len;
    T_ = b_ * s_;
    h_ = m_.hidden;
    d_ = m_.effective_head_dim();
    q_ = m_.heads * d_;
    kv_ = m_.effective_kv_heads() * d_;
    moe_ = m_.moe.experts > 0;
    f_ = moe_ && m_.moe.expert_ffn_hidden > 0 ? m_.moe.expert_ffn_hidden : m_.ffn_hidden;
    expert_tokens_ = moe_ ? T_ * m_.moe.top_k : T_;
  }

  void build() {
    const std::int64_t micro_batches = spec_.micro_batches();
    for (std::int64_t mb = 0; mb < micro_batches; ++mb) {
      const bool last = mb + 1 == micro_batches;
      forward();
      backward(last);
    }
    if (reduce_ && !spec_.parallelism.overlap_grad_reduce) {
      for (double params : pending_buckets_)
        all_reduce(params, last_compute_);
    }
    optimizer_step();
  }

 private:
  // --- op helpers -------------------------------------------------------------------------------
  OpId compute(const std::string& name, KernelClass kernel, double flops, double bytes, std::uint32_t m = 0,
               std::uint32_t n = 0, std::uint32_t k = 0, std::uint32_t batch = 1) {
    ComputeOp op;
    op.name = name;
    op.kernel = kernel;
    op.precision = precision_;
    op.flops = flops;
    op.bytes = bytes;
    op.m = m;
    op.n = n;
    op.k = k;
    op.batch = batch;
    op.stream = kComputeStream;
    return chain(op, {});
  }

  OpId chain(const ComputeOp& op, std::vector<OpId> extra_deps) {
    if (have_compute_) extra_deps.insert(extra_deps.begin(), last_compute_);
    last_compute_ = ops_.add_compute(op, extra_deps);
    have_compute_ = true;
    return last_compute_;
  }

  // C[m x n] = A[m x k] B[k x n], `batch` times. `flops` overrides 2mnk*batch when the shape is a
  // rounded description of a grouped GEMM.
  OpId gemm(const std::string& name, double m, double n, double k, double batch = 1.0, double flops = -1.0) {
    const double f = flops >= 0.0 ? flops : 2.0 * m * n * k * batch;
    const double bytes = (m * k + k * n + m * n) * batch * e_;
    return compute(name, KernelClass::gemm, f, bytes, u32(m), u32(n), u32(k), u32(batch));
  }

  // Forward GEMM Y[m x n] = X[m x k] W[k x n] and its two backward GEMMs: dgrad dX = dY W^T
  // (m x k, inner n) and wgrad dW = X^T dY (k x n, inner m). Returns the wgrad op.
  void gemm_forward(const std::string& phase, const std::string& what, double m, double n, double k) {
    gemm(phase + "." + what, m, n, k);
  }
  OpId gemm_backward(const std::string& what, double m, double n, double k) {
    gemm("bwd." + what + ".dgrad", m, k, n);
    return gemm("bwd." + what + ".wgrad", k, n, m);
  }

  OpId norm(const std::string& name, bool backward) {
    const double elements = double(T_) * h_;
    return compute(name, KernelClass::normalization, kNormFlopsPerElement * elements,
                   (backward ? 3.0 : 2.0) * elements * e_);
  }

  OpId residual(const std::string& name) {
    const double elements = double(T_) * h_;
    return compute(name, KernelClass::elementwise, kResidualFlopsPerElement * elements, 3.0 * elements * e_);
  }

  OpId activation(const std::string& name, bool backward) {
    const double out = double(expert_tokens_) * f_;
    const double in = act_.inputs * out;
    const double bytes = backward ? (2.0 * in + out) * e_ : (in + out) * e_;
    return compute(name, KernelClass::elementwise, act_.flops_per_element * out, bytes);
  }

  // Fused attention (FlashAttention): per (sequence, head), S = Q K^T (s x s, inner d), then P V.
  OpId attention(const std::string& name, bool backward) {
    const double forward_flops = 4.0 * double(b_) * s_ * s_ * q_;
    const double qkv_bytes = double(T_) * (q_ + 2.0 * kv_) * e_;
    const double out_bytes = double(T_) * q_ * e_;
    const double lse_bytes = double(b_) * m_.heads * s_ * kFp32Bytes;
    const double flops = backward ? kAttentionBackwardFactor * forward_flops : forward_flops;
    // backward reads Q, K, V, O, dO and the log-sum-exp, writes dQ, dK, dV
    const double bytes = backward ? 2.0 * qkv_bytes + 2.0 * out_bytes + lse_bytes : qkv_bytes + out_bytes + lse_bytes;
    return compute(name, KernelClass::attention, flops, bytes, s_, s_, d_, b_ * m_.heads);
  }

  // --- the step -------------------------------------------------------------------------------
  void forward() {
    const double elements = double(T_) * h_;
    const bool positions = embedding_groups_.position > 0.0;
    compute("fwd.embedding", KernelClass::embedding, positions ? elements : 0.0,
            T_ * kTokenIdBytes + (positions ? 3.0 : 2.0) * elements * e_);
    for (int l = 0; l < m_.layers; ++l)
      forward_layer("fwd");
    norm("fwd.final_norm", false);
    gemm("fwd.logits", T_, m_.vocab, h_);
    const double logits = double(T_) * m_.vocab;
    // reads the logits, keeps the fp32 softmax for the backward, writes one fp32 loss per token
    compute("fwd.loss", KernelClass::loss, kLossFlopsPerElement * logits,
            logits * e_ + logits * kFp32Bytes + T_ * kFp32Bytes);
  }

  void forward_layer(const std::string& phase) {
    norm(phase + ".ln1", false);
    gemm_forward(phase, "qkv", T_, q_ + 2.0 * kv_, h_);
    attention(phase + ".attention", false);
    gemm_forward(phase, "attn_out", T_, h_, q_);
    residual(phase + ".residual1");
    norm(phase + ".ln2", false);
    if (moe_) gemm_forward(phase, "router", T_, m_.moe.experts, h_);
    gemm_forward(phase, "mlp_up", expert_tokens_, act_.inputs * f_, h_);
    activation(phase + ".activation", false);
    gemm_forward(phase, "mlp_down", expert_tokens_, h_, f_);
    residual(phase + ".residual2");
  }

  void backward(bool last_micro_batch) {
    grads_ready_ = last_micro_batch && reduce_;
    const double logits = double(T_) * m_.vocab;
    compute("bwd.loss", KernelClass::loss, kLossFlopsPerElement * logits, logits * kFp32Bytes + logits * e_);
    // Tied embeddings: the output layer's gradient is completed by the embedding backward.
    grads(embedding_groups_.output, gemm_backward("logits", T_, m_.vocab, h_));
    grads(embedding_groups_.final_norm, norm("bwd.final_norm", true));
    for (int l = m_.layers - 1; l >= 0; --l)
      backward_layer();
    const double elements = double(T_) * h_;
    const double tables = embedding_groups_.position > 0.0 ? 2.0 : 1.0;
    // reads the incoming gradient, scatter-adds (read + write) into the fp32 gradient of each table
    grads(embedding_groups_.word + embedding_groups_.position,
          compute("bwd.embedding", KernelClass::embedding, tables * elements,
                  elements * e_ + tables * 2.0 * elements * kFp32Bytes));
    // The embedding backward is the last op that produces gradients: the last bucket closes there.
    if (grads_ready_ && bucket_fill_ > 0.0) close_bucket(last_compute_);
  }

  void backward_layer() {
    const std::string& recompute = spec_.training.recompute;
    if (recompute == "full") forward_layer("recompute");
    residual("bwd.residual2");
    if (moe_) {
      // wgrad per expert: dW_e = X_e^T dY_e with T * top_k / E tokens each (a batch of E GEMMs)
      const double experts = m_.moe.experts;
      const double per_expert = std::ceil(double(expert_tokens_) / experts);
      gemm("bwd.mlp_down.dgrad", expert_tokens_, f_, h_);
      grads(layer_groups_.mlp_down,
            gemm("bwd.mlp_down.wgrad", f_, h_, per_expert, experts, 2.0 * double(expert_tokens_) * f_ * h_));
      activation("bwd.activation", true);
      gemm("bwd.mlp_up.dgrad", expert_tokens_, h_, act_.inputs * f_);
      grads(layer_groups_.mlp_up, gemm("bwd.mlp_up.wgrad", h_, act_.inputs * f_, per_expert, experts,
                                       2.0 * double(expert_tokens_) * h_ * act_.inputs * f_));
      grads(layer_groups_.router, gemm_backward("router", T_, experts, h_));
    } else {
      grads(layer_groups_.mlp_down, gemm_backward("mlp_down", T_, h_, f_));
      activation("bwd.activation", true);
      grads(layer_groups_.mlp_up, gemm_backward("mlp_up", T_, act_.inputs * f_, h_));
    }
    grads(layer_groups_.norms / 2.0, norm("bwd.ln2", true));
    residual("bwd.residual1");
    grads(layer_groups_.attention_out, gemm_backward("attn_out", T_, h_, q_));
    if (recompute == "selective") attention("recompute.attention", false);
    attention("bwd.attention", true);
    grads(layer_groups_.qkv, gemm_backward("qkv", T_, q_ + 2.0 * kv_, h_));
    grads(layer_groups_.norms / 2.0, norm("bwd.ln1", true));
  }

  // `params` gradients are final once `op` has run (last micro-batch only): fill the bucket.
  void grads(double params, OpId op) {
    if (!grads_ready_ || params <= 0.0) return;
    bucket_fill_ += params;
    if (bucket_fill_ >= bucket_params_) close_bucket(op);
  }

  void close_bucket(OpId completed_by) {
    if (spec_.parallelism.overlap_grad_reduce)
      all_reduce(bucket_fill_, completed_by);
    else
      pending_buckets_.push_back(bucket_fill_);
    bucket_fill_ = 0.0;
  }

  void all_reduce(double params, OpId dep) {
    CollectiveOp op;
    op.name = "dp.grad_all_reduce";
    op.collective = CollectiveKind::all_reduce;
    op.communicator = dp_communicator_;
    op.bytes = params * parameter_state_bytes(spec_.training).gradients;
    op.stream = 1;
    const OpId deps[] = {dep};
    all_reduces_.push_back(ops_.add_collective(op, deps));
  }

  void optimizer_step() {
    const double params = total_parameters(m_) / (spec_.parallelism.zero_stage >= 1 ? spec_.parallelism.dp : 1);
    const OptimizerStepCost cost = optimizer_step_cost(spec_.training);
    ComputeOp op;
    const std::string name = "optimizer." + spec_.training.optimizer;
    op.name = name;
    op.kernel = KernelClass::optimizer;
    op.precision = Precision::fp32;
    op.flops = params * cost.flops;
    op.bytes = params * cost.bytes;
    op.stream = kComputeStream;
    chain(op, all_reduces_);
  }

  const WorkloadSpec& spec_;
  const ModelSpec& m_;
  OpTable& ops_;
  std::uint16_t dp_communicator_;
  Precision precision_;
  double e_;  // bytes per element of the compute precision
  const ActivationInfo& act_;
  LayerParameterGroups layer_groups_;
  EmbeddingParameterGroups embedding_groups_;
  double bucket_params_;
  bool reduce_;  // dp > 1

  std::uint32_t b_ = 0, s_ = 0, T_ = 0, h_ = 0, d_ = 0, q_ = 0, kv_ = 0, f_ = 0, expert_tokens_ = 0;
  bool moe_ = false;

  OpId last_compute_ = 0;
  bool have_compute_ = false;
  bool grads_ready_ = false;
  double bucket_fill_ = 0.0;
  std::vector<double> pending_buckets_;
  std::vector<OpId> all_reduces_;
};

}  // namespace

ExecutionGraph generate_transformer_training(const WorkloadSpec& spec, int world_size) {
  const ParallelismSpec& p = spec.parallelism;
  if (p.dp <= 0 || std::int64_t{p.tp} * p.pp * p.cp * p.dp != world_size)
    throw SimulationError("generate_transformer_training: the workload's parallelism is not resolved for " +
                          std::to_string(world_size) + " GPUs (call resolve_parallelism first)");
  if (p.tp != 1 || p.pp != 1 || p.cp != 1 || p.ep != 1)
    throw SpecError(spec.source_file, "/parallelism",
                    "only data parallelism is generated so far (tp, pp, cp and ep must be 1)");

  ExecutionGraph graph(world_size);
  std::vector<int> ranks(static_cast<std::size_t>(world_size));
  std::iota(ranks.begin(), ranks.end(), 0);
  const std::uint16_t dp = graph.add_communicator(Communicator{"dp", {ranks}});
  RankClass& all = graph.add_class("all ranks", ranks);
  StepBuilder(spec, all.ops, dp).build();
  return graph;
}

}  // namespace clustersim
