// The training step of a decoder-only transformer under data, tensor (+ sequence), pipeline, context
// and expert parallelism and ZeRO, as an ExecutionGraph: the ops every rank runs, Megatron-LM style.
//
// Rank classes. Ranks of one pipeline stage do the same work (tensor-parallel peers run the same
// kernels on their shards, data-, context- and expert-parallel replicas on their samples), so the
// graph has one class per stage. Communicators (rank_layout.hpp places the ranks):
//   tp    tensor-parallel groups             all-reduce, or all-gather + reduce-scatter with sequence_parallel
//   cp    context-parallel groups            ring attention: K and V blocks sent to the next rank; with
//                                            cp_comm all_gather, one K/V all-gather per layer each way
//                                            and dK/dV passed on in fp32 (context_parallel_comm.cpp)
//   ep    expert-parallel groups             all-to-all dispatch and combine around the experts
//   etp   expert tensor-parallel groups      all-gather of the dispatched rows, reduce-scatter of the experts' outputs
//   dp    data x context parallel groups     gradients of the dense parameters (all-reduce; ZeRO: reduce-scatter)
//   edp   expert data-parallel groups        gradients of the experts (ep > 1, etp != tp or cp > 1)
// The ep, etp and edp groups come from the expert layers' layout of the same ranks, etp x ep x edp
// (rank_layout.hpp: Megatron-Core's expert rank generator).
//   pp    pipeline groups (one rank a stage) activations forward, gradients backward, point to point
//   embd  first and last stage               the tied word embedding's gradient (pp > 1, tied embeddings)
//
// Streams of a rank: 0 compute (the tensor-parallel collectives and expert all-to-alls run here too:
// they sit on the critical path as in Megatron-LM without communication overlap), 1 gradient and
// ZeRO parameter collectives, 2 tensor-parallel collectives overlapped with GEMMs (tp_comm_overlap), 3/4 pipeline sends
// forward/backward, 5/6 pipeline receives forward/backward (posted ahead, like Megatron's batched isend/irecv), 7/8
// context-parallel sends and receives, 9 ZeRO-3 parameter all-gathers (prefetched one layer ahead).
//
// One step, per stage (pipeline_schedule.hpp gives the order of its forward and backward units):
//   forward unit (micro-batch i, chunk c): receive the activation (unless the first chunk), the
//     chunk's layers, send the activation to the next stage (unless the last chunk). With tp > 1 and
//     no sequence parallelism each tensor-parallel rank sends 1/tp of it and the receivers all-gather
//     it (Megatron-LM's default scatter-gather between stages). The first chunk
//     starts with the embedding, the last ends with the final norm, the logits GEMM and the loss.
//   backward unit: receive the output's gradient (unless the last chunk), the layers in reverse,
//     send the input's gradient back (unless the first chunk).
//   layer forward: norm, [sp: all-gather], QKV GEMM, fused attention (cp: one block per ring step),
//     output-projection GEMM, [tp: all-reduce | sp: reduce-scatter], residual add, norm, [sp:
//     all-gather], MLP up GEMM, activation, MLP down GEMM, [tp: all-reduce | sp: reduce-scatter], residual
//     add; a MoE layer instead: router GEMM, permutation, ep all-to-all dispatch, [etp: all-gather],
//     expert GEMMs, [etp: reduce-scatter], ep all-to-all combine, un-permutation, [the shared experts
//     between the tp all-gather and reduce-scatter], residual add.
//   layer backward: the mirror image; every GEMM becomes dgrad then wgrad; the tensor-parallel
//     collectives become their conjugates (Megatron's f/g operators: an all-reduce of the input's
//     gradient before each column-parallel layer; with sp, an all-gather of the output's gradient after
//     each row-parallel layer, the all-gather of the column-parallel input again for the wgrad and a
//     reduce-scatter of its dgrad). recompute full: the layer's forward again first; selective: the
//     attention core again (Megatron), or with training.selective_recompute matmul_outputs
//     (torchtitan's op-level policy, which keeps Q, V, attention's output, the gate or up and the down
//     projection) the rest of the layer's forward first: the norms, K, the attention output projection,
//     the first residual add, the SwiGLU up projection (the GeLU MLP: its down projection) and the
//     activation; recomputed GEMMs on the local tokens, without the tensor-parallel collectives.
//   gradients: grouped into buckets of bucket_size_params in the order backward produces them (a
//     parameter tensor is never split), per model chunk; a bucket is reduced once its last gradient is
//     final (the last micro-batch's backward; earlier micro-batches accumulate locally, Megatron's
//     no_sync), as fp32 main grads (training_state.hpp): all-reduce, or reduce-scatter with ZeRO >= 1.
//     Without overlap_grad_reduce every reduction waits for the stage's last backward op.
//   tied embeddings with pp > 1: the first and last stages all-reduce the word embedding's gradient.
//   optimizer_offload cpu (optimizer_offload.cpp): instead of the fused kernel, three ops on the compute
//     stream one after the other: "optimizer.host_copy_out" (the shard's gradients to host memory,
//     shard x gradient bytes), "optimizer.<name>.host_update" (the update on the CPU, shard x the fused
//     step's bytes and flops) and "optimizer.host_copy_in" (the updated 16-bit weights back, shard x
//     weight bytes); the kernel model times the copies over the host link and the update at the host
//     memory's bandwidth (sim/hardware/kernel_model.cpp).
//   optimizer step: one fused kernel over the rank's parameters (/ dp * cp with ZeRO >= 1). ZeRO 1 and
//     2 then all-gather the updated bf16 weights (overlap_param_gather: the previous step's gathers
//     run at the start of this one, in buckets, each layer's first forward waiting for its bucket). ZeRO 3 all-gathers
//     each layer's weights before its forward and its backward, every micro-batch (FSDP without reshard_after_forward =
//     false), and the parameters outside the layers (the root unit: embeddings, final norm, output layer)
//     once per micro-batch before the forward needs them ("dp.param_all_gather.root").
//
// Kernel sizes: GEMM C[m x n] = A[m x k] B[k x n], flops 2mnk, bytes (mk + kn + mn) x element size.
// Tokens per micro-batch and rank T = micro_batch x seq_len / cp; norms and residual adds see T / tp
// with sequence parallelism. Every other kernel: operands read plus results written at the
// precision's element size (fp32 where the kernel keeps fp32: the loss's softmax, the attention's
// log-sum-exp, main grads). Vector flops of memory-bound kernels are estimates (per element: norm 8,
// residual 1, activation per kActivations, loss 5): only the kernel model's second roofline term uses
// them. Dropout (training.dropout > 0): a one-byte mask per element written by the forward and read
// by the backward of the residual adds (Megatron's fused bias-dropout-add) and, for the unfused
// attention, a dropout kernel over the s x s probabilities (flash attention fuses it). Fused
// attention backward = 2.5 x the forward flops (FlashAttention-2's backward recomputes
// QK^T and the softmax and runs five matmuls to the forward's two: Dao 2023).
// fp8 (training.precision "fp8", Transformer Engine; recipes and sources in fp8_recipe.cpp): the
// linear layers' GEMMs (QKV, attention output, MLP up and down, the experts; forward, dgrad and wgrad)
// run in the recipe's dtype, reading quantized operands (element + block-scale bytes) and writing
// bf16: bytes = (mk + kn) x (element + scale) + mn x 2. Everything else stays bf16 (the output layer,
// the router, attention, norms, activations, collectives; e = 2). Per linear layer, each bf16 tensor
// an fp8 GEMM reads is quantized once by a cast-transpose kernel (elementwise, "<gemm>.cast_*"):
//   cast_input   X,  tokens x in   (the local shard: with sequence parallelism TE casts before the
//                                   all-gather), every forward (and recompute) pass
//   cast_weight  W,  in x out      first micro-batch of the step with fp8_weight_cache (else every
//                                   forward and recompute pass)
//   cast_grad    dY, tokens x out  every backward pass
// reading 2 bytes and writing quantized_copies_bytes per element (row-wise + column-wise copies).
// current and nvfp4: an amax kernel ("<gemm>.amax_*") reads the tensor (2 bytes per element) before
// its cast. delayed: one "fp8.scale_update" kernel after each forward and backward unit, reading and
// writing the amax history (kAmaxHistory fp32) of 3 tensor slots per GEMM (forward) or 2 (backward).
// blockwise (DeepSeek-V3's fine-grained fp8): the operands' scales are per 1x128 tile of X and dY
// (4/128 bytes per element) and per 128x128 block of W (4/16384); its GEMMs carry fp8_blockwise (timed
// at gemm_fp8_blockwise_efficiency: the CUDA-core promotion every 128 K-elements).
// Not modelled: TE's fusions of the cast into the preceding LayerNorm / activation kernels and the fp8
// all-gathers of sequence parallelism, the amax all-reduce of delayed scaling.
// torchao's tensorwise recipe (fp8_recipe tensorwise, torchtitan's Float8): the same per-operand
// kernels with torchao's bytes (fp8_cast_bytes: an amax pass where not fused, the cast, and eager only,
// "bwd.<gemm>.fp8_transpose": the transposed fp8 copies of dY, X and W its backward GEMMs need).
// Loss: the stack's cross entropy (training.cross_entropy, memory_recipe.cpp) moves its kernels'
// bytes per logit forward and backward, plus one fp32 loss per token.
// MoE (Megatron-Core's MoELayer with the all-to-all dispatcher, expert tensor parallelism etp): each
// rank routes its sequence-parallel shard of the tokens, T_sp = T / tp (tp > 1 needs sequence
// parallelism, as Megatron-Core); the dispatch and combine all-to-alls move the busiest rank's routed
// rows R (moe_routing.hpp: T_sp x top_k x the load distribution's imbalance, capped at capacity_factor
// x T_sp x top_k with token_dropping); with etp > 1 the etp ranks all-gather them (R etp rows) and
// reduce-scatter the experts' outputs; the experts' GEMMs are one grouped GEMM of R etp rows through
// f_e / etp columns; wgrad a batch of one GEMM per local expert.
// Around the all-to-alls, Megatron-Core's token permutation (after the router, before the dispatch)
// and un-permutation (after the combine), and their mirror images in the backward: elementwise
// kernels reading and writing the rank's T_sp x top_k routed copies, 2 T_sp top_k h e bytes each. Shared
// experts (model.moe.shared_experts): a tensor-parallel MLP of shared_experts x f_e over the layer's
// T tokens after the combine (Megatron-Core's SharedExpertMLP without overlap), its gradients with the
// dense ones. A MoE model's first_dense_layers run the dense MLP of ffn_hidden (select_layer).
// Multi-token prediction (model.mtp_depth, DeepSeek-V3 sec. 2.2): after the main head of the last
// chunk, each module's norms, shifted-token embedding, 2h -> h projection, one layer like the model's
// last and the shared head with its own final norm and loss (mtp_forward); backward, the modules
// deepest first before the main head (mtp_backward). With pp > 1 and untied embeddings the last stage
// keeps a copy of the word embedding, all-reduced with the first stage's as a tied one is.
// Multi-head latent attention (model.attention_type mla; weights in transformer_math.cpp): instead of the
// QKV GEMM, the replicated down projections q_down (h -> q_lora_rank) and kv_down (h -> kv_lora_rank +
// qk_rope_head_dim) on the gathered input, an RMSNorm on each latent, the column-parallel up
// projections q_up (-> heads x (qk_nope + qk_rope)) and kv_up (-> heads x (qk_nope + v)); the
// attention's scores over qk_nope + qk_rope dimensions and values of v_head_dim per head (flops
// 2 b q kv heads (d_qk + d_v), halved causal); the output projection from heads x v_head_dim.
// Backward: each projection's dgrad and wgrad in reverse, the latent norms' backward, then one tp
// reduction of the input's gradient.
// Vocabulary-parallel cross-entropy (tp > 1): three all-reduces of one fp32 per token (max, target
// logit, sum of exponentials).
//
// The software stack (training.stack, software_stack.hpp; each choice sourced in its profile):
//   fused.bias_activation false (models with biases): a bias-add kernel before the activation, reading
//     and writing its T x f inputs (Megatron without --bias-gelu-fusion); the backward is unchanged
//     (the bias gradient is a reduction either way).
//   fused.bias_dropout_add false: the residual add no longer carries the dropout mask; instead a bias
//     add (models with biases: reads and writes T x h) and a dropout kernel (dropout > 0: reads x,
//     writes y and the one-byte mask) run before it; backward, a dropout kernel (reads the gradient
//     and the mask, writes the gradient) before the residual's.
//   fused.masked_softmax false (unfused attention): scale, mask and softmax as three kernels over the
//     s x s scores (each reads and writes them); backward: softmax, mask and scale backward likewise.
//   memory_passes (stack_memory_passes.hpp), ZeRO-3 only for the FSDP copies:
//     fsdp_all_gather_copy_out: after each layer's parameter all-gather, "dp.param_all_gather.copy_out"
//       on the compute stream reads the gathered buffer and writes the unsharded parameters (2 x the
//       16-bit weight bytes of the layer's parameters). Not modelled: the copy-in (the shard cast to
//       16 bits and copied into the all-gather buffer), which runs on its own stream beside the compute.
//     fsdp_reduce_scatter_copy_in: before each gradient reduce-scatter, "dp.grad_reduce_scatter.copy_in"
//       on the compute stream reads the 16-bit unsharded gradients and writes the reduce-scatter input
//       in the reduce dtype (16-bit weight bytes + gradient bytes per parameter).
//     optimizer foreach: "optimizer.<name>.foreach_passes" after the fused-equivalent optimizer kernel,
//       the bytes the foreach passes move beyond it (foreach_optimizer_extra_bytes).
//   fused.rmsnorm false (Llama-style models, not training.torch_compile): each norm is PyTorch's eager
//     RMSNorm, one elementwise-class op carrying its kernels' bytes (workloads/eager_pytorch_ops.cpp).
//   fused.rope false (likewise): an "eager_rope" op over q and k after the QKV GEMM, in the op-level
//     recompute and before the QKV backward (fused: the rotation is not a kernel of its own).
//   fused.gqa false (kv_heads < heads): a "repeat_kv" op after the rotary embedding (and in the
//     op-level recompute) copies K and V to every query head, and its backward sums them back after
//     the attention backward; the attention reads, and context parallelism moves, the repeated K/V.
//   optimizer_kernels per_tensor: the optimizer step as one kernel per parameter tensor of the rank
//     (its share of the shard's bytes and flops): 12 tensors per GPT layer (weight and bias of QKV,
//     projection, MLP up and down, and of two LayerNorms), 6 per Llama layer (no biases, RMSNorm),
//     2 more per MoE expert and 1 for the router; the embeddings, final norm and output layer add
//     theirs on the first and last stage.
//   pipeline_p2p blocking: the compute stream waits for each send to complete, and a receive is
//     posted only when the compute stream reaches it (torch.distributed send/recv).
//   host_syncs (RankClass::host_syncs: the host waits there until its GPU has finished every earlier op):
//     micro_batch_load: before the first op of each micro-batch's forward on model chunk 0 (every rank
//     at pp 1), and after the receive of activations on the last chunk; partitioned_pipeline_transfer
//     (tp > 1, pp > 1): after each receive of activations or gradients (before the tensor-parallel
//     all-gather of the received part) and before each send.
//   step.grad_norm: before the optimizer, one pass over the rank's fp32 gradients (its shard with
//     ZeRO; reads 4 bytes and does 2 flops per parameter) and an all-reduce of one fp32 over tp and,
//     with ZeRO >= 1, over dp (the norm of a sharded gradient).
//   step.loss_all_reduce per_micro_batch: after each loss, an all-reduce of two fp32 (loss and token
//     count) over dp on the compute stream (Megatron's loss_func).
#include "workloads/transformer_generator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/named_table.hpp"
#include "workloads/attention_implementation.hpp"
#include "workloads/context_parallel_comm.hpp"
#include "workloads/eager_pytorch_ops.hpp"
#include "workloads/fp8_recipe.hpp"
#include "workloads/memory_recipe.hpp"
#include "workloads/moe_routing.hpp"
#include "workloads/optimizer_offload.hpp"
#include "workloads/parameter_sharding.hpp"
#include "workloads/pipeline_schedule.hpp"
#include "workloads/rank_layout.hpp"
#include "workloads/software_stack.hpp"
#include "workloads/stack_memory_passes.hpp"
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
  return find_named(std::span<const ActivationInfo>(kActivations), m.activation, "activation");
}

constexpr double kNormFlopsPerElement = 8.0;
// Eager rotary embedding: a complex multiply, 6 flops per complex pair = 3 per element, plus 2 casts.
constexpr double kRopeFlopsPerElement = 3.0;
constexpr double kResidualFlopsPerElement = 1.0;
constexpr double kLossFlopsPerElement = 5.0;
constexpr double kFp32Bytes = 4.0;
constexpr double kTokenIdBytes = 4.0;
constexpr double kMaskBytes = 1.0;  // a dropout mask element (uint8, as PyTorch keeps it)
// fp8 delayed scaling: amax history length (NeMo's fp8_amax_history_len 1024) and the tensor slots
// Transformer Engine keeps per GEMM in the forward (input, weight, output) and backward (output and
// input gradients).
constexpr double kAmaxHistory = 1024.0;
constexpr double kForwardFp8Slots = 3.0;
constexpr double kBackwardFp8Slots = 2.0;
constexpr double kLinearLayersPerLayer = 4.0;  // QKV, attention output, MLP up, MLP down
// Vocabulary-parallel cross-entropy: all-reduces of one fp32 per token.
constexpr int kCrossEntropyAllReduces = 3;
// Megatron's loss_func reduces the loss and the token count over dp: two fp32.
constexpr double kLossReportBytes = 2.0 * kFp32Bytes;
// Global gradient norm: one fp32 reduced; per parameter it reads the fp32 gradient, 2 flops.
constexpr double kGradNormFlopsPerParameter = 2.0;
// Parameter tensors (optimizer_kernels per_tensor; see the top of the file).
constexpr double kGptLayerTensors = 12.0;
constexpr double kLlamaLayerTensors = 6.0;
constexpr double kTensorsPerExpert = 2.0;

// Streams (see the top of the file).
constexpr std::uint8_t kGradStream = 1;
constexpr std::uint8_t kTpStream = 2;
constexpr std::uint8_t kSendForwardStream = 3;
constexpr std::uint8_t kSendBackwardStream = 4;
constexpr std::uint8_t kRecvForwardStream = 5;
constexpr std::uint8_t kRecvBackwardStream = 6;
constexpr std::uint8_t kContextSendStream = 7;
constexpr std::uint8_t kContextRecvStream = 8;
constexpr std::uint8_t kParamGatherStream = 9;

// Point-to-point tags: the channels of one pair of stages.
constexpr std::uint32_t kActivationTag = 0;
constexpr std::uint32_t kGradientTag = 1;
constexpr std::uint32_t kKeyValueTag = 2;
constexpr std::uint32_t kKeyValueGradTag = 3;

constexpr std::uint16_t kNone = UINT16_MAX;

struct Communicators {
  std::uint16_t tp = kNone, cp = kNone, ep = kNone, dp = kNone, edp = kNone, pp = kNone, embd = kNone;
  std::uint16_t etp = kNone;         // the expert tensor-parallel groups (etp > 1)
  std::uint16_t tp_overlap = kNone;  // the tp groups as TE userbuffers (tp_comm_overlap): Communicator::userbuffers
};

std::uint32_t u32(double v) {
  return static_cast<std::uint32_t>(v);
}

class StageBuilder {
 public:
  StageBuilder(const WorkloadSpec& spec, const StackProfile& stack, const StackMemoryPasses& passes, OpTable& ops,
               std::vector<OpId>& host_syncs, const Communicators& comms, int stage)
      : spec_(spec),
        stack_(stack),
        passes_(passes),
        m_(spec.model),
        p_(spec.parallelism),
        ops_(ops),
        host_syncs_(host_syncs),
        comms_(comms),
        stage_(stage),
        precision_(activation_precision(spec.training)),
        e_(bytes_per_element(activation_precision(spec.training))),
        fp8_(spec.training.precision == Precision::fp8),
        fp8_gemm_precision_(linear_gemm_precision(spec.training)),
        grad_bytes_(parameter_state_bytes(spec.training).gradients),
        weight_bytes_(parameter_state_bytes(spec.training).weights),
        act_(activation_info(spec.model)),
        moe_groups_(rank_layer_parameter_groups(spec.model, spec.parallelism)),
        dense_groups_(rank_layer_parameter_groups(dense_layer_model(spec.model), spec.parallelism)),
        embedding_(embedding_parameter_groups(spec.model)),
        bucket_params_(static_cast<double>(spec.parallelism.effective_bucket_size_params())) {
    t_ = p_.tp;
    b_ = spec.training.micro_batch;
    s_ = m_.seq_len / p_.cp;
    T_ = b_ * s_;
    T_sp_ = p_.sequence_parallel && t_ > 1 ? T_ / t_ : T_;
    h_ = m_.hidden;
    const AttentionShape shape = attention_shape(m_);
    mla_ = m_.latent_attention();
    d_ = u32(shape.qk_head_dim);
    v_dim_ = u32(shape.v_head_dim);
    heads_ = m_.heads / t_;
    q_ = heads_ * d_;
    o_ = heads_ * v_dim_;
    kv_ = u32(shape.kv_heads) / t_ * d_;
    const bool model_moe = m_.moe.experts > 0;
    etp_ = p_.effective_etp();
    dense_f_ = m_.ffn_hidden / t_;
    const std::uint32_t expert_width = m_.moe.expert_ffn_hidden > 0 ? m_.moe.expert_ffn_hidden : m_.ffn_hidden;
    expert_f_ = expert_width / etp_;
    shared_f_ = double(m_.moe.shared_experts) * expert_width / t_;
    // Megatron-Core's MoELayer routes the rank's sequence-parallel shard (T / tp with tp > 1)
    routed_tokens_ = model_moe ? u32(std::ceil(busiest_rank_routed_tokens(m_.moe, p_.ep, T_sp_))) : T_;
    local_experts_ = model_moe ? m_.moe.experts / p_.ep : 0;
    expert_grads_apart_ = model_moe && (p_.ep > 1 || etp_ != t_ || p_.cp > 1);
    select_layer(m_.layers - 1);
    chunks_ = model_chunks(p_);
    biases_ = !llama_style(m_);
    // torch.compile fuses the eager ops (Inductor generates one kernel per fusible chain)
    const bool eager = !spec_.training.torch_compile;
    eager_rmsnorm_ = eager && llama_style(m_) && !stack_.fused.rmsnorm;
    eager_rope_ = eager && llama_style(m_) && !stack_.fused.rope;
    eager_swiglu_ = eager && m_.activation == "swiglu" && !stack_.fused.swiglu;
    // repeat_kv is a copy before an opaque SDPA kernel: compiled or not, the repeated K/V are written
    repeat_kv_ = !mla_ && !stack_.fused.gqa && kv_ < q_;
  }

  // The shape of model layer `layer`: a MoE model's first_dense_layers have the dense MLP.
  void select_layer(int layer) {
    moe_ = m_.moe_layer(layer);
    f_ = moe_ ? expert_f_ : dense_f_;
    expert_tokens_ = moe_ ? routed_tokens_ * etp_ : T_;
    groups_ = moe_ ? moe_groups_ : dense_groups_;
  }

  void build() {
    const int micro_batches = static_cast<int>(spec_.micro_batches());
    for (const PipelineUnit& u :
         pipeline_schedule(p_.pipeline_schedule, p_.pp, stage_, micro_batches, p_.virtual_stages)) {
      const int chunk = u.chunk * p_.pp + stage_;
      if (u.forward)
        forward_unit(chunk, u.micro_batch);
      else
        backward_unit(chunk, u.micro_batch + 1 == micro_batches);
    }
    for (Bucket* b : {&dense_, &expert_})
      if (!b->pending.empty()) reduce_pending(*b);
    tied_embedding_all_reduce();
    optimizer_step();
    while (!host_syncs_.empty() && host_syncs_.back() >= ops_.size())  // a wait with nothing after it
      host_syncs_.pop_back();
  }

 private:
  struct Bucket {
    bool expert = false;
    double fill = 0.0;
    std::vector<double> pending;  // without overlap: sizes of the buckets to reduce at the end
  };

  // --- op helpers -------------------------------------------------------------------------------
  // Appends an op to stream 0 after the previous one there, plus any pending extra dependencies.
  OpId compute(const std::string& name, KernelClass kernel, double flops, double bytes, std::uint32_t m = 0,
               std::uint32_t n = 0, std::uint32_t k = 0, std::uint32_t batch = 1) {
    return compute(name, kernel, flops, bytes, {m, n, k, batch});
  }
  struct KernelShape {
    std::uint32_t m = 0, n = 0, k = 0, batch = 1;
    bool causal = false, backward = false;  // attention kernels (ComputeOp)
  };
  OpId compute(const std::string& name, KernelClass kernel, double flops, double bytes, const KernelShape& shape) {
    const auto [m, n, k, batch, causal, backward] = shape;
    ComputeOp op;
    op.causal = causal;
    op.backward = backward;
    op.name = name;
    op.kernel = kernel;
    op.precision = fp8_gemms_ && kernel == KernelClass::gemm ? fp8_gemm_precision_ : precision_;
    op.fp8_blockwise =
        fp8_gemms_ && kernel == KernelClass::gemm && fp8_recipe_info(spec_.training.fp8_recipe).block_scaled_gemm;
    op.flops = flops;
    op.bytes = bytes;
    op.m = m;
    op.n = n;
    op.k = k;
    op.batch = batch;
    op.stream = kComputeStream;
    last_ = ops_.add_compute(op, next_deps());
    have_last_ = true;
    return last_;
  }

  std::vector<OpId> take_deps() {
    std::vector<OpId> deps = std::move(extra_deps_);
    extra_deps_.clear();
    if (have_last_) deps.insert(deps.begin(), last_);
    return deps;
  }
  // take_deps() into a buffer kept across ops: the compute ops (most of a step's) allocate nothing.
  std::span<const OpId> next_deps() {
    deps_buffer_.clear();
    if (have_last_) deps_buffer_.push_back(last_);
    deps_buffer_.insert(deps_buffer_.end(), extra_deps_.begin(), extra_deps_.end());
    extra_deps_.clear();
    return deps_buffer_;
  }

  OpId collective(const std::string& name, CollectiveKind kind, std::uint16_t comm, double bytes, std::uint8_t stream,
                  std::vector<OpId> deps) {
    CollectiveOp op;
    op.name = name;
    op.collective = kind;
    op.communicator = comm;
    op.bytes = bytes;
    op.stream = stream;
    return ops_.add_collective(op, deps);
  }

  // A tensor-parallel (or expert all-to-all) collective on the compute stream's critical path.
  void blocking_collective(const std::string& name, CollectiveKind kind, std::uint16_t comm, double bytes) {
    if (comm == kNone) return;
    last_ = collective(name, kind, comm, bytes, kComputeStream, take_deps());
    have_last_ = true;
  }

  OpId p2p(const std::string& name, OpKind kind, std::uint16_t comm, int offset, std::uint32_t tag, double bytes,
           std::uint8_t stream, std::vector<OpId> deps) {
    P2POp op;
    op.name = name;
    op.kind = kind;
    op.communicator = comm;
    op.peer_offset = offset;
    op.tag = tag;
    op.bytes = bytes;
    op.stream = stream;
    return ops_.add_p2p(op, deps);
  }

  // C[m x n] = A[m x k] B[k x n], `batch` times. `flops` overrides 2mnk*batch when the shape is a
  // rounded description of a grouped GEMM.
  // Inside a linear layer's scope under fp8 (LinearScope), the GEMM runs in the recipe's dtype.
  // A: X (forward), dY (dgrad), X^T (wgrad); B: W (forward), W^T (dgrad): gemm(); dY (wgrad):
  // wgrad_gemm(). B's block scales are the weight's (blockwise: 128x128) but in a wgrad.
  OpId gemm(const std::string& name, double m, double n, double k, double batch = 1.0, double flops = -1.0) {
    return gemm_with(Fp8Operand::weight, name, m, n, k, batch, flops);
  }
  OpId wgrad_gemm(const std::string& name, double m, double n, double k, double batch = 1.0, double flops = -1.0) {
    return gemm_with(Fp8Operand::grad_output, name, m, n, k, batch, flops);
  }
  OpId gemm_with(Fp8Operand b_operand, const std::string& name, double m, double n, double k, double batch,
                 double flops) {
    const double f = flops >= 0.0 ? flops : 2.0 * m * n * k * batch;
    if (!fp8_gemms_) {
      const double bytes = (m * k + k * n + m * n) * batch * e_;
      return compute(name, KernelClass::gemm, f, bytes, u32(m), u32(n), u32(k), u32(batch));
    }
    const Fp8Recipe recipe = spec_.training.fp8_recipe;
    const double a = quantized_element_bytes(recipe, Fp8Operand::input);
    const double b = quantized_element_bytes(recipe, b_operand);
    const double bytes = (m * k * a + k * n * b + m * n * e_) * batch;
    return compute(name, KernelClass::gemm, f, bytes, u32(m), u32(n), u32(k), u32(batch));
  }

  // --- fp8 (Transformer Engine): see the top of the file ------------------------------------------
  // While alive, the GEMMs appended are a linear layer's: fp8 ones under fp8.
  class LinearScope {
   public:
    explicit LinearScope(StageBuilder& b) : b_(b) { b_.fp8_gemms_ = b_.fp8_; }
    ~LinearScope() { b_.fp8_gemms_ = false; }
    LinearScope(const LinearScope&) = delete;
    LinearScope& operator=(const LinearScope&) = delete;

   private:
    StageBuilder& b_;
  };

  // The bytes per element of quantizing one operand (fp8_recipe.hpp: the recipe's amax pass, cast and
  // eager transposes; torch.compile fuses torchao's).
  Fp8CastBytes cast_bytes(Fp8Operand operand) const {
    return fp8_cast_bytes(spec_.training.fp8_recipe, operand, spec_.training.torch_compile);
  }

  // Quantizes a bf16 tensor of `elements` for fp8 GEMMs: [amax pass], cast(-transpose).
  void quantize(const std::string& gemm, const char* tensor, double elements, Fp8Operand operand) {
    const Fp8CastBytes c = cast_bytes(operand);
    if (c.amax > 0.0) compute(gemm + ".amax_" + tensor, KernelClass::elementwise, elements, elements * c.amax);
    compute(gemm + ".cast_" + tensor, KernelClass::elementwise, 2.0 * elements, elements * c.cast);
  }

  // A linear layer's forward: quantize its input (and its weight when not cached), then its GEMMs.
  [[nodiscard]] LinearScope linear_forward(const std::string& gemm, double input_elements, double weight_elements) {
    if (fp8_) {
      quantize(gemm, "input", input_elements, Fp8Operand::input);
      if (cast_weights_) quantize(gemm, "weight", weight_elements, Fp8Operand::weight);
    }
    return LinearScope(*this);
  }
  // A linear layer's backward: quantize the output's gradient, then (torchao eager) copy the fp8
  // operands its dgrad and wgrad GEMMs want transposed (dY, X and W; `input_elements` and
  // `weight_elements` 0 where not known), then its dgrad and wgrad GEMMs.
  [[nodiscard]] LinearScope linear_backward(const std::string& what, double grad_elements, double input_elements = 0.0,
                                            double weight_elements = 0.0) {
    if (fp8_) {
      quantize("bwd." + what, "grad", grad_elements, Fp8Operand::grad_output);
      const double transposed = grad_elements * cast_bytes(Fp8Operand::grad_output).transpose +
                                input_elements * cast_bytes(Fp8Operand::input).transpose +
                                weight_elements * cast_bytes(Fp8Operand::weight).transpose;
      if (transposed > 0.0) compute("bwd." + what + ".fp8_transpose", KernelClass::elementwise, 0.0, transposed);
    }
    return LinearScope(*this);
  }

  // Delayed scaling: the amax-history and scale update after a forward or backward unit of `layers`.
  void fp8_scale_update(const char* name, int layers, double slots) {
    if (!fp8_ || !fp8_recipe_info(spec_.training.fp8_recipe).scale_update || layers == 0) return;
    const double entries = layers * kLinearLayersPerLayer * slots * kAmaxHistory;
    compute(name, KernelClass::elementwise, entries, 2.0 * entries * kFp32Bytes);
  }

  // A fused norm kernel (normalization class), or with eager_rmsnorm_ PyTorch's eager ops as one op of
  // the elementwise class (its kernels are generic elementwise and reduction kernels, not a norm
  // kernel) carrying their bytes (workloads/eager_pytorch_ops.cpp).
  OpId norm(const std::string& name, bool backward, double tokens) {
    const double elements = tokens * h_;
    if (eager_rmsnorm_) {
      const double bytes =
          backward ? eager_rmsnorm_backward_bytes_per_element(e_) : eager_rmsnorm_forward_bytes_per_element(e_);
      return compute(name, KernelClass::elementwise, kNormFlopsPerElement * elements, bytes * elements);
    }
    return compute(name, KernelClass::normalization, kNormFlopsPerElement * elements,
                   (backward ? 3.0 : 2.0) * e_ * elements);
  }

  // Eager rotary embedding (stack fused.rope false, Llama-style models) over this rank's q and k:
  // one elementwise op carrying the eager kernels' bytes (eager_rope_bytes_per_element; named
  // "eager_rope": generic elementwise kernels, not the fused rope kernel's role). Fused: no op (the
  // rotation is not modelled as a kernel of its own, as before).
  // The backward moves the same bytes as the forward (the inverse rotation), hence no flag.
  void rope(const std::string& phase, double tokens) {
    if (!eager_rope_) return;
    // MLA: the rotary part of every query head and the one shared rotary key
    const double elements = mla_ ? tokens * (heads_ + 1.0) * m_.mla.qk_rope_head_dim : tokens * (q_ + kv_);
    compute(phase + ".eager_rope", KernelClass::elementwise, kRopeFlopsPerElement * elements,
            eager_rope_bytes_per_element(e_) * elements);
  }

  // Residual add; with dropout, Megatron's fused bias-dropout-add also writes (forward) or reads
  // (backward) a one-byte mask per element.
  // Unfused (stack without bias-dropout-add fusion): bias add and dropout kernels before a plain add
  // in the forward, a dropout backward kernel before it in the backward.
  OpId residual(const std::string& name, bool backward) {
    const double elements = double(T_sp_) * h_;
    const bool dropout = spec_.training.dropout > 0.0;
    if (!stack_.fused.bias_dropout_add) {
      if (!backward && biases_)
        compute(name + ".bias", KernelClass::elementwise, kResidualFlopsPerElement * elements, 2.0 * elements * e_);
      if (dropout) compute(name + ".dropout", KernelClass::elementwise, elements, elements * (2.0 * e_ + kMaskBytes));
      return compute(name, KernelClass::elementwise, kResidualFlopsPerElement * elements, 3.0 * elements * e_);
    }
    const double mask = dropout ? elements * kMaskBytes : 0.0;
    return compute(name, KernelClass::elementwise, kResidualFlopsPerElement * elements, 3.0 * elements * e_ + mask);
  }

  OpId activation(const std::string& name, bool backward) {
    const double out = double(expert_tokens_) * f_;
    const double in = act_.inputs * out;
    if (!backward && biases_ && !stack_.fused.bias_activation)
      compute(name + ".bias", KernelClass::elementwise, in, 2.0 * in * e_);
    // eager_swiglu_: PyTorch's F.silu and the multiply as separate kernels (eager_pytorch_ops.cpp)
    const double bytes = eager_swiglu_ ? out * (backward ? eager_swiglu_backward_bytes_per_element(e_)
                                                         : eager_swiglu_forward_bytes_per_element(e_))
                         : backward    ? (2.0 * in + out) * e_
                                       : (in + out) * e_;
    return compute(name, KernelClass::elementwise, act_.flops_per_element * out, bytes);
  }

  // Attention over `q_tokens` queries and `kv_tokens` keys per sequence: one fused kernel
  // (FlashAttention), or Megatron's unfused path (unfused_attention, which computes and masks the whole
  // score matrix). `causal`: the decoder's mask; the fused kernel skips the masked tiles, so its flops
  // are half of the dense 4 b q kv (a d) (kernel_model.cpp times the tiles it runs, diagonal included).
  OpId attention(const std::string& name, bool backward, double q_tokens, double kv_tokens, bool causal = true) {
    if (!find_attention_implementation(spec_.training.attention).fused)
      return unfused_attention(name, backward, q_tokens, kv_tokens);
    // scores over d_ dimensions per head, values of v_dim_ (MHA: both head_dim)
    const double forward_flops =
        2.0 * double(b_) * q_tokens * kv_tokens * heads_ * (d_ + v_dim_) * (causal ? 0.5 : 1.0);
    const double q_bytes = double(b_) * q_tokens * q_ * e_;
    const double kv_bytes = double(b_) * kv_tokens * kv_pair_width() * e_;
    const double out_bytes = double(b_) * q_tokens * o_ * e_;
    const double lse_bytes = double(b_) * heads_ * q_tokens * kFp32Bytes;
    const double flops = backward ? kAttentionBackwardFlopsFactor * forward_flops : forward_flops;
    // backward reads Q, K, V, O, dO and the log-sum-exp, writes dQ, dK, dV
    const double bytes = backward ? 2.0 * (q_bytes + kv_bytes) + 2.0 * out_bytes + lse_bytes
                                  : q_bytes + kv_bytes + out_bytes + lse_bytes;
    return compute(name, KernelClass::attention, flops, bytes,
                   {u32(q_tokens), u32(kv_tokens), d_, b_ * heads_, causal, backward});
  }

  // Megatron-LM's unfused attention: scores S = Q K^T as a batched GEMM (b x heads of q x kv, inner
  // d), the fused scale-mask-softmax reading S and writing P (s x s per head, in memory), then O = P V
  // (q x d, inner kv). Backward: dV = P^T dO and dP = dO V^T, the softmax backward (reads P and dP,
  // writes dS), dQ = dS K and dK = dS^T Q; with dropout, a dropout kernel over P after the softmax.
  OpId unfused_attention(const std::string& name, bool backward, double q_tokens, double kv_tokens) {
    const double heads = double(b_) * heads_;
    const double scores = heads * q_tokens * kv_tokens;
    if (!backward) {
      gemm(name + ".scores", q_tokens, kv_tokens, d_, heads);
      if (!stack_.fused.masked_softmax) {
        compute(name + ".scale", KernelClass::elementwise, scores, 2.0 * scores * e_);
        compute(name + ".mask", KernelClass::elementwise, scores, 2.0 * scores * e_);
      }
      compute(name + ".softmax", KernelClass::elementwise, 5.0 * scores, 2.0 * scores * e_);
      // attention dropout: reads P, writes the dropped P and its mask
      if (spec_.training.dropout > 0.0)
        compute(name + ".dropout", KernelClass::elementwise, scores, scores * (2.0 * e_ + kMaskBytes));
      return gemm(name + ".context", q_tokens, v_dim_, kv_tokens, heads);
    }
    gemm(name + ".context.dgrad", kv_tokens, v_dim_, q_tokens, heads);  // dV
    gemm(name + ".context.pgrad", q_tokens, kv_tokens, v_dim_, heads);  // dP
    // dropout backward: reads the gradient and the mask, writes the gradient of P
    if (spec_.training.dropout > 0.0)
      compute(name + ".dropout", KernelClass::elementwise, scores, scores * (2.0 * e_ + kMaskBytes));
    compute(name + ".softmax", KernelClass::elementwise, 4.0 * scores, 3.0 * scores * e_);
    if (!stack_.fused.masked_softmax) {
      compute(name + ".mask", KernelClass::elementwise, scores, 2.0 * scores * e_);
      compute(name + ".scale", KernelClass::elementwise, scores, 2.0 * scores * e_);
    }
    gemm(name + ".scores.qgrad", q_tokens, d_, kv_tokens, heads);         // dQ
    return gemm(name + ".scores.kgrad", kv_tokens, d_, q_tokens, heads);  // dK
  }

  // The attention core of one layer. With context parallelism, ring attention: cp steps, each on the
  // local queries and one rank's K/V block; the blocks travel to the next rank of the cp group while
  // the current one is computed (forward: K and V; backward: K, V and their gradients). The causal
  // mask is load-balanced as Megatron-Core / Transformer Engine do it (AttnFuncWithCP): the sequence
  // is cut into 2 cp chunks and rank r holds chunks r and 2 cp - 1 - r, so step 0 (its own K/V) is a
  // causal attention of its s / cp queries over its s / cp keys, and every other step a dense one of
  // half the work: all queries over the first chunk of an earlier rank's block, or the second chunk
  // of the queries over a later rank's whole block (both s / cp x s / (2 cp), the shape timed here).
  // Every rank does the same work, s^2 / (2 cp) per head, as a causal attention over the whole
  // sequence divided by cp.
  // parallelism.cp_comm all_gather: all_gather_attention.
  void attention_core(const std::string& phase, bool backward) {
    const int cp = p_.cp;
    if (cp == 1) {
      attention(phase + ".attention", backward, s_, s_);
      return;
    }
    const ContextParallelComm& method = find_context_parallel_comm(p_.cp_comm);
    if (method.all_gather_kv) {
      all_gather_attention(phase, backward, method);
      return;
    }
    const double block_bytes = double(b_) * s_ * kv_pair_width() * e_ * (backward ? 2.0 : 1.0);
    const std::uint32_t tag = backward ? kKeyValueGradTag : kKeyValueTag;
    OpId have_block = last_;  // the local block is ready after the QKV projection (or dO)
    for (int step = 0; step < cp; ++step) {
      if (step + 1 < cp) {
        p2p(phase + ".cp.send_kv", OpKind::send, comms_.cp, +1, tag, block_bytes, kContextSendStream, {have_block});
        have_block = p2p(phase + ".cp.recv_kv", OpKind::recv, comms_.cp, -1, tag, block_bytes, kContextRecvStream, {});
      }
      if (step == 0)
        attention(phase + ".attention", backward, s_, s_);
      else
        attention(phase + ".attention", backward, s_, s_ / 2.0, false);
      if (step + 1 < cp) extra_deps_.push_back(have_block);
    }
  }

  // PyTorch's context_parallel with the allgather rotate method (context_parallel_comm.cpp, with its
  // sources): the same load-balanced steps as the ring, but the K/V blocks come from one all-gather of
  // the group's K and V per layer (forward, and again in the backward), issued after the local block is
  // packed and waited for by step 1's attention; every step after the first merges its partial output
  // into the running one in fp32. Backward: dK/dV accumulate in fp32 and travel the ring one block per
  // step (all_to_all to the next rank), step i + 1's accumulation waiting for step i's block.
  void all_gather_attention(const std::string& phase, bool backward, const ContextParallelComm& c) {
    const int cp = p_.cp;
    const double kv_elements = double(b_) * s_ * kv_pair_width();  // the rank's K and V
    const double q_elements = double(b_) * s_ * q_;                // its queries (and output)
    const double pack_bytes = c.pack_bytes_per_kv_element * kv_elements;
    compute(phase + ".cp.pack_kv", KernelClass::elementwise, 0.0, pack_bytes);
    const OpId gathered = collective(phase + ".cp.all_gather_kv", CollectiveKind::all_gather, comms_.cp,
                                     cp * kv_elements * e_, kContextSendStream, {last_});
    const double grad_block_bytes = c.grad_kv_p2p_bytes_per_kv_element * kv_elements;
    OpId grad_block = 0;
    for (int step = 0; step < cp; ++step) {
      if (step > 0 && step + 1 < cp) compute(phase + ".cp.pack_kv", KernelClass::elementwise, 0.0, pack_bytes);
      if (step == 1) extra_deps_.push_back(gathered);
      if (step == 0)
        attention(phase + ".attention", backward, s_, s_);
      else
        attention(phase + ".attention", backward, s_, s_ / 2.0, false);
      if (!backward) {
        if (step > 0)
          compute(phase + ".cp.merge", KernelClass::elementwise, q_elements,
                  c.merge_bytes_per_output_element * q_elements);
        continue;
      }
      if (step > 0) extra_deps_.push_back(grad_block);
      const OpId accumulated =
          compute(phase + ".cp.grad_accumulate", KernelClass::elementwise, q_elements + kv_elements,
                  c.grad_kv_accumulate_bytes_per_kv_element * kv_elements +
                      c.grad_q_accumulate_bytes_per_q_element * q_elements);
      p2p(phase + ".cp.send_grad_kv", OpKind::send, comms_.cp, +1, kKeyValueGradTag, grad_block_bytes,
          kContextSendStream, {accumulated});
      grad_block = p2p(phase + ".cp.recv_grad_kv", OpKind::recv, comms_.cp, -1, kKeyValueGradTag, grad_block_bytes,
                       kContextRecvStream, {});
    }
    if (!backward) {
      compute(phase + ".cp.output_cast", KernelClass::elementwise, 0.0,
              c.output_cast_bytes_per_output_element * q_elements);
      return;
    }
    extra_deps_.push_back(grad_block);  // the last block is this rank's finished dK/dV
    compute(phase + ".cp.grad_cast", KernelClass::elementwise, 0.0,
            c.grad_init_cast_bytes_per_element * (q_elements + kv_elements));
  }

  // K/V width per token the attention reads: the rank's kv heads, or (repeat_kv_) one per query head.
  double kv_width() const { return repeat_kv_ ? double(q_) : double(kv_); }
  // K and V together per token: 2 kv_width, or with MLA each head's key (d_) and value (v_dim_).
  double kv_pair_width() const { return mla_ ? heads_ * (d_ + v_dim_) : 2.0 * kv_width(); }

  // torchtitan's eager repeat_kv (stack fused.gqa false): K and V expanded to every query head by a
  // copy (reads the kv_heads tensors, writes the repeated ones); backward, the sum back over the
  // repeats (reads the repeated gradients, writes kv_heads ones): the same bytes.
  void repeat_kv(const std::string& phase, bool backward) {
    if (!repeat_kv_) return;
    const double tokens = double(T_);
    compute(phase + ".repeat_kv", KernelClass::elementwise, backward ? tokens * 2.0 * q_ : 0.0,
            tokens * 2.0 * (double(kv_) + q_) * e_);
  }

  void tp_forward_exit(const std::string& name) {  // after a row-parallel GEMM
    if (t_ == 1) return;
    blocking_collective(name, p_.sequence_parallel ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce,
                        comms_.tp, double(T_) * h_ * e_);
  }
  void tp_forward_entry(const std::string& name) {  // before a column-parallel GEMM
    if (t_ > 1 && p_.sequence_parallel)
      blocking_collective(name, CollectiveKind::all_gather, comms_.tp, double(T_) * h_ * e_);
  }

  // --- tensor-parallel communication overlapped with GEMMs (tp_comm_overlap) ---------------------
  // Megatron-LM's --tp-comm-overlap (Transformer Engine userbuffers, needs sequence parallelism): an
  // all-gather feeding a GEMM (tp chunks) and a reduce-scatter fed by one (4 splits) are split, chunk i's
  // GEMM waiting only for chunk i's gather (or chunk i's scatter running while chunk i + 1 is
  // computed); in the backward, the input's all-gather runs during the dgrad GEMM and the dgrad's
  // reduce-scatter during the wgrad GEMM. Communication runs on stream 2; the SMs it borrows from
  // the GEMMs are not modelled.
  bool overlap_tp() const { return p_.tp_comm_overlap && t_ > 1 && p_.sequence_parallel; }

  // [all-gather] then a GEMM of m rows (the gathered tokens).
  OpId gathered_gemm(const std::string& gather, const std::string& name, double m, double n, double k) {
    if (!overlap_tp()) {
      tp_forward_entry(gather);
      return gemm(name, m, n, k);
    }
    const double chunks = t_;
    std::vector<OpId> deps = take_deps();
    OpId g = 0;
    for (std::uint32_t i = 0; i < t_; ++i) {
      const OpId ag = collective(gather, CollectiveKind::all_gather, comms_.tp_overlap, double(T_) * h_ * e_ / chunks,
                                 kTpStream, i == 0 ? deps : std::vector<OpId>{});
      extra_deps_.push_back(ag);
      g = gemm(name, m / chunks, n, k);
    }
    return g;
  }

  // Transformer Engine's forward reduce-scatter overlap (proj_fprop, fc2_fprop: method "pipeline") splits
  // the GEMM into num_splits = 4 chunks whatever tp is (transformer_engine/pytorch/module/base.py
  // initialize_ub, v1.7-1.9: `num_splits=4 if method == "pipeline" else 0`; Megatron-LM passes no
  // --tp-comm-overlap-cfg by default). The all-gathers (method "ring_exchange") take tp steps.
  static constexpr std::uint32_t kReduceScatterSplits = 4;

  // A GEMM of m rows then [reduce-scatter or all-reduce of its output].
  OpId scattered_gemm(const std::string& name, const std::string& scatter, double m, double n, double k) {
    if (!overlap_tp()) {
      const OpId g = gemm(name, m, n, k);
      tp_forward_exit(scatter);
      return g;
    }
    const double chunks = kReduceScatterSplits;
    OpId g = 0, rs = 0;
    for (std::uint32_t i = 0; i < kReduceScatterSplits; ++i) {
      g = gemm(name, m / chunks, n, k);
      rs = collective(scatter, CollectiveKind::reduce_scatter, comms_.tp_overlap, double(T_) * h_ * e_ / chunks,
                      kTpStream, {g});
    }
    extra_deps_.push_back(rs);  // the next op on the compute stream needs the scattered output
    return g;
  }

  // --- the layers -------------------------------------------------------------------------------
  // --- multi-head latent attention (model.attention_type mla; transformer_math.cpp) -------------------
  // Megatron-Core's MLASelfAttention: the down projections (q_down, kv_down: the latent and the shared
  // rotary key) are replicated over tp and read the whole (gathered) input; the latent RMSNorms; the
  // column-parallel up projections to each head's query (q_up) and key and value (kv_up). r_q = 0: one
  // column-parallel q projection.
  // A norm over a latent of `width` (q_lora_rank or kv_lora_rank) for T tokens.
  void latent_norm(const std::string& name, bool backward, double width) {
    const double elements = double(T_) * width;
    compute(name, KernelClass::normalization, kNormFlopsPerElement * elements, (backward ? 3.0 : 2.0) * e_ * elements);
  }
  double mla_kv_down_width() const { return double(m_.mla.kv_lora_rank) + m_.mla.qk_rope_head_dim; }
  double mla_kv_up_width() const { return heads_ * (double(m_.mla.qk_nope_head_dim) + v_dim_); }

  void mla_projections(const std::string& phase) {
    const MlaSpec& l = m_.mla;
    tp_forward_entry(phase + ".tp.all_gather");
    const double T = T_, rq = l.q_lora_rank, rkv = l.kv_lora_rank;
    if (l.q_lora_rank > 0) {
      {
        const LinearScope fp8 = linear_forward(phase + ".q_down", T * h_, double(h_) * rq);
        gemm(phase + ".q_down", T, rq, h_);
      }
      latent_norm(phase + ".q_norm", false, rq);
      const LinearScope fp8 = linear_forward(phase + ".q_up", T * rq, rq * q_);
      gemm(phase + ".q_up", T, q_, rq);
    } else {
      const LinearScope fp8 = linear_forward(phase + ".q_proj", T * h_, double(h_) * q_);
      gemm(phase + ".q_proj", T, q_, h_);
    }
    {
      const LinearScope fp8 = linear_forward(phase + ".kv_down", T * h_, double(h_) * mla_kv_down_width());
      gemm(phase + ".kv_down", T, mla_kv_down_width(), h_);
    }
    latent_norm(phase + ".kv_norm", false, rkv);
    const LinearScope fp8 = linear_forward(phase + ".kv_up", T * rkv, rkv * mla_kv_up_width());
    gemm(phase + ".kv_up", T, mla_kv_up_width(), rkv);
  }

  // The mirror image: each projection's dgrad then wgrad, the latent norms' backward; the replicated
  // down projections' input gradient is reduced over tp like a column-parallel layer's. Returns the
  // last wgrad (the qkv group's gradients are final there).
  OpId mla_projections_backward() {
    const MlaSpec& l = m_.mla;
    const double T = T_, rq = l.q_lora_rank, rkv = l.kv_lora_rank;
    auto backward = [this, T](const char* what, double n, double k) {
      const LinearScope fp8 = linear_backward(what, T * n, T * k, k * n);
      gemm(std::string("bwd.") + what + ".dgrad", T, k, n);
      return wgrad_gemm(std::string("bwd.") + what + ".wgrad", k, n, T);
    };
    backward("kv_up", mla_kv_up_width(), rkv);
    latent_norm("bwd.kv_norm", true, rkv);
    OpId last = backward("kv_down", mla_kv_down_width(), h_);
    if (l.q_lora_rank > 0) {
      backward("q_up", q_, rq);
      latent_norm("bwd.q_norm", true, rq);
      last = backward("q_down", rq, h_);
    } else {
      last = backward("q_proj", q_, h_);
    }
    if (t_ > 1)
      blocking_collective("bwd.tp.qkv",
                          p_.sequence_parallel ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, comms_.tp,
                          double(T_) * h_ * e_);
    return last;
  }

  // --- MoE as it runs (Megatron-Core's MoEAlltoAllTokenDispatcher) -------------------------------
  // Token permutation before the dispatch all-to-all and un-permutation after the combine: each of
  // the rank's T x top_k routed token copies is read and written once, T x top_k x h x e x 2 bytes per
  // kernel (the same in the backward, on the gradients).
  double permutation_bytes() const { return 2.0 * double(T_sp_) * m_.moe.top_k * h_ * e_; }
  // The dispatch and combine all-to-alls move the busiest rank's routed rows (before the etp gather).
  double dispatch_bytes() const { return double(routed_tokens_) * h_ * e_; }
  // Expert tensor parallelism (etp > 1, Megatron-Core's MoEAlltoAllTokenDispatcher): after the dispatch
  // the etp ranks all-gather their rows, so each runs its 1/etp of the experts' width on all of them,
  // and reduce-scatter the outputs before the combine: etp x the routed rows, gathered size.
  void expert_tp_collective(const std::string& name, CollectiveKind kind) {
    if (etp_ > 1) blocking_collective(name, kind, comms_.etp, double(expert_tokens_) * h_ * e_);
  }
  void permute(const std::string& name) { compute(name, KernelClass::elementwise, 0.0, permutation_bytes()); }

  // Shared experts (model.moe.shared_experts): a tensor-parallel MLP of shared_experts x f_e on the
  // layer's T tokens beside the routed experts (Megatron-Core's SharedExpertMLP, not overlapped).
  void shared_experts_forward(const std::string& phase) {
    if (shared_f_ <= 0.0) return;
    {
      const LinearScope fp8 =
          linear_forward(phase + ".shared_up", double(T_) * h_, double(h_) * act_.inputs * shared_f_);
      gemm(phase + ".shared_up", T_, act_.inputs * shared_f_, h_);
    }
    const double out = double(T_) * shared_f_, in = act_.inputs * out;
    compute(phase + ".shared_activation", KernelClass::elementwise, act_.flops_per_element * out, (in + out) * e_);
    const LinearScope fp8 = linear_forward(phase + ".shared_down", out, shared_f_ * h_);
    gemm(phase + ".shared_down", T_, h_, shared_f_);
  }
  void shared_experts_backward() {
    if (shared_f_ <= 0.0) return;
    const double share = groups_.shared_experts;
    const double up = act_.inputs / (act_.inputs + 1.0);  // the up (and gate) projections' share of the weights
    {
      const LinearScope fp8 = linear_backward("shared_down", double(T_) * h_);
      gemm("bwd.shared_down.dgrad", T_, shared_f_, h_);
      grads(share * (1.0 - up), false, wgrad_gemm("bwd.shared_down.wgrad", shared_f_, h_, T_));
    }
    const double out = double(T_) * shared_f_, in = act_.inputs * out;
    compute("bwd.shared_activation", KernelClass::elementwise, act_.flops_per_element * out, (2.0 * in + out) * e_);
    const LinearScope fp8 = linear_backward("shared_up", double(T_) * act_.inputs * shared_f_);
    gemm("bwd.shared_up.dgrad", T_, h_, act_.inputs * shared_f_);
    grads(share * up, false, wgrad_gemm("bwd.shared_up.wgrad", h_, act_.inputs * shared_f_, T_));
  }

  void forward_layer(const std::string& phase) {
    norm(phase + ".ln1", false, T_sp_);
    if (mla_) {
      mla_projections(phase);
    } else {
      const LinearScope fp8 = linear_forward(phase + ".qkv", double(T_sp_) * h_, double(h_) * (q_ + 2.0 * kv_));
      gathered_gemm(phase + ".tp.all_gather", phase + ".qkv", T_, q_ + 2.0 * kv_, h_);
    }
    rope(phase, T_);
    repeat_kv(phase, false);
    attention_core(phase, false);
    {
      const LinearScope fp8 = linear_forward(phase + ".attn_out", double(T_) * o_, double(o_) * h_);
      scattered_gemm(phase + ".attn_out", phase + ".tp.attn_out", T_, h_, o_);
    }
    residual(phase + ".residual1", false);
    norm(phase + ".ln2", false, T_sp_);
    if (moe_) {
      gemm(phase + ".router", T_sp_, m_.moe.experts, h_);
      permute(phase + ".moe.permute");
      blocking_collective(phase + ".ep.dispatch", CollectiveKind::all_to_all, comms_.ep, dispatch_bytes());
      expert_tp_collective(phase + ".etp.all_gather", CollectiveKind::all_gather);
      const double experts = local_experts_;
      {
        const LinearScope fp8 =
            linear_forward(phase + ".mlp_up", double(expert_tokens_) * h_, experts * h_ * act_.inputs * f_);
        gemm(phase + ".mlp_up", expert_tokens_, act_.inputs * f_, h_);
      }
      activation(phase + ".activation", false);
      {
        const LinearScope fp8 = linear_forward(phase + ".mlp_down", double(expert_tokens_) * f_, experts * f_ * h_);
        gemm(phase + ".mlp_down", expert_tokens_, h_, f_);
      }
      expert_tp_collective(phase + ".etp.reduce_scatter", CollectiveKind::reduce_scatter);
      blocking_collective(phase + ".ep.combine", CollectiveKind::all_to_all, comms_.ep, dispatch_bytes());
      permute(phase + ".moe.unpermute");
      if (shared_f_ > 0.0) {  // the shared experts' tensor-parallel MLP on the layer's T tokens
        tp_forward_entry(phase + ".tp.all_gather");
        shared_experts_forward(phase);
        tp_forward_exit(phase + ".tp.mlp_down");
      }
    } else {
      {
        const LinearScope fp8 = linear_forward(phase + ".mlp_up", double(T_sp_) * h_, double(h_) * act_.inputs * f_);
        gathered_gemm(phase + ".tp.all_gather", phase + ".mlp_up", T_, act_.inputs * f_, h_);
      }
      activation(phase + ".activation", false);
      {
        const LinearScope fp8 = linear_forward(phase + ".mlp_down", double(T_) * f_, double(f_) * h_);
        scattered_gemm(phase + ".mlp_down", phase + ".tp.mlp_down", T_, h_, f_);
      }
    }
    residual(phase + ".residual2", false);
  }

  // dgrad dX = dY W^T (m x k, inner n), wgrad dW = X^T dY (k x n, inner m). With sequence parallelism
  // a column-parallel layer gathers its input again for the wgrad and reduce-scatters its dgrad.
  OpId column_parallel_backward(const std::string& what, double m, double n, double k) {
    if (overlap_tp()) {
      std::vector<OpId> before;
      if (have_last_) before.push_back(last_);
      const OpId ag = collective("bwd.tp.all_gather_input", CollectiveKind::all_gather, comms_.tp_overlap,
                                 double(T_) * h_ * e_, kTpStream, before);
      const OpId dgrad = gemm("bwd." + what + ".dgrad", m, k, n);
      const OpId rs = collective("bwd.tp." + what, CollectiveKind::reduce_scatter, comms_.tp_overlap,
                                 double(T_) * h_ * e_, kTpStream, {dgrad});
      extra_deps_.push_back(ag);
      const OpId wgrad = wgrad_gemm("bwd." + what + ".wgrad", k, n, m);
      extra_deps_.push_back(rs);
      return wgrad;
    }
    gemm("bwd." + what + ".dgrad", m, k, n);
    tp_forward_entry("bwd.tp.all_gather_input");
    const OpId wgrad = wgrad_gemm("bwd." + what + ".wgrad", k, n, m);
    if (t_ > 1)
      blocking_collective("bwd.tp." + what,
                          p_.sequence_parallel ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, comms_.tp,
                          double(T_) * h_ * e_);
    return wgrad;
  }
  // A row-parallel layer: with sequence parallelism, all-gather the output's gradient first.
  OpId row_parallel_backward(const std::string& what, double m, double n, double k) {
    gathered_gemm("bwd.tp.all_gather_grad", "bwd." + what + ".dgrad", m, k, n);
    return wgrad_gemm("bwd." + what + ".wgrad", k, n, m);
  }

  // The backward of a linear layer (its output's gradient dY is T x n on this rank; with sequence
  // parallelism a row-parallel layer's arrives as T_sp x n before its all-gather).
  OpId fp8_column_parallel_backward(const std::string& what, double m, double n, double k) {
    const LinearScope fp8 = linear_backward(what, m * n, m * k, k * n);
    return column_parallel_backward(what, m, n, k);
  }
  OpId fp8_row_parallel_backward(const std::string& what, double m, double n, double k) {
    const LinearScope fp8 = linear_backward(what, double(T_sp_) / T_ * m * n, m * k, k * n);
    return row_parallel_backward(what, m, n, k);
  }

  // torchtitan's op-level selective checkpointing: what its policy did not save, recomputed before the
  // layer's backward (the 2nd, 4th and 6th matmul in call order, the norms, the residual add between
  // them and the activation).
  void recompute_unsaved_ops() {
    norm("recompute.ln1", false, T_sp_);
    {
      const LinearScope fp8 = linear_forward("recompute.k", double(T_) * h_, double(h_) * kv_);
      gemm("recompute.k", T_, kv_, h_);
    }
    rope("recompute", T_);  // its q and k feed the attention backward
    repeat_kv("recompute", false);
    {
      const LinearScope fp8 = linear_forward("recompute.attn_out", double(T_) * q_, double(q_) * h_);
      gemm("recompute.attn_out", T_, h_, q_);
    }
    // h = x + attention(...) feeds ffn_norm, whose saved inputs the recompute regenerates; the add is
    // not in the policy's save list (torchtitan @ 9dec370 models/llama/model.py TransformerBlock.forward,
    // parallelize_llama.py _save_list), so the recompute runs it again
    residual("recompute.residual1", false);
    norm("recompute.ln2", false, T_sp_);
    if (act_.inputs > 1.0) {  // gated MLP: gate (saved), up (recomputed), down (saved)
      const LinearScope fp8 = linear_forward("recompute.mlp_up", double(T_) * h_, double(h_) * f_);
      gemm("recompute.mlp_up", T_, f_, h_);
    } else {  // up (saved), down (recomputed)
      const LinearScope fp8 = linear_forward("recompute.mlp_down", double(T_) * f_, double(f_) * h_);
      gemm("recompute.mlp_down", T_, h_, f_);
    }
    activation("recompute.activation", false);
  }

  void backward_layer() {
    const std::string& recompute = spec_.training.recompute;
    // the recompute pass casts the weights again only when they are not cached
    cast_weights_ = !spec_.training.fp8_weight_cache;
    const bool op_level = recompute == "selective" && spec_.training.selective_recompute == "matmul_outputs";
    if (recompute == "full") forward_layer("recompute");
    if (op_level && !moe_ && !mla_) recompute_unsaved_ops();
    residual("bwd.residual2", true);
    if (moe_) {
      if (shared_f_ > 0.0) {
        tp_forward_entry("bwd.tp.all_gather_grad");
        shared_experts_backward();
      }
      permute("bwd.moe.unpermute");
      blocking_collective("bwd.ep.combine", CollectiveKind::all_to_all, comms_.ep, dispatch_bytes());
      expert_tp_collective("bwd.etp.all_gather", CollectiveKind::all_gather);
      // wgrad per local expert: dW_e = X_e^T dY_e with expert_tokens / local experts tokens each
      const double experts = local_experts_;
      const double per_expert = std::ceil(double(expert_tokens_) / experts);
      {
        const LinearScope fp8 = linear_backward("mlp_down", double(expert_tokens_) * h_);
        gemm("bwd.mlp_down.dgrad", expert_tokens_, f_, h_);
        grads(groups_.mlp_down, true,
              wgrad_gemm("bwd.mlp_down.wgrad", f_, h_, per_expert, experts, 2.0 * double(expert_tokens_) * f_ * h_));
      }
      activation("bwd.activation", true);
      {
        const LinearScope fp8 = linear_backward("mlp_up", double(expert_tokens_) * act_.inputs * f_);
        gemm("bwd.mlp_up.dgrad", expert_tokens_, h_, act_.inputs * f_);
        grads(groups_.mlp_up, true,
              wgrad_gemm("bwd.mlp_up.wgrad", h_, act_.inputs * f_, per_expert, experts,
                         2.0 * double(expert_tokens_) * h_ * act_.inputs * f_));
      }
      expert_tp_collective("bwd.etp.reduce_scatter", CollectiveKind::reduce_scatter);
      blocking_collective("bwd.ep.dispatch", CollectiveKind::all_to_all, comms_.ep, dispatch_bytes());
      permute("bwd.moe.permute");
      gemm("bwd.router.dgrad", T_sp_, h_, m_.moe.experts);
      grads(groups_.router, false, wgrad_gemm("bwd.router.wgrad", h_, m_.moe.experts, T_sp_));
      if (t_ > 1 && shared_f_ > 0.0)
        blocking_collective("bwd.tp.mlp",
                            p_.sequence_parallel ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce,
                            comms_.tp, double(T_) * h_ * e_);
    } else {
      grads(groups_.mlp_down, false, fp8_row_parallel_backward("mlp_down", T_, h_, f_));
      activation("bwd.activation", true);
      grads(groups_.mlp_up, false, fp8_column_parallel_backward("mlp_up", T_, act_.inputs * f_, h_));
    }
    grads(groups_.norms / 2.0, false, norm("bwd.ln2", true, T_sp_));
    residual("bwd.residual1", true);
    grads(groups_.attention_out, false, fp8_row_parallel_backward("attn_out", T_, h_, o_));
    // selective recompute: the attention forward again, as one kernel over the rank's queries; with
    // context parallelism the load-balanced work of the ring (s / cp queries against s / 2 keys, dense)
    if (recompute == "selective" && !op_level) {
      if (p_.cp == 1)
        attention("recompute.attention", false, s_, s_);
      else
        attention("recompute.attention", false, s_, double(s_) * p_.cp / 2.0, false);
    }
    attention_core("bwd", true);
    repeat_kv("bwd", true);
    rope("bwd", T_);
    if (mla_)
      grads(groups_.qkv, false, mla_projections_backward());
    else
      grads(groups_.qkv, false, fp8_column_parallel_backward("qkv", T_, q_ + 2.0 * kv_, h_));
    grads(groups_.norms / 2.0, false, norm("bwd.ln1", true, T_sp_));
  }

  // --- pipeline units ---------------------------------------------------------------------------
  // Megatron-LM's scatter-gather between stages (its default, without sequence parallelism): each
  // tensor-parallel rank sends 1/tp of the activation, the receivers all-gather it over NVLink.
  bool scatter_gather() const { return t_ > 1 && !p_.sequence_parallel; }
  double stage_activation_bytes() const { return double(T_sp_) * h_ * e_ / (scatter_gather() ? t_ : 1); }

  bool blocking_p2p() const { return stack_.pipeline_p2p == PipelineP2P::blocking; }

  // The host waits for its GPU before the next op it issues (StackHostSyncs; RankClass::host_syncs).
  void host_sync() {
    const OpId next = static_cast<OpId>(ops_.size());
    if (host_syncs_.empty() || host_syncs_.back() != next) host_syncs_.push_back(next);
  }
  // DeepSpeed's PartitionedTensor around the pipeline transfers (tp > 1; StackHostSyncs).
  bool partitioned_transfer_syncs() const { return stack_.host_syncs.partitioned_pipeline_transfer && t_ > 1; }

  // Blocking: posted when the compute stream gets there; otherwise posted ahead. `sync`: the host waits
  // for the received message (and everything before it) before it issues the next op.
  void receive_from_stage(const char* name, int offset, std::uint32_t tag, std::uint8_t stream, bool sync = false) {
    std::vector<OpId> posted;
    if (blocking_p2p() && have_last_) posted.push_back(last_);
    extra_deps_.push_back(p2p(name, OpKind::recv, comms_.pp, offset, tag, stage_activation_bytes(), stream, posted));
    if (sync) host_sync();
    if (scatter_gather())
      blocking_collective("pp.tp.all_gather_received", CollectiveKind::all_gather, comms_.tp, double(T_) * h_ * e_);
  }

  // Blocking: the compute stream's next op waits until the send has completed.
  void send_to_stage(const char* name, int offset, std::uint32_t tag, std::uint8_t stream) {
    const OpId sent = p2p(name, OpKind::send, comms_.pp, offset, tag, stage_activation_bytes(), stream, {last_});
    if (blocking_p2p()) extra_deps_.push_back(sent);
  }

  // ZeRO 1/2 with overlap_param_gather: the previous step's weight all-gathers, issued at the start of
  // this one in buckets of consecutive layers (forward order); each layer's first forward waits for
  // its bucket. Returns the all-gather each layer of `chunk` waits for.
  // The final norm and the output layer of the last stage (its copy of a tied word embedding, pp > 1).
  double head_parameters() const {
    const double output = embedding_.output > 0.0 ? embedding_.output / t_ : p_.pp > 1 ? embedding_.word / t_ : 0.0;
    return embedding_.final_norm + output;
  }

  bool prefetch_params() const {
    return (p_.zero_stage == 1 || p_.zero_stage == 2) && p_.overlap_param_gather && comms_.dp != kNone;
  }

  std::vector<OpId> prefetch_chunk_weights(int chunk) {
    const int layers = chunk_layers(m_, p_, chunk);
    const int first_layer = chunk_first_layer(m_, p_, chunk);
    double fill_dense = chunk == 0 ? embedding_.word / t_ + embedding_.position : 0.0;
    double fill_expert = 0.0;
    std::vector<OpId> per_layer(static_cast<std::size_t>(layers));
    int first = 0;
    for (int l = 0; l < layers; ++l) {
      select_layer(first_layer + l);
      const double expert = moe_ ? groups_.mlp_up + groups_.mlp_down : 0.0;
      fill_dense += groups_.sum() - expert;
      fill_expert += expert;
      if (l + 1 == layers && chunk + 1 == chunks_) {  // in the last bucket
        const RankParameters mtp = mtp_rank_parameters(spec_);
        fill_dense += head_parameters() + mtp.dense;
        fill_expert += mtp.expert;
      }
      if (fill_dense + fill_expert < bucket_params_ && l + 1 < layers) continue;
      OpId ag = 0;
      for (const auto& [params, is_expert] : {std::pair{fill_dense, false}, std::pair{fill_expert, true}}) {
        const std::uint16_t comm = grad_communicator(is_expert);
        if (params > 0.0 && comm != kNone)
          ag = collective("dp.param_all_gather", CollectiveKind::all_gather, comm, params * weight_bytes_, kGradStream,
                          {});
      }
      for (int j = first; j <= l; ++j)
        per_layer[static_cast<std::size_t>(j)] = ag;
      first = l + 1;
      fill_dense = fill_expert = 0.0;
    }
    return per_layer;
  }

  // The final norm, the logits GEMM over the vocabulary shard, the stack's cross entropy kernels
  // (memory_recipe.cpp) and one fp32 loss per token, the vocabulary-parallel reductions.
  void output_head_forward(const std::string& phase) {
    norm(phase + ".final_norm", false, T_sp_);
    tp_forward_entry(phase + ".tp.all_gather");
    gemm(phase + ".logits", T_, double(m_.vocab) / t_, h_);
    const double logits = double(T_) * m_.vocab / t_;
    compute(phase + ".loss", KernelClass::loss, kLossFlopsPerElement * logits,
            logits * memory_recipe<CrossEntropyRecipe>(spec_.training.cross_entropy).forward_bytes_per_logit +
                T_ * kFp32Bytes);
    if (t_ > 1)
      for (int i = 0; i < kCrossEntropyAllReduces; ++i)
        blocking_collective(phase + ".tp.cross_entropy", CollectiveKind::all_reduce, comms_.tp,
                            double(T_) * kFp32Bytes);
  }

  // --- multi-token prediction (model.mtp_depth; DeepSeek-V3 sec. 2.2) ---------------------------
  // Module k on the last stage, after the main head: RMSNorm of the previous depth's hidden state, the
  // embedding of the tokens k ahead (the shared vocabulary-parallel table), its RMSNorm, the
  // projection of the 2h concatenation to h (replicated over tp: each rank projects its own tokens, as
  // MLA's down projections), one layer shaped like the model's last, then the shared output head with
  // a final norm of the module's own and a loss. Backward: the mirror image, deepest module first,
  // before the main head's (the main hidden state's gradient gathers from both).
  double norm_parameters() const { return llama_style(m_) ? double(h_) : 2.0 * h_; }
  void mtp_forward() {
    select_layer(m_.layers - 1);
    norm("fwd.mtp.hnorm", false, T_sp_);
    compute("fwd.mtp.embedding", KernelClass::embedding, 0.0, T_ * kTokenIdBytes + 2.0 * double(T_) * h_ * e_);
    tp_forward_exit("fwd.mtp.tp.embedding");
    norm("fwd.mtp.enorm", false, T_sp_);
    gemm("fwd.mtp.eh_proj", T_sp_, h_, 2.0 * h_);
    gather_layer_weights();
    forward_layer("fwd.mtp");
    output_head_forward("fwd.mtp");
  }
  // `first`: module 1, the last one back: the shared embedding's copy (pp > 1, untied) is final there.
  void mtp_backward(bool first) {
    select_layer(m_.layers - 1);
    const double logits = double(T_) * m_.vocab / t_;
    compute("bwd.mtp.loss", KernelClass::loss, kLossFlopsPerElement * logits,
            logits * memory_recipe<CrossEntropyRecipe>(spec_.training.cross_entropy).backward_bytes_per_logit);
    column_parallel_backward("mtp.logits", T_, double(m_.vocab) / t_, h_);  // the shared head's gradient
    grads(norm_parameters(), false, norm("bwd.mtp.final_norm", true, T_sp_));
    gather_layer_weights();
    backward_layer();
    gemm("bwd.mtp.eh_proj.dgrad", T_sp_, 2.0 * h_, h_);
    grads(2.0 * h_ * h_, false, wgrad_gemm("bwd.mtp.eh_proj.wgrad", 2.0 * h_, h_, T_sp_));
    grads(norm_parameters(), false, norm("bwd.mtp.enorm", true, T_sp_));
    grads(norm_parameters(), false, norm("bwd.mtp.hnorm", true, T_sp_));
    if (t_ > 1 && p_.sequence_parallel)
      blocking_collective("bwd.mtp.tp.embedding", CollectiveKind::all_gather, comms_.tp, double(T_) * h_ * e_);
    const double elements = double(T_) * h_;
    const OpId embedding =
        compute("bwd.mtp.embedding", KernelClass::embedding, elements, elements * e_ + 2.0 * elements * kFp32Bytes);
    if (first && p_.pp > 1 && embedding_.output > 0.0) grads(embedding_.word / t_, false, embedding);
  }

  void forward_unit(int chunk, int micro_batch) {
    cast_weights_ = micro_batch == 0 || !spec_.training.fp8_weight_cache;
    // StackHostSyncs::micro_batch_load: the first stage loads before its forward, the last after its receive
    const bool load = stack_.host_syncs.micro_batch_load;
    if (load && chunk == 0) host_sync();
    if (chunk > 0 && p_.pp > 1)
      receive_from_stage("pp.recv_activation", -1, kActivationTag, kRecvForwardStream,
                         partitioned_transfer_syncs() || (load && chunk + 1 == chunks_));
    std::vector<OpId> prefetched;
    if (prefetch_params() && gathered_chunks_.insert(chunk).second) prefetched = prefetch_chunk_weights(chunk);
    if (!prefetched.empty()) extra_deps_.push_back(prefetched.front());
    gather_root_weights(chunk);
    if (chunk == 0) {
      const double elements = double(T_) * h_;
      const bool positions = embedding_.position > 0.0;
      compute("fwd.embedding", KernelClass::embedding, positions ? elements : 0.0,
              T_ * kTokenIdBytes + (positions ? 3.0 : 2.0) * elements * e_);
      tp_forward_exit("fwd.tp.embedding");
    }
    const int first_layer = chunk_first_layer(m_, p_, chunk);
    for (int l = 0; l < chunk_layers(m_, p_, chunk); ++l) {
      select_layer(first_layer + l);
      gather_layer_weights();
      if (!prefetched.empty()) extra_deps_.push_back(prefetched[static_cast<std::size_t>(l)]);
      forward_layer("fwd");
    }
    fp8_scale_update("fwd.fp8.scale_update", chunk_layers(m_, p_, chunk), kForwardFp8Slots);
    if (chunk + 1 == chunks_) {
      output_head_forward("fwd");
      for (int k = 0; k < m_.mtp_depth; ++k)
        mtp_forward();
      if (stack_.loss_all_reduce_per_micro_batch)
        blocking_collective("fwd.dp.loss_all_reduce", CollectiveKind::all_reduce, comms_.dp, kLossReportBytes);
    } else if (p_.pp > 1) {
      if (partitioned_transfer_syncs()) host_sync();
      send_to_stage("pp.send_activation", +1, kActivationTag, kSendForwardStream);
    }
  }

  void backward_unit(int chunk, bool last_micro_batch) {
    grads_final_ = last_micro_batch;
    if (chunk + 1 < chunks_ && p_.pp > 1)
      receive_from_stage("pp.recv_gradient", +1, kGradientTag, kRecvBackwardStream, partitioned_transfer_syncs());
    if (chunk + 1 == chunks_) {
      for (int k = m_.mtp_depth - 1; k >= 0; --k)
        mtp_backward(k == 0);
      const double logits = double(T_) * m_.vocab / t_;
      compute("bwd.loss", KernelClass::loss, kLossFlopsPerElement * logits,
              logits * memory_recipe<CrossEntropyRecipe>(spec_.training.cross_entropy).backward_bytes_per_logit);
      // Tied embeddings and pp = 1: the output layer's gradient is completed by the embedding backward.
      // ZeRO-3: the root unit's gradients are reduce-scattered together after the unit's backward
      // (FSDP2 runs the root's post-backward in the autograd engine's final callback).
      const double head = head_parameters() - embedding_.final_norm;
      const OpId logits_wgrad = column_parallel_backward("logits", T_, double(m_.vocab) / t_, h_);
      const OpId final_norm = norm("bwd.final_norm", true, T_sp_);
      if (p_.zero_stage == 3) {
        root_grads_ += head + embedding_.final_norm;
      } else {
        grads(head, false, logits_wgrad);
        grads(embedding_.final_norm, false, final_norm);
      }
    }
    const int first_layer = chunk_first_layer(m_, p_, chunk), layers = chunk_layers(m_, p_, chunk);
    for (int l = 0; l < layers; ++l) {
      select_layer(first_layer + layers - 1 - l);  // the layers in reverse
      gather_layer_weights();
      backward_layer();
    }
    fp8_scale_update("bwd.fp8.scale_update", chunk_layers(m_, p_, chunk), kBackwardFp8Slots);
    if (chunk == 0) {
      if (t_ > 1 && p_.sequence_parallel)
        blocking_collective("bwd.tp.embedding", CollectiveKind::all_gather, comms_.tp, double(T_) * h_ * e_);
      const double elements = double(T_) * h_;
      const double tables = embedding_.position > 0.0 ? 2.0 : 1.0;
      // reads the incoming gradient, scatter-adds (read + write) into the fp32 gradient of each table
      grads(embedding_.word / t_ + embedding_.position, false,
            compute("bwd.embedding", KernelClass::embedding, tables * elements,
                    elements * e_ + tables * 2.0 * elements * kFp32Bytes));
    } else if (p_.pp > 1) {
      if (partitioned_transfer_syncs()) host_sync();
      send_to_stage("pp.send_gradient", -1, kGradientTag, kSendBackwardStream);
    }
    if (root_grads_ > 0.0) {
      grads(root_grads_, false, last_);
      root_grads_ = 0.0;
    }
    // Each model chunk's buckets are its own: the chunk's last gradients close its last buckets.
    if (grads_final_)
      for (Bucket* b : {&dense_, &expert_})
        if (b->fill > 0.0) close_bucket(*b, last_);
  }

  // --- gradients and parameters -----------------------------------------------------------------
  // The experts' gradients reduce over the expert data-parallel groups wherever the expert layout
  // differs from the attention's (ep > 1, etp != tp or cp > 1).
  std::uint16_t grad_communicator(bool expert) const { return expert && expert_grads_apart_ ? comms_.edp : comms_.dp; }

  // `params` gradients (per rank) are final once `op` has run (last micro-batch only): fill a bucket.
  void grads(double params, bool expert, OpId op) {
    if (!grads_final_ || params <= 0.0 || grad_communicator(expert) == kNone) return;
    Bucket& b = expert && expert_grads_apart_ ? expert_ : dense_;
    b.expert = expert && expert_grads_apart_;
    b.fill += params;
    if (b.fill >= bucket_params_) close_bucket(b, op);
  }

  void close_bucket(Bucket& b, OpId completed_by) {
    if (p_.overlap_grad_reduce)
      reduce_gradients(b.fill, b.expert, {completed_by});
    else
      b.pending.push_back(b.fill);
    b.fill = 0.0;
  }

  void reduce_pending(Bucket& b) {
    for (double params : b.pending)
      reduce_gradients(params, b.expert, {last_});
    b.pending.clear();
  }

  void reduce_gradients(double params, bool expert, std::vector<OpId> deps) {
    const bool zero = p_.zero_stage >= 1;
    if (p_.zero_stage == 3 && passes_.fsdp_reduce_scatter_copy_in) {
      // FSDP2's chunk_cat into the reduce-scatter buffer: the 16-bit gradients read, written in the
      // reduce dtype, on the compute stream after the gradients are final.
      ComputeOp copy;
      copy.name = "dp.grad_reduce_scatter.copy_in";
      copy.kernel = KernelClass::elementwise;
      copy.precision = Precision::fp32;
      copy.bytes = params * (weight_bytes_ + grad_bytes_);
      copy.stream = kComputeStream;
      if (have_last_ && std::find(deps.begin(), deps.end(), last_) == deps.end()) deps.push_back(last_);
      last_ = ops_.add_compute(copy, std::move(deps));
      have_last_ = true;
      deps = {last_};
    }
    reductions_.push_back(collective(zero ? "dp.grad_reduce_scatter" : "dp.grad_all_reduce",
                                     zero ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce,
                                     grad_communicator(expert), params * grad_bytes_, kGradStream, std::move(deps)));
  }

  // ZeRO-3: the layer's weights are gathered from the dp shards before each use, one layer ahead.
  void gather_layer_weights() {
    if (p_.zero_stage < 3) return;
    const double dense = groups_.sum() - (moe_ ? groups_.mlp_up + groups_.mlp_down : 0.0);
    const double expert = moe_ ? groups_.mlp_up + groups_.mlp_down : 0.0;
    // issued when the previous layer starts (after the op before it): one layer of prefetch
    std::vector<OpId> ahead;
    if (have_gather_anchor_) ahead.push_back(gather_anchor_);
    gather_anchor_ = last_;
    have_gather_anchor_ = have_last_;
    OpId gathered = 0;
    bool any = false;
    for (const auto& [params, is_expert] : {std::pair{dense, false}, std::pair{expert, true}}) {
      const std::uint16_t comm = grad_communicator(is_expert);
      if (params <= 0.0 || comm == kNone) continue;
      gathered = collective("dp.param_all_gather", CollectiveKind::all_gather, comm, params * weight_bytes_,
                            kParamGatherStream, ahead);
      any = true;
    }
    if (!any) return;
    extra_deps_.push_back(gathered);
    if (passes_.fsdp_all_gather_copy_out) {
      // FSDP2's foreach_all_gather_copy_out: the gathered buffer copied into the unsharded
      // parameters on the compute stream, before the layer's first kernel.
      compute("dp.param_all_gather.copy_out", KernelClass::elementwise, 0.0, 2.0 * (dense + expert) * weight_bytes_);
    }
  }

  // ZeRO-3: the parameters outside the layers (embeddings, final norm, output layer) are the root
  // unit's (FSDP's fully_shard / FullyShardedDataParallel of the whole model): gathered before the
  // micro-batch's forward reaches them, on the critical path of the embedding (the first chunk) or
  // of the final norm (the last), and kept until after the backward: the root is not resharded after
  // forward (torch.distributed.fsdp fully_shard: "the root FSDP state has its value specially set to
  // False"; FSDP1 _post_forward_reshard skips the root likewise).
  void gather_root_weights(int chunk) {
    if (p_.zero_stage < 3 || comms_.dp == kNone) return;
    const double params = (chunk == 0 ? embedding_.word / t_ + embedding_.position : 0.0) +
                          (chunk + 1 == chunks_ ? head_parameters() : 0.0);
    if (params <= 0.0) return;
    std::vector<OpId> deps;
    if (have_last_) deps.push_back(last_);
    const OpId gathered = collective("dp.param_all_gather.root", CollectiveKind::all_gather, comms_.dp,
                                     params * weight_bytes_, kParamGatherStream, std::move(deps));
    extra_deps_.push_back(gathered);
    if (passes_.fsdp_all_gather_copy_out)
      compute("dp.param_all_gather.copy_out", KernelClass::elementwise, 0.0, 2.0 * params * weight_bytes_);
  }

  void tied_embedding_all_reduce() {
    if (comms_.embd == kNone || !(stage_ == 0 || stage_ == p_.pp - 1)) return;
    std::vector<OpId> deps = reductions_;
    if (have_last_) deps.push_back(last_);
    reductions_.push_back(collective("embd.grad_all_reduce", CollectiveKind::all_reduce, comms_.embd,
                                     embedding_.word / t_ * grad_bytes_, kGradStream, deps));
  }

  void optimizer_step() {
    const RankParameters params = stage_rank_parameters(spec_, stage_);
    const double dp_cp = double(p_.dp) * p_.cp;
    const double shard = p_.zero_stage >= 1 ? params.dense / dp_cp + params.expert / p_.expert_dp() : params.total();
    const OptimizerStepCost cost = optimizer_step_cost(spec_.training);
    extra_deps_.insert(extra_deps_.end(), reductions_.begin(), reductions_.end());
    if (stack_.grad_norm) {
      ComputeOp norm_op;
      norm_op.name = "optimizer.grad_norm";
      norm_op.kernel = KernelClass::optimizer;
      norm_op.precision = Precision::fp32;
      norm_op.flops = shard * kGradNormFlopsPerParameter;
      norm_op.bytes = shard * grad_bytes_;
      norm_op.stream = kComputeStream;
      last_ = ops_.add_compute(norm_op, take_deps());
      have_last_ = true;
      blocking_collective("optimizer.grad_norm.tp", CollectiveKind::all_reduce, comms_.tp, kFp32Bytes);
      if (p_.zero_stage >= 1)
        blocking_collective("optimizer.grad_norm.dp", CollectiveKind::all_reduce, comms_.dp, kFp32Bytes);
    }
    if (optimizer_offload(spec_.training.optimizer_offload).host_states) {
      host_optimizer_step(shard, cost);
      gather_updated_weights(params);
      return;
    }
    // One multi-tensor kernel, or one kernel per parameter tensor (optimizer_kernels).
    const double kernels = stack_.optimizer_kernels == OptimizerKernels::per_tensor ? parameter_tensors() : 1.0;
    ComputeOp op;
    const std::string name = "optimizer." + spec_.training.optimizer;
    op.name = name;
    op.kernel = KernelClass::optimizer;
    op.precision = Precision::fp32;
    op.flops = shard * cost.flops / kernels;
    op.bytes = shard * cost.bytes / kernels;
    op.stream = kComputeStream;
    for (int i = 0; i < static_cast<int>(kernels); ++i) {
      last_ = ops_.add_compute(op, take_deps());
      have_last_ = true;
    }
    if (passes_.optimizer == OptimizerImplementation::foreach) {
      const std::string passes_name = name + ".foreach_passes";
      ComputeOp passes = op;
      passes.name = passes_name;
      passes.flops = 0.0;
      passes.bytes = shard * foreach_optimizer_extra_bytes(spec_.training.optimizer, stack_.grad_norm);
      last_ = ops_.add_compute(passes, take_deps());
    }
    gather_updated_weights(params);
  }

  // ZeRO 1 and 2: every rank updated its shard; gather the updated weights (with
  // overlap_param_gather, during the next step's forward: issued at the start of this one).
  void gather_updated_weights(const RankParameters& params) {
    if ((p_.zero_stage == 1 || p_.zero_stage == 2) && !prefetch_params()) {
      for (const auto& [count, expert] : {std::pair{params.dense, false}, std::pair{params.expert, true}}) {
        const std::uint16_t comm = grad_communicator(expert);
        if (count > 0.0 && comm != kNone)
          collective("dp.param_all_gather", CollectiveKind::all_gather, comm, count * weight_bytes_, kGradStream,
                     {last_});
      }
    }
  }

  // optimizer_offload cpu: the shard's gradients to the host, the update on the CPU, the weights back
  // (see the top of the file).
  void host_optimizer_step(double shard, const OptimizerStepCost& cost) {
    const auto add = [&](std::string_view name, double flops, double bytes) {
      ComputeOp op;
      op.name = name;
      op.kernel = KernelClass::optimizer;
      op.precision = Precision::fp32;
      op.flops = flops;
      op.bytes = bytes;
      op.stream = kComputeStream;
      last_ = ops_.add_compute(op, take_deps());
      have_last_ = true;
    };
    add("optimizer.host_copy_out", 0.0, shard * grad_bytes_);
    const std::string update = "optimizer." + spec_.training.optimizer + ".host_update";
    add(update, shard * cost.flops, shard * cost.bytes);
    add("optimizer.host_copy_in", 0.0, shard * weight_bytes_);
  }

  // Parameter tensors of this stage's ranks (see the top of the file).
  double parameter_tensors() const {
    const double dense_layer = llama_style(m_) ? kLlamaLayerTensors : kGptLayerTensors;
    // router, more experts, the shared experts' MLP
    const double moe_layer = dense_layer + 1.0 + kTensorsPerExpert * (double(local_experts_) - 1.0) +
                             (shared_f_ > 0.0 ? kTensorsPerExpert : 0.0);
    double tensors = 0.0;
    for (int c = stage_; c < chunks_; c += p_.pp) {
      const int first = chunk_first_layer(m_, p_, c);
      for (int layer = first; layer < first + chunk_layers(m_, p_, c); ++layer)
        tensors += m_.moe_layer(layer) ? moe_layer : dense_layer;
    }
    if (stage_ == 0) tensors += embedding_.position > 0.0 ? 2.0 : 1.0;
    if (stage_ == p_.pp - 1) tensors += (biases_ ? 2.0 : 1.0) + (head_parameters() > embedding_.final_norm ? 1.0 : 0.0);
    return tensors;
  }

  const WorkloadSpec& spec_;
  const StackProfile& stack_;
  const StackMemoryPasses& passes_;
  const ModelSpec& m_;
  const ParallelismSpec& p_;
  OpTable& ops_;
  std::vector<OpId>& host_syncs_;  // RankClass::host_syncs
  Communicators comms_;
  int stage_;
  Precision precision_;  // of everything but fp8 GEMMs
  double e_;             // bytes per element of precision_
  bool fp8_;             // training.precision fp8: the linear layers' GEMMs in fp8_gemm_precision_
  Precision fp8_gemm_precision_;
  bool fp8_gemms_ = false;    // a LinearScope is alive
  double root_grads_ = 0.0;   // ZeRO-3: the root unit's gradients of this backward unit, reduced at its end
  bool cast_weights_ = true;  // the linear layers being emitted cast their weights
  double grad_bytes_, weight_bytes_;
  const ActivationInfo& act_;
  // one rank's share of a layer: a MoE layer (any layer of a dense model), a dense one, the current one
  LayerParameterGroups moe_groups_, dense_groups_;
  LayerParameterGroups groups_;
  EmbeddingParameterGroups embedding_;
  double bucket_params_;

  // d_: query/key dimensions per head, v_dim_: value's (MHA: both head_dim); q_ = heads_ x d_ and
  // o_ = heads_ x v_dim_ the rank's query and attention-output widths, kv_ its K width (kv heads x d_)
  std::uint32_t t_ = 1, b_ = 0, s_ = 0, T_ = 0, T_sp_ = 0, h_ = 0, d_ = 0, v_dim_ = 0, heads_ = 0, q_ = 0, o_ = 0,
                kv_ = 0;
  // the current layer's MLP width (dense_f_ or expert_f_, / tp) and tokens through it (routed_tokens_:
  // the busiest rank's, moe_routing.hpp, or T)
  std::uint32_t f_ = 0, dense_f_ = 0, expert_f_ = 0, expert_tokens_ = 0, routed_tokens_ = 0, local_experts_ = 0;
  double shared_f_ = 0.0;  // the shared experts' MLP width / tp (0: none)
  int chunks_ = 1;
  bool moe_ = false;                 // the current layer has experts (select_layer)
  bool expert_grads_apart_ = false;  // the experts' gradients reduce over comms_.edp
  std::uint32_t etp_ = 1;            // the experts' tensor parallelism (p.effective_etp())
  bool mla_ = false;                 // multi-head latent attention
  bool biases_ = true;               // GPT-style layers have biases; Llama-style (swiglu) none
  bool eager_rmsnorm_ = false;       // stack fused.rmsnorm false and a Llama-style model: PyTorch eager ops
  bool eager_rope_ = false;          // stack fused.rope false and a Llama-style model
  bool eager_swiglu_ = false;        // stack fused.swiglu false, a SwiGLU model, not compiled: F.silu, then *
  bool repeat_kv_ = false;           // stack fused.gqa false and kv_heads < heads: K/V repeated per query head

  OpId last_ = 0;
  bool have_last_ = false;
  std::vector<OpId> extra_deps_;   // dependencies of the next op on stream 0 besides the previous one
  std::vector<OpId> deps_buffer_;  // next_deps()' result
  bool grads_final_ = false;
  std::set<int> gathered_chunks_;  // chunks whose weights were prefetched (overlap_param_gather)
  OpId gather_anchor_ = 0;
  bool have_gather_anchor_ = false;
  Bucket dense_, expert_;
  std::vector<OpId> reductions_;
};

std::uint16_t add(ExecutionGraph& graph, const char* name, std::vector<std::vector<int>> groups,
                  bool userbuffers = false) {
  if (groups.empty() || groups.front().size() < 2) return kNone;
  return graph.add_communicator(Communicator{name, std::move(groups), userbuffers});
}

}  // namespace

ExecutionGraph generate_transformer_training(const WorkloadSpec& spec, int world_size) {
  return generate_transformer_training(
      spec, world_size, find_software_stack(spec.training.effective_stack(), spec.source_file, "/training/stack"));
}

ExecutionGraph generate_transformer_training(const WorkloadSpec& spec, int world_size, const StackProfile& stack) {
  const ParallelismSpec& p = spec.parallelism;
  // DualPipe's units (pipeline_schedule.hpp) are generated and its memory and closed-form bubble are
  // modelled, but the graph does not yet route its two directions' sends nor split backwards into B and W.
  if (p.pipeline_schedule == "dualpipe")
    throw SpecError(spec.source_file, "/parallelism/pipeline_schedule",
                    "the dualpipe schedule is not replayed yet (its units, memory and closed-form bubble are "
                    "modelled: workloads/README.md); expected gpipe, 1f1b or interleaved for a simulated step");
  if (p.dp <= 0 || std::int64_t{p.tp} * p.pp * p.cp * p.dp != world_size)
    throw SimulationError("generate_transformer_training: the workload's parallelism is not resolved for " +
                          std::to_string(world_size) + " GPUs (call resolve_parallelism first)");
  const RankLayout layout = dense_rank_layout(p);
  const RankLayout experts = expert_rank_layout(p);
  // The memory passes of the stack that runs the step (a profile given here, e.g. fitted by calibrate
  // --from-trace, carries those of the stack it was fitted from).
  const StackMemoryPasses& passes = stack.memory_passes;
  ExecutionGraph graph(world_size);
  Communicators comms;
  using D = ParallelDim;
  comms.tp = add(graph, "tp", layout.groups({D::tp}));
  // Megatron-LM --tp-comm-overlap runs the overlapped tp collectives through Transformer Engine's
  // userbuffers (transformer_engine/common/comm_gemm_overlap: CUDA-IPC / multicast-mapped buffers the
  // GPUs write into directly), not NCCL: the same groups, without NCCL's per-call latencies.
  if (p.tp_comm_overlap && p.sequence_parallel && comms.tp != kNone) {
    comms.tp_overlap = add(graph, "tp", layout.groups({D::tp}), /*userbuffers=*/true);
  }
  comms.cp = add(graph, "cp", layout.groups({D::cp}));
  const bool moe = spec.model.moe.experts > 0;
  if (moe) comms.ep = add(graph, "ep", experts.groups({D::ep}));
  comms.dp = add(graph, "dp", layout.groups({D::ep, D::edp, D::cp}));
  if (moe && (p.ep > 1 || p.effective_etp() != p.tp || p.cp > 1))
    comms.edp = add(graph, "edp", experts.groups({D::edp}));
  if (moe) comms.etp = add(graph, "etp", experts.groups({D::tp}));
  comms.pp = add(graph, "pp", layout.groups({D::pp}));
  // the first and last stages' copies of the word embedding: tied, or shared with multi-token prediction
  if (p.pp > 1 && (embedding_parameter_groups(spec.model).output == 0.0 || spec.model.mtp_depth > 0)) {
    std::vector<std::vector<int>> pairs;
    for (int r : layout.stage_ranks(0)) {
      RankCoords c = layout.coords(r);
      c.pp = p.pp - 1;
      pairs.push_back({r, layout.rank(c)});
    }
    comms.embd = add(graph, "embd", std::move(pairs));
  }
  for (int stage = 0; stage < p.pp; ++stage) {
    RankClass& cls =
        graph.add_class(p.pp == 1 ? "all ranks" : "stage " + std::to_string(stage), layout.stage_ranks(stage));
    StageBuilder(spec, stack, passes, cls.ops, cls.host_syncs, comms, stage).build();
  }
  return graph;
}

}  // namespace clustersim
