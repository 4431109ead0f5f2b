// Per-GPU memory footprint of a training configuration, in bytes.
//
// Model state. P = total_parameters (transformer_math.hpp). A GPU holds P_gpu = P / (tp * pp): an
// approximation that spreads the embedding and output layer evenly over the pipeline stages (in
// Megatron-LM they live on the first and last stages; exact per-stage counts come with the
// pipeline-parallel milestone). Per parameter (training_state.hpp): mixed precision keeps 2-byte
// weights, 4-byte fp32 main grads and 12 bytes of Adam state (fp32 master weights, two moments; SGD:
// master + momentum = 8); fp32 training 4 / 4 / 8 (SGD 4). ZeRO divides by dp: stage 1 the optimizer
// state, stage 2 also the gradients, stage 3 also the weights (Rajbhandari et al. 2020).
//
// Activations stored for the backward pass, per layer and micro-batch, 16-bit activations
// (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models", Table 2;
// s sequence per GPU (seq_len / cp), b micro-batch, h hidden, a heads, t tp):
//   recompute none       t = 1:               s b h (34 + 5 a s / h)
//                        TP, no seq. parallel: s b h (10 + 24/t + 5 a s / (h t))
//                        TP + sequence parallel: s b h (34/t + 5 a s / (h t))
//   recompute selective  s b h (10 + 24/t), with sequence parallelism s b h 34 / t
//   recompute full       2 s b h (the layer's input), / t with sequence parallelism
// (The table's "5 a s / h" term is the attention's softmax and dropout tensors; it assumes
// multi-head attention with a * head_dim = h.) Layers per GPU L / pp, times the micro-batches in
// flight on the first stage: 1 without a pipeline; 1F1B pp (of L / pp layers each, so L layers in
// all); interleaved 1F1B pp * (1 + (pp - 1) / (pp * v)) (Korthikanti et al. section 4.2.3); GPipe
// all micro-batches of the step. Plus the fp32 logits of the loss: 4 s b V / t bytes.
//
// Communication buffers: 2 gradient buckets in flight (bucket of effective_bucket_size_params
// parameters, at most P_gpu, times the gradient bytes), when dp > 1.
// Framework overhead: 1 GiB assumed for the CUDA context, cuBLAS/NCCL workspaces and allocator
// fragmentation (PyTorch's context alone is 0.3-0.5 GiB on Hopper); to be fitted by calibration.
//
// peak = weights + gradients + optimizer + activations + buffers + overhead; fits = peak <= capacity.
#include "sim/hardware/memory_model.hpp"

#include <algorithm>

#include "sim/core/units.hpp"
#include "workloads/training_state.hpp"
#include "workloads/transformer_math.hpp"

namespace clustersim {
namespace {

constexpr double kFrameworkOverheadBytes = 1.0 * units::kGiB;
constexpr double kLogitsBytesPerElement = 4.0;  // fp32 logits for the loss

// Stored activation bytes of one layer for one micro-batch (Korthikanti et al. 2022, Table 2).
double layer_activation_bytes(const WorkloadSpec& spec) {
  const ModelSpec& m = spec.model;
  const ParallelismSpec& p = spec.parallelism;
  const double s = double(m.seq_len) / p.cp, b = spec.training.micro_batch, h = m.hidden, a = m.heads, t = p.tp;
  const double sbh = s * b * h;
  const double attention_scores = 5.0 * a * s / (h * t);
  const std::string& recompute = spec.training.recompute;
  if (recompute == "full") return 2.0 * sbh / (p.sequence_parallel ? t : 1.0);
  const double linear = p.sequence_parallel ? 34.0 / t : 10.0 + 24.0 / t;
  if (recompute == "selective") return sbh * linear;
  return sbh * (linear + attention_scores);
}

double micro_batches_in_flight(const WorkloadSpec& spec) {
  const ParallelismSpec& p = spec.parallelism;
  if (p.pp == 1) return 1.0;
  if (p.pipeline_schedule == "gpipe") return double(spec.micro_batches());
  if (p.pipeline_schedule == "interleaved") return p.pp * (1.0 + double(p.pp - 1) / (double(p.pp) * p.virtual_stages));
  return p.pp;  // 1f1b
}

}  // namespace

MemoryFootprint estimate_memory(const WorkloadSpec& spec, const GpuSpec& gpu) {
  const ModelSpec& m = spec.model;
  const ParallelismSpec& p = spec.parallelism;
  const double dp = std::max(p.dp, 1);
  const double params = total_parameters(m) / (double(p.tp) * p.pp);
  const ParameterStateBytes per_param = parameter_state_bytes(spec.training);

  MemoryFootprint f;
  f.weights_bytes = params * per_param.weights / (p.zero_stage >= 3 ? dp : 1.0);
  f.gradients_bytes = params * per_param.gradients / (p.zero_stage >= 2 ? dp : 1.0);
  f.optimizer_bytes = params * per_param.optimizer / (p.zero_stage >= 1 ? dp : 1.0);

  const double layers = double(m.layers) / p.pp;
  const double logits =
      kLogitsBytesPerElement * (double(m.seq_len) / p.cp) * spec.training.micro_batch * m.vocab / p.tp;
  f.activations_bytes = layer_activation_bytes(spec) * layers * micro_batches_in_flight(spec) + logits;

  if (p.dp > 1) {
    const double bucket = std::min(double(p.effective_bucket_size_params()), params);
    f.communication_buffers_bytes = 2.0 * bucket * per_param.gradients;
  }
  f.framework_overhead_bytes = kFrameworkOverheadBytes;
  f.peak_bytes = f.weights_bytes + f.gradients_bytes + f.optimizer_bytes + f.activations_bytes +
                 f.communication_buffers_bytes + f.framework_overhead_bytes;
  f.capacity_bytes = gpu.hbm_capacity_bytes;
  f.fits = f.peak_bytes <= f.capacity_bytes;
  return f;
}

}  // namespace clustersim
