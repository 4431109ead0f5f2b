// Per-GPU memory footprint of a training configuration, in bytes, per pipeline stage.
//
// Model state (Megatron-LM's layout). One GPU of pipeline stage i holds L / pp transformer layers; the
// first stage also the word embedding (split over tp, vocabulary-parallel) and the learned position
// embedding (replicated); the last stage the final norm and the output projection (split over tp; with
// tied embeddings and pp > 1 it keeps a copy of the word embedding, whose gradient it all-reduces with
// the first stage). Inside a layer, tensor parallelism splits every matrix and the biases of the
// column-parallel ones (QKV, MLP up); the norms and the biases of the row-parallel ones (attention
// output, MLP down) are replicated on every tp rank.
// Per parameter (training_state.hpp): mixed precision keeps 2-byte weights, 4-byte fp32 main grads and
// 12 bytes of Adam state (fp32 master weights, two moments; SGD: master + momentum = 8); fp32 training
// 4 / 4 / 8 (SGD 4). fp8 adds to the weights the quantized copies of the linear layers' weights
// (fp8_weight_copy_bytes per parameter of QKV, attention output, MLP up and down; not sharded by ZeRO). ZeRO divides by
// dp: stage 1 the optimizer state, stage 2 also the gradients, stage 3 also the weights (Rajbhandari et al. 2020).
//
// Activations stored for the backward pass, per layer and micro-batch, 16-bit activations (Korthikanti
// et al. 2022, "Reducing Activation Recomputation in Large Transformer Models", Table 2; s sequence per
// GPU (seq_len / cp), b micro-batch, h hidden, a heads, t tp):
//   recompute none       t = 1:                  s b h (34 + 5 a s / h)
//                        TP, no seq. parallel:   s b h (10 + 24/t + 5 a s / (h t))
//                        TP + sequence parallel: s b h (34/t + 5 a s / (h t))
//   recompute selective  s b h (10 + 24/t), with sequence parallelism s b h 34 / t
//   recompute full       2 s b h (the layer's input), / t with sequence parallelism
// The "5 a s / h" term is unfused attention's a x s x s softmax input, softmax output and dropout
// mask (2 + 2 + 1 bytes per score). A fused kernel (FlashAttention) keeps none of them: it stores only
// its output (already among the 34) and a log-sum-exp of 4 a s b / t bytes, which we neglect (under
// 0.1 % of the layer's 34 s b h / t for h >= 1024). The generator runs fused attention, so the
// footprint uses the fused variant: recompute none and selective both store s b h (10 + 24/t), or
// s b h 34 / t with sequence parallelism. (The table assumes multi-head attention with a * head_dim = h
// and a 4h GELU MLP.)
//
// Micro-batches in flight on stage i (0-based) of pp, m micro-batches per step, v virtual stages:
//   no pipeline 1; GPipe m; 1F1B min(pp - i, m) (the warm-up of stage i runs pp - i - 1 forwards
//   ahead); interleaved 1F1B min(2 (pp - i - 1) + (v - 1) pp + 1, m v) model chunks of L / (pp v)
//   layers, i.e. that many / v micro-batches of the stage's L / pp layers (Megatron-LM's warm-up; on
//   the first stage pp (1 + (pp - 1) / (pp v)), Korthikanti et al. section 4.2.3).
// The last stage also keeps the fp32 logits of the loss for one micro-batch: 4 s b V / t bytes.
//
// Communication buffers: 2 gradient buckets in flight (bucket of effective_bucket_size_params
// parameters, at most the stage's, times the gradient bytes) when dp > 1; with pp > 1 a send and a
// receive buffer of one micro-batch's activations, 2 s b h e bytes (/ t with sequence parallelism).
// Framework overhead: 1 GiB assumed for the CUDA context, cuBLAS/NCCL workspaces and allocator
// fragmentation (PyTorch's context alone is 0.3-0.5 GiB on Hopper).
//
// peak = weights + gradients + optimizer + activations + buffers + overhead; fits = peak <= capacity.
#include "sim/hardware/memory_model.hpp"

#include <algorithm>

#include "sim/core/units.hpp"
#include "workloads/fp8_recipe.hpp"
#include "workloads/parameter_sharding.hpp"
#include "workloads/training_state.hpp"
#include "workloads/transformer_math.hpp"

namespace clustersim {
namespace {

constexpr double kFrameworkOverheadBytes = 1.0 * units::kGiB;
constexpr double kLogitsBytesPerElement = 4.0;  // fp32 logits for the loss

}  // namespace

double layer_activation_bytes(const WorkloadSpec& spec, AttentionKernel attention) {
  const ModelSpec& m = spec.model;
  const ParallelismSpec& p = spec.parallelism;
  const double s = double(m.seq_len) / p.cp, b = spec.training.micro_batch, h = m.hidden, a = m.heads, t = p.tp;
  const double sbh = s * b * h;
  const std::string& recompute = spec.training.recompute;
  if (recompute == "full") return 2.0 * sbh / (p.sequence_parallel ? t : 1.0);
  const double linear = p.sequence_parallel ? 34.0 / t : 10.0 + 24.0 / t;
  if (recompute == "selective" || attention == AttentionKernel::fused) return sbh * linear;
  return sbh * (linear + 5.0 * a * s / (h * t));
}

double micro_batches_in_flight(const WorkloadSpec& spec, int stage) {
  const ParallelismSpec& p = spec.parallelism;
  const double m = double(spec.micro_batches());
  if (p.pp == 1) return 1.0;
  if (p.pipeline_schedule == "gpipe") return m;
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

std::vector<MemoryFootprint> estimate_memory_per_stage(const WorkloadSpec& spec, const GpuSpec& gpu) {
  const ModelSpec& m = spec.model;
  const ParallelismSpec& p = spec.parallelism;
  const double dp = std::max(p.dp, 1);
  const ParameterStateBytes per_param = parameter_state_bytes(spec.training);
  const double s = double(m.seq_len) / p.cp, b = spec.training.micro_batch;
  const double per_layer_bytes = layer_activation_bytes(
      spec, spec.training.attention == "unfused" ? AttentionKernel::unfused : AttentionKernel::fused);
  const double logits = kLogitsBytesPerElement * s * b * m.vocab / p.tp;
  const LayerParameterGroups layer = rank_layer_parameter_groups(m, p);
  const double linear_parameters = layer.qkv + layer.attention_out + layer.mlp_up + layer.mlp_down;

  std::vector<MemoryFootprint> stages;
  for (int i = 0; i < p.pp; ++i) {
    MemoryFootprint f;
    f.stage = i;
    f.parameters = stage_parameters(spec, i);
    f.weights_bytes = f.parameters * per_param.weights / (p.zero_stage >= 3 ? dp : 1.0) +
                      linear_parameters * stage_layers(m, p, i) * fp8_weight_copy_bytes(spec.training);
    f.gradients_bytes = f.parameters * per_param.gradients / (p.zero_stage >= 2 ? dp : 1.0);
    f.optimizer_bytes = f.parameters * per_param.optimizer / (p.zero_stage >= 1 ? dp : 1.0);
    f.micro_batches_in_flight = micro_batches_in_flight(spec, i);
    f.activations_bytes =
        per_layer_bytes * stage_layers(m, p, i) * f.micro_batches_in_flight + (i == p.pp - 1 ? logits : 0.0);
    if (p.dp > 1) {
      const double bucket = std::min(double(p.effective_bucket_size_params()), f.parameters);
      f.communication_buffers_bytes += 2.0 * bucket * per_param.gradients;
    }
    if (p.pp > 1) {
      const double activation = s * b * m.hidden * bytes_per_element(activation_precision(spec.training));
      f.communication_buffers_bytes += 2.0 * activation / (p.sequence_parallel ? p.tp : 1);
    }
    f.framework_overhead_bytes = kFrameworkOverheadBytes;
    f.peak_bytes = f.weights_bytes + f.gradients_bytes + f.optimizer_bytes + f.activations_bytes +
                   f.communication_buffers_bytes + f.framework_overhead_bytes;
    f.capacity_bytes = gpu.hbm_capacity_bytes;
    f.fits = f.peak_bytes <= f.capacity_bytes;
    stages.push_back(f);
  }
  return stages;
}

MemoryFootprint estimate_memory(const WorkloadSpec& spec, const GpuSpec& gpu) {
  const std::vector<MemoryFootprint> stages = estimate_memory_per_stage(spec, gpu);
  return *std::max_element(stages.begin(), stages.end(), [](const MemoryFootprint& a, const MemoryFootprint& b) {
    return a.peak_bytes < b.peak_bytes;
  });
}

}  // namespace clustersim
