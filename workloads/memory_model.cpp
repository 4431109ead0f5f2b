// Per-GPU memory of a training configuration as the framework allocates it, in bytes, per pipeline
// stage: named lines at the moment of the step when their sum peaks.
//
// Model state (Megatron-LM's layout). One GPU of pipeline stage i holds L / pp transformer layers; the
// first stage also the word embedding (split over tp, vocabulary-parallel) and the learned position
// embedding (replicated); the last stage the final norm and the output projection (split over tp; with
// tied embeddings and pp > 1 it keeps a copy of the word embedding, whose gradient it all-reduces with
// the first stage). Inside a layer, tensor parallelism splits every matrix and the biases of the
// column-parallel ones (QKV, MLP up); the norms and the biases of the row-parallel ones (attention
// output, MLP down) are replicated on every tp rank. P = the stage's parameters per GPU.
// Per parameter (training_state.hpp): mixed precision keeps 2-byte weights, 4-byte fp32 main grads and
// 12 bytes of Adam state (fp32 master weights, two moments; SGD: master + momentum = 8); fp32 training
// 4 / 4 / 8 (SGD 4). fp8 adds to the weights the quantized copies of the linear layers' weights
// (fp8_weight_copy_bytes per parameter of QKV, attention output, MLP up and down; not sharded by ZeRO).
// ZeRO divides by the sharding group n = dp x cp (the context-parallel ranks hold the same parameters
// and shard with the data-parallel ones): stage 1 the optimizer state, stage 2 also the gradients,
// stage 3 also the weights (Rajbhandari et al. 2020, Figure 1: 2 + 2 + 12 bytes per parameter of
// mixed-precision Adam become 2 + 2 + 12/n, 2 + (2 + 12)/n, (2 + 2 + 12)/n):
//   W = P w / (n if zero >= 3) + (P_linear c_fp8 if zero < 3),  O = P o / (n if zero >= 1),
//   G = P g / (n if zero >= 2)
// Under ZeRO-3 (FSDP) the fp8 copies are cast from each layer's all-gathered weights and freed with
// them (torchao Float8Linear under FSDP2): they are part of the gathered layers (buffers below).
//
// Activations stored for the backward pass, per layer and micro-batch, 16-bit activations (Korthikanti
// et al. 2022, "Reducing Activation Recomputation in Large Transformer Models", section 4.1 and Table 2;
// s sequence per GPU (seq_len / cp), b micro-batch, h hidden, a heads, t tp, d = 1 with dropout, 0
// without):
//   recompute none, t = 1:                  s b h (32 + 2 d + (2 + 3 d) a s / h)
//             TP, no sequence parallelism:  s b h (8 + 2 d + 24/t + (2 + 3 d) a s / (h t))
//             TP + sequence parallelism:    s b h ((32 + 2 d)/t + (2 + 3 d) a s / (h t))
//   recompute selective: the same without the a s / h term (the core attention is recomputed)
//   recompute full: 2 s b h (the layer's input), / t with sequence parallelism
//   recompute selective with training.selective_recompute matmul_outputs (torchtitan): the layer's
//     input, every other matmul's output and attention's output (matmul_outputs_bytes below)
// The 34 of Korthikanti's table counts two dropout masks of s b h bytes each (after the attention
// projection and after the MLP); without dropout they do not exist (32). The replicated part without
// sequence parallelism is the two norms' inputs (4), the QKV and MLP-up inputs (4) and the masks; the
// t-split part Q, K, V (6), the attention output (2), the GeLU input (8) and the MLP-down input (8).
// The a s / h term is unfused attention's a x s x s tensors: the softmax output (2 bytes per score,
// saved for the softmax backward and the product with V), with dropout also its mask (1) and output
// (2): Korthikanti's 5. A fused kernel (FlashAttention) keeps none of them: only its output (among
// the 32) and a log-sum-exp of 4 a s b / t bytes (under 0.1 % of the layer for h >= 1024, neglected),
// and regenerates its dropout mask from the RNG state. (The table assumes a * head_dim = h and a 4h
// GeLU MLP.)
// The last stage also keeps, for the micro-batch at the loss, the inputs of the final norm and of the
// output projection: 4 s b h, / t with sequence parallelism.
//
// Micro-batches in flight on stage i (0-based) of pp, m micro-batches per step, v virtual stages:
//   no pipeline 1; GPipe m; 1F1B min(pp - i, m) (the warm-up of stage i runs pp - i - 1 forwards
//   ahead); interleaved 1F1B min(2 (pp - i - 1) + (v - 1) pp + 1, m v) model chunks of L / (pp v)
//   layers, i.e. that many / v micro-batches of the stage's L / pp layers (Megatron-LM's warm-up; on
//   the first stage pp (1 + (pp - 1) / (pp v)), Korthikanti et al. section 4.2.3).
//   DualPipe: the peak over the rank's schedule (dualpipe_schedule.hpp) of forwards begun and not yet
//   through their (full or input-gradient) backward, counting an F&B pair's forward before its backward:
//   pp + 1 chunks of L / pp layers on every rank (DeepSeek-V3 report, Table 2: activation "PP + 1").
//   A split backward's weight-gradient inputs are counted with it as freed at its input part, as the table does.
// DualPipe ranks hold two chunks, model stages i and pp - 1 - i (parameters "2x", Table 2): the
// parameter-bound terms sum both stages (rank 0 and pp - 1 hold the embedding and the output layer),
// the activations take the mean of the two stages' layers per in-flight chunk.
//
// The moments of the step (MemoryPhase) and what is alive at each, besides W + O + buffers + workspace:
//   loss (last stage)  G_fwd + activations + logits, where logits = c s b V / t with c the
//                      training.cross_entropy recipe's bytes per logit (memory_recipe.cpp: 6 for
//                      Megatron's vocab-parallel loss, 12 for PyTorch's cross_entropy of fp32 logits)
//   backward           G_fwd + activations + the first backward layer's working set: the GeLU backward
//                      holds its incoming gradient and the one it produces (2 x 2 s b f / t, f the MLP
//                      width) beside the layer's output gradient (2 s b h, / t with sequence
//                      parallelism); with full recompute (or torchtitan's op-level selective one)
//                      also the layer's recomputed activations (the recompute-none bytes of one layer); on the last
//                      stage, with a per-step grad buffer, also the output projection's 16-bit gradient (w V h / t:
//                      with tied embeddings it waits in autograd's input buffer for the embedding's contribution;
//                      Megatron-LM's persistent buffer comes with --gradient-accumulation-fusion, on by
//                      default, whose weight-gradient GEMMs accumulate straight into the fp32 buffer)
//   optimizer          G (every main gradient; with a 16-bit grad buffer also the optimizer's fp32
//                      copy of its shard, 4 P / n with ZeRO >= 1) + on the first stage the last gradient the backward
//                      produces, the word embedding's 16-bit gradient (w V h / t), before it is added to
//                      its main gradient; fused Adam updates in place (no temporaries)
// G_fwd, the main gradients alive before the last backward pass: G when the grad buffer is persistent
// (Megatron-LM) or when earlier micro-batches of the step have accumulated into it, else 0 (PyTorch
// eager, one micro-batch: gradients are allocated in the backward pass and freed after the step).
// The peak is the largest of the stage's moments; its lines are that moment's.
// training.optimizer_offload cpu (workloads/optimizer_offload.cpp: ZeRO-Offload, Megatron-Core's
// --optimizer-cpu-offload): O moves off the GPU whole, to the host line host_optimizer = O (same
// sharding); the GPU's other lines are unchanged, so every moment's peak drops by exactly O.
// host_fits = host_optimizer <= the host tier's capacity per GPU where the GPU gives it (GB200 / GB300:
// the Grace CPU's LPDDR5X share, sim/hardware/host_memory_tier.hpp), else true (unknown).
//
// Communication buffers: 2 gradient buckets in flight (bucket of effective_bucket_size_params
// parameters, at most the stage's, times the gradient bytes) when dp x cp > 1; with pp > 1 a send and
// a receive buffer of one micro-batch's activations, 2 s b h e bytes (/ t with sequence parallelism);
// under ZeRO-3 the unsharded weights of two layers (the one computed and the one prefetched: FSDP's
// rate limiter allows two all-gathers in flight, Zhao et al. 2023; FSDP2 prefetches one layer), each
// with its fp8 copy in fp8 training: 2 (P_layer w + P_linear_layer c_fp8).
// The K/V all-gather of context parallelism (parallelism.cp_comm all_gather, cp > 1): PyTorch's
// context_parallel with the allgather rotate method (torch/distributed/tensor/experimental/_attention.py,
// _AllGatherRotater, torchtitan's default) concatenates the rank's K and V and all-gathers them once
// per attention, forward and again in the backward (_templated_ring_attention and its backward: the
// aggregated buffer lives while the layer's attention runs and is freed with the rotater). Its bytes,
// 16-bit, the whole sequence:
//   cp_kv_gather = 2 (K and V) x e x seq_len x b x kv width / t,
// kv width = heads x head_dim where the stack repeats K/V to every query head before the attention
// (fused.gqa false: torchtitan's repeat_kv), else kv_heads x head_dim. Counted at the backward moment
// (the first backward layer's attention); the loss moment has no attention running.
// The fp8 operands of torchao's Float8Linear (training.fp8_recipe tensorwise): at torchao eab345c
// (the version of torchtitan's published runs) Float8Linear.forward casts the input and the weight to
// fp8 and manual_float8_matmul_with_args_in_float8 saves both for the backward
// (ctx.save_for_backward(input_fp8, weight_fp8_t); force_recompute_fp8_weight_in_bwd off by default).
// Each linear casts its own input, one byte per element: Q, K, V and the MLP's up (and gate) projections
// read the layer's s b h normed input (after the sequence-parallel all-gather), the output projection
// the attention output (s b heads head_dim / t), the MLP's down projection s b f / t:
//   fp8_saved_operands = s b (h x (3 + MLP input projections) + heads head_dim / t + f / t)
// The fp8 weight copies saved beside them are the gathered layers' fp8 copies of the buffers (ZeRO-3)
// or the persistent ones of the weights line. Counted where the layer's forward is recomputed in the
// backward (full, or torchtitan's op-level selective recompute whose save list has no fp8 cast): one
// layer's worth at the backward moment. Without recompute they are saved for every layer: not
// modelled (the 16-bit activation count of Korthikanti stands for them).
// Workspace: cuBLAS keeps one workspace per (handle, stream), allocated through PyTorch's caching
// allocator; handles are per thread and the backward pass runs on autograd's device thread, so a step
// holds two. Size: 32 MiB on Hopper and later (PyTorch aten/src/ATen/cuda/CublasHandlePool.cpp,
// getChosenWorkspaceSize: ":4096:8" on sm90, the size the cuBLAS documentation recommends for
// cublasSetWorkspace on Hopper; cuBLASLt shares it by default, TORCH_CUBLASLT_UNIFIED_WORKSPACE),
// 4096 KiB x 2 + 16 KiB x 8 = 8.125 MiB before. "Hopper and later" is read as having an fp8 tensor
// path (which also counts the L4, Ada, as Hopper: 48 MiB too much there).
// Together these lines are the allocated peak (torch.cuda.max_memory_allocated): h100-device's 12 rows
// within 0.7 % (median 0.1 %), nothing fitted (tests/cpp/sim/hardware_memory_model_test.cpp).
//
// Beyond what the framework allocates:
//   allocator reserve  = r / (1 - r) x the stage's largest dynamic memory (activations + logits +
//                        transients over the moments), r = 0.15: PyTorch's caching allocator keeps freed
//                        blocks cached, and the step's tensors of many sizes leave a fraction of the
//                        reserved memory unusable. Assumed from GMLake (Guo et al., ASPLOS 2024: its
//                        stitching allocator removes 15 % fragmentation on average, up to 33 %, over
//                        PyTorch's on eight LLM trainings on A100 80GB); model state, allocated once,
//                        does not fragment. Not measured by h100-device (which records the allocated peak).
//   CUDA context       400 MiB: the driver's state and the kernels loaded lazily (CUDA >= 11.7), about
//                      400 MB in PyTorch (pytorch/pytorch#109888, ptrblck, 2023; 300-500 MB in #107667).
// reserved = allocated + reserve (torch.cuda.max_memory_reserved); peak = reserved + context (the
// process's use of the GPU, what nvidia-smi shows); fits = peak <= capacity. The reserved peak against
// torchtitan's published max_memory_reserved (torchtitan-h100, 9 rows): median |error| 4.5 %, -4.9 %
// to +9.8 % but for the 70B FSDP x TP row (-21 %); nothing fitted.
#include "workloads/memory_model.hpp"

#include <algorithm>
#include <utility>

#include "sim/core/enum_names.hpp"
#include "sim/core/units.hpp"
#include "workloads/attention_implementation.hpp"
#include "workloads/context_parallel_comm.hpp"
#include "workloads/fp8_recipe.hpp"
#include "workloads/memory_recipe.hpp"
#include "workloads/optimizer_offload.hpp"
#include "workloads/parameter_sharding.hpp"
#include "workloads/pipeline_schedule.hpp"
#include "workloads/software_stack.hpp"
#include "workloads/training_state.hpp"
#include "workloads/transformer_math.hpp"

namespace clustersim {
namespace {

constexpr double kActivationBytes = 2.0;      // 16-bit activations and their gradients
constexpr double kFp32Bytes = 4.0;            // the optimizer's fp32 copy of a 16-bit gradient shard
constexpr double kFp8Bytes = 1.0;             // torchao's float8_e4m3fn casts
constexpr double kFragmentedFraction = 0.15;  // of the reserved dynamic memory (GMLake)
constexpr double kCudaContextBytes = 400.0 * units::kMiB;
constexpr double kWorkspacesPerStep = 2.0;  // forward thread + autograd's backward thread
constexpr double kHopperWorkspaceBytes = 32.0 * units::kMiB;
constexpr double kOlderWorkspaceBytes = (4096.0 * 2 + 16.0 * 8) * 1024.0;

constexpr EnumName<MemoryPhase> kPhaseNames[] = {
    {MemoryPhase::loss, "loss"}, {MemoryPhase::backward, "backward"}, {MemoryPhase::optimizer, "optimizer"}};

double workspace_bytes(const DeviceMemory& device) {
  return kWorkspacesPerStep * cublas_workspace_bytes(device.fp8_tensor_cores);
}

// What one stage holds whatever the moment, and the sizes its moments are built from.
struct StageTerms {
  double parameters = 0.0;
  double in_flight = 0.0;
  double weights = 0.0, gradients = 0.0, optimizer = 0.0;
  double host_optimizer = 0.0;             // training.optimizer_offload cpu: the optimizer state in host memory
  double gradients_before_backward = 0.0;  // G_fwd
  double layer_activations = 0.0;          // every in-flight micro-batch's layers
  double head_activations = 0.0;           // last stage: the final norm's and output projection's inputs
  double logits = 0.0;                     // last stage: the loss at its peak
  double layer_backward = 0.0;             // one layer's backward working set
  double output_gradient = 0.0;            // last stage: the output projection's 16-bit gradient
  double embedding_gradient = 0.0;         // first stage: the word embedding's 16-bit gradient
  double main_gradient_shard = 0.0;        // 16-bit grad buffer: the optimizer's fp32 copy of its shard
  double cp_kv_gather = 0.0;               // cp_comm all_gather: one layer's gathered K and V
  double fp8_saved_operands = 0.0;         // tensorwise fp8: the recomputed layer's saved fp8 inputs
  double buffers = 0.0;
  bool last = false;
};

StageTerms stage_terms(const WorkloadSpec& spec, int i) {
  const ModelSpec& m = spec.model;
  const ParallelismSpec& p = spec.parallelism;
  const TrainingSpec& t = spec.training;
  const double dp = std::max(p.dp, 1), tp = p.tp;
  // ZeRO shards over the data-parallel ranks and the context-parallel ranks together: both hold the
  // same parameters (Megatron-Core's distributed optimizer and gradient buffers use
  // get_data_parallel_group(with_context_parallel=True); torchtitan applies fully_shard over its
  // "dp_shard_cp" mesh).
  const double shard = dp * p.cp;
  const double s = double(m.seq_len) / p.cp, b = t.micro_batch, h = m.hidden, V = m.vocab, f = m.ffn_hidden;
  const double sp_split = p.sequence_parallel ? tp : 1.0;
  const ParameterStateBytes per_param = parameter_state_bytes(t);
  const AttentionKernel attention =
      find_attention_implementation(t.attention).fused ? AttentionKernel::fused : AttentionKernel::unfused;

  StageTerms x;
  const std::vector<int> held = pipeline_rank_stages(p.pipeline_schedule, p.pp, i);
  x.last = std::find(held.begin(), held.end(), p.pp - 1) != held.end();
  const bool first = std::find(held.begin(), held.end(), 0) != held.end();
  double held_layers = 0.0;
  RankParameters split;
  for (const int stage : held) {
    x.parameters += stage_parameters(spec, stage);
    held_layers += stage_layers(m, p, stage);
    const RankParameters part = stage_rank_parameters(spec, stage);
    split.dense += part.dense;
    split.expert += part.expert;
  }
  x.in_flight = micro_batches_in_flight(spec, i);
  const LayerParameterGroups layer = rank_layer_parameter_groups(m, p);
  const double linear_parameters = layer.qkv + layer.attention_out + layer.mlp_up + layer.mlp_down;
  const bool zero3 = p.zero_stage >= 3;
  // The fp8 copies of the linear weights persist only where the 16-bit weights do (ZeRO < 3). Under
  // ZeRO-3 (FSDP) each layer's fp8 copy is cast from its all-gathered weights in the forward pass and
  // freed with them: it is counted with the gathered layers below.
  x.weights = x.parameters * per_param.weights / (zero3 ? shard : 1.0) +
              (zero3 ? 0.0 : linear_parameters * held_layers * fp8_weight_copy_bytes(t));
  const GradBufferRecipe& grad_buffer = memory_recipe<GradBufferRecipe>(t.grad_buffer);
  // The experts' states shard over the expert data-parallel ranks, tp cp dp / (ep etp) of them
  // (Megatron-Core's distributed optimizer over the expert data-parallel group; rank_layout.hpp).
  const double expert_shard = m.moe.experts > 0 ? double(p.expert_dp()) : shard;
  const auto sharded = [&](double bytes_per_parameter, bool on) {
    return split.dense * bytes_per_parameter / (on ? shard : 1.0) +
           split.expert * bytes_per_parameter / (on ? expert_shard : 1.0);
  };
  x.gradients = sharded(per_param.gradients, p.zero_stage >= 2);
  // A 16-bit buffer: the optimizer step works on an fp32 copy of the rank's shard of the gradients.
  if (grad_buffer.parameter_dtype) x.main_gradient_shard = sharded(kFp32Bytes, p.zero_stage >= 1);
  x.optimizer = sharded(per_param.optimizer, p.zero_stage >= 1);
  if (optimizer_offload(t.optimizer_offload).host_states) std::swap(x.optimizer, x.host_optimizer);
  const bool accumulated = grad_buffer.persistent || spec.micro_batches() > 1;
  x.gradients_before_backward = accumulated ? x.gradients : 0.0;
  // the multi-token prediction modules' layers on the last stage, one each (DeepSeek-V3 sec. 2.2)
  const double mtp_layers = x.last ? m.mtp_depth : 0;
  const double chunk_layers = (held_layers + mtp_layers) / double(held.size());
  x.layer_activations = layer_activation_bytes(spec, attention) * chunk_layers * x.in_flight;
  const double vocab_shard = V * h / tp;
  if (x.last) {
    x.head_activations = 2.0 * kActivationBytes * s * b * h / sp_split;
    // the main head's logits and each multi-token prediction module's, all kept for the backward
    x.logits =
        (1.0 + m.mtp_depth) * memory_recipe<CrossEntropyRecipe>(t.cross_entropy).peak_bytes_per_logit * s * b * V / tp;
    if (!grad_buffer.persistent) x.output_gradient = per_param.weights * vocab_shard;
  }
  if (first) x.embedding_gradient = per_param.weights * vocab_shard;
  x.layer_backward = 2.0 * kActivationBytes * s * b * f / tp + kActivationBytes * s * b * h / sp_split;
  const bool recomputes_layer =
      t.recompute == "full" || (t.recompute == "selective" && t.selective_recompute == "matmul_outputs");
  if (recomputes_layer) x.layer_backward += layer_activation_bytes(spec, attention, "none");

  const double heads_width = double(m.heads) * m.effective_head_dim() / tp;
  if (p.cp > 1 && find_context_parallel_comm(p.cp_comm).all_gather_kv) {
    const StackProfile stack = find_software_stack(t.effective_stack(), spec.source_file, "/training/stack");
    const double kv_width =
        stack.fused.gqa ? double(m.effective_kv_heads()) * m.effective_head_dim() / tp : heads_width;
    x.cp_kv_gather = 2.0 * kActivationBytes * double(m.seq_len) * b * kv_width;
  }
  if (t.precision == Precision::fp8 && t.fp8_recipe == Fp8Recipe::tensorwise && recomputes_layer) {
    const double input_projections = 3.0 + (m.activation == "swiglu" ? 2.0 : 1.0);
    x.fp8_saved_operands = kFp8Bytes * s * b * (h * input_projections + heads_width + f / tp);
  }

  if (shard > 1.0) {
    const double bucket = std::min(double(p.effective_bucket_size_params()), x.parameters);
    x.buffers += 2.0 * bucket * per_param.gradients;
  }
  if (p.pp > 1) x.buffers += 2.0 * s * b * h * bytes_per_element(activation_precision(t)) / sp_split;
  if (zero3 && shard > 1.0) {
    // The unsharded weights of the layer being computed and of the one prefetched (FSDP: at most two
    // all-gathers in flight, Zhao et al. 2023 section 4.3 "rate limiter", FSDP2's one-layer prefetch),
    // each with its fp8 copy in fp8 training.
    x.buffers += 2.0 * (layer.sum() * per_param.weights + linear_parameters * fp8_weight_copy_bytes(t));
  }
  return x;
}

// The lines of stage terms `x` at moment `phase` (without the lines beyond the allocated peak).
MemoryFootprint lines_at(const StageTerms& x, MemoryPhase phase) {
  MemoryFootprint f;
  f.phase = phase;
  f.parameters = x.parameters;
  f.micro_batches_in_flight = x.in_flight;
  f.weights_bytes = x.weights;
  f.optimizer_bytes = x.optimizer;
  f.host_optimizer_bytes = x.host_optimizer;
  f.communication_buffers_bytes = x.buffers;
  switch (phase) {
    case MemoryPhase::loss:
      f.gradients_bytes = x.gradients_before_backward;
      f.activations_bytes = x.layer_activations + x.head_activations;
      f.logits_bytes = x.logits;
      break;
    case MemoryPhase::backward:
      f.gradients_bytes = x.gradients_before_backward;
      f.activations_bytes = x.layer_activations + x.head_activations;
      f.transient_bytes = x.layer_backward + x.output_gradient;
      f.cp_kv_gather_bytes = x.cp_kv_gather;
      f.fp8_saved_operands_bytes = x.fp8_saved_operands;
      break;
    case MemoryPhase::optimizer:
      f.gradients_bytes = x.gradients + x.main_gradient_shard;
      f.transient_bytes = x.embedding_gradient;
      break;
  }
  return f;
}

double dynamic_bytes(const MemoryFootprint& f) {
  return f.activations_bytes + f.logits_bytes + f.transient_bytes + f.cp_kv_gather_bytes + f.fp8_saved_operands_bytes;
}

// Completes `f` (the lines of one moment) with the workspace, the sum, the lines beyond it and the fit.
void complete(MemoryFootprint& f, const DeviceMemory& device, double largest_dynamic_bytes) {
  f.workspace_bytes = workspace_bytes(device);
  f.allocated_bytes = f.weights_bytes + f.gradients_bytes + f.optimizer_bytes + f.activations_bytes + f.logits_bytes +
                      f.transient_bytes + f.cp_kv_gather_bytes + f.fp8_saved_operands_bytes +
                      f.communication_buffers_bytes + f.workspace_bytes;
  f.allocator_reserve_bytes = kFragmentedFraction / (1.0 - kFragmentedFraction) * largest_dynamic_bytes;
  f.cuda_context_bytes = kCudaContextBytes;
  f.framework_overhead_bytes = f.workspace_bytes + f.allocator_reserve_bytes + f.cuda_context_bytes;
  f.reserved_bytes = f.allocated_bytes + f.allocator_reserve_bytes;
  f.peak_bytes = f.reserved_bytes + f.cuda_context_bytes;
  f.capacity_bytes = device.hbm_capacity_bytes;
  f.fits = f.peak_bytes <= f.capacity_bytes;
  f.host_capacity_bytes = device.host_capacity_bytes;
  f.host_fits = f.host_capacity_bytes <= 0.0 || f.host_optimizer_bytes <= f.host_capacity_bytes;
}

std::vector<MemoryPhase> phases_of(const StageTerms& x) {
  if (x.last) return {MemoryPhase::loss, MemoryPhase::backward, MemoryPhase::optimizer};
  return {MemoryPhase::backward, MemoryPhase::optimizer};
}

double largest_dynamic(const StageTerms& x) {
  double largest = 0.0;
  for (MemoryPhase phase : phases_of(x))
    largest = std::max(largest, dynamic_bytes(lines_at(x, phase)));
  return largest;
}

// torchtitan's op-level selective checkpointing (training.selective_recompute matmul_outputs): the
// layer's input and, in call order, the outputs of the 1st, 3rd, 5th ... matmul (Q, K, V, attention
// output, [gate,] up, down: Llama's separate projections) and scaled_dot_product_attention's output.
// A row-parallel matmul's output is the full s b h partial sum; with sequence parallelism its
// reduce-scatter output (in the save list too) is kept beside it. 16-bit, s b of each width:
//   Llama 8B (t = 1): h + Q h + V h kv/a + attention h + gate f + down h = 2 s b (4.25 h + f) bytes.
double matmul_outputs_bytes(const WorkloadSpec& spec) {
  const ModelSpec& m = spec.model;
  const ParallelismSpec& p = spec.parallelism;
  const double t = p.tp, sp = p.sequence_parallel ? t : 1.0;
  const double h = m.hidden, f = m.ffn_hidden;
  const double q = double(m.heads) * m.effective_head_dim() / t;
  const double kv = double(m.effective_kv_heads()) * m.effective_head_dim() / t;
  const double row_parallel = h + (t > 1.0 && p.sequence_parallel ? h / t : 0.0);
  std::vector<double> outputs = {q, kv, kv, row_parallel};  // Q, K, V, attention output projection
  if (m.activation == "swiglu") outputs.push_back(f / t);   // gate
  outputs.push_back(f / t);                                 // up
  outputs.push_back(row_parallel);                          // down
  double kept = h / sp + q;                                 // the layer's input, attention's output
  for (std::size_t k = 0; k < outputs.size(); k += 2)
    kept += outputs[k];
  return kActivationBytes * double(m.seq_len) / p.cp * spec.training.micro_batch * kept;
}

}  // namespace

double cuda_context_bytes() {
  return kCudaContextBytes;
}

double cublas_workspace_bytes(bool fp8_tensor_cores) {
  return fp8_tensor_cores ? kHopperWorkspaceBytes : kOlderWorkspaceBytes;
}

const char* to_string(MemoryPhase p) {
  return name_of(kPhaseNames, p);
}

double layer_activation_bytes(const WorkloadSpec& spec, AttentionKernel attention, const std::string& recompute) {
  const ModelSpec& m = spec.model;
  const ParallelismSpec& p = spec.parallelism;
  const double s = double(m.seq_len) / p.cp, b = spec.training.micro_batch, h = m.hidden, a = m.heads, t = p.tp;
  const double sbh = s * b * h;
  const double masks = spec.training.dropout > 0.0 ? 2.0 : 0.0;  // 1-byte dropout masks, s b h each
  if (recompute == "full") return 2.0 * sbh / (p.sequence_parallel ? t : 1.0);
  if (recompute == "selective" && spec.training.selective_recompute == "matmul_outputs")
    return matmul_outputs_bytes(spec);
  const double linear = p.sequence_parallel ? (32.0 + masks) / t : 8.0 + masks + 24.0 / t;
  if (recompute == "selective" || attention == AttentionKernel::fused) return sbh * linear;
  const double per_score = spec.training.dropout > 0.0 ? 5.0 : 2.0;
  return sbh * (linear + per_score * a * s / (h * t));
}

double layer_activation_bytes(const WorkloadSpec& spec, AttentionKernel attention) {
  return layer_activation_bytes(spec, attention, spec.training.recompute);
}

double micro_batches_in_flight(const WorkloadSpec& spec, int stage) {
  const ParallelismSpec& p = spec.parallelism;
  const double m = double(spec.micro_batches());
  if (p.pp == 1) return 1.0;
  if (p.pipeline_schedule == "gpipe") return m;
  if (p.pipeline_schedule == "dualpipe")
    return double(
        peak_forwards_in_flight(pipeline_schedule(p.pipeline_schedule, p.pp, stage, int(spec.micro_batches()), 1)));
  if (p.pipeline_schedule == "interleaved") {
    const double v = p.virtual_stages;
    const double chunks = 2.0 * (p.pp - stage - 1) + (v - 1.0) * p.pp + 1.0;
    return std::min(chunks, m * v) / v;
  }
  return std::min(double(p.pp - stage), m);  // 1f1b
}

double stage_parameters(const WorkloadSpec& spec, int stage) {
  return stage_rank_parameters(spec, stage).total();
}

MemoryFootprint memory_at_phase(const WorkloadSpec& spec, const DeviceMemory& device, int stage, MemoryPhase phase) {
  const StageTerms x = stage_terms(spec, stage);
  MemoryFootprint f = lines_at(x, phase);
  f.stage = stage;
  complete(f, device, largest_dynamic(x));
  return f;
}

std::vector<MemoryFootprint> estimate_memory_per_stage(const WorkloadSpec& spec, const DeviceMemory& device) {
  std::vector<MemoryFootprint> stages;
  for (int i = 0; i < spec.parallelism.pp; ++i) {
    const StageTerms x = stage_terms(spec, i);
    const double largest = largest_dynamic(x);
    MemoryFootprint peak;
    for (MemoryPhase phase : phases_of(x)) {
      MemoryFootprint f = lines_at(x, phase);
      f.stage = i;
      complete(f, device, largest);
      if (peak.allocated_bytes == 0.0 || f.allocated_bytes > peak.allocated_bytes) peak = f;
    }
    stages.push_back(peak);
  }
  return stages;
}

MemoryFootprint estimate_memory(const WorkloadSpec& spec, const DeviceMemory& device) {
  const std::vector<MemoryFootprint> stages = estimate_memory_per_stage(spec, device);
  return *std::max_element(stages.begin(), stages.end(), [](const MemoryFootprint& a, const MemoryFootprint& b) {
    return a.peak_bytes < b.peak_bytes;
  });
}

}  // namespace clustersim
