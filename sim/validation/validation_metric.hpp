#pragma once
// What a validation dataset measured, and how a simulated report gives the same figure.
//
// Metrics (registry, by the name a dataset description uses in "measured.metric"):
//   iteration_time_ms  the step time, in milliseconds
//   iteration_time_s   the step time, in seconds
//   tflops_per_gpu     the source's flops per step / (step time x GPUs), in TFLOP/s. The flops are
//                      counted with the SOURCE's formula (a flops formula below), so that a predicted
//                      throughput is comparable with the published one whatever convention it used.
// Flops formulas (registry, "measured.flops"):
//   model_flops              clustersim's model flops (workloads/transformer_math.hpp: forward +
//                            backward, no recompute; for a GPT model 72 B s L h^2 (1 + s/(6h) +
//                            V/(12 L h)), Megatron-Core's num_floating_point_operations)
//   narayanan2021_recompute  96 B s L h^2 (1 + s/(6h) + V/(16 L h)): Narayanan et al. 2021, appendix,
//                            the formula of the 2021 Megatron-LM README table (counts the
//                            full-recompute forward pass)
//
// Peak memory (optional, a description's "peak_memory"): a dataset may also give each row's measured
// peak memory per GPU; it is compared with the report's line that counts the same bytes (registry,
// "peak_memory.counts"):
//   allocated  what the framework's allocator handed out (torch.cuda.max_memory_allocated): the
//              report's memory.allocated_peak_bytes
//   reserved   what the allocator held (torch.cuda.max_memory_reserved): memory.reserved_peak_bytes
//   device     the process's use of the GPU, with the CUDA context (nvidia-smi): memory.peak_bytes_per_gpu
// in a unit of the memory-unit registry ("peak_memory.unit": GiB, GB, MiB, bytes).
#include <span>
#include <string_view>

#include "sim/report/report.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

struct FlopsFormula {
  const char* name;
  const char* summary;
  double (*flops_per_step)(const ModelSpec& model, double sequences);
};

struct ValidationMetric {
  const char* name;
  const char* unit;           // printed after the figures
  const char* summary;        // one line for the command's header
  bool proportional_to_time;  // true: the metric grows with the step time; false: with its inverse (throughput)
  // The metric of a simulated step: `step_time_s` on `gpus` GPUs doing `flops_per_step` (source formula).
  double (*from_step)(double step_time_s, int gpus, double flops_per_step);
};

struct PeakMemoryCount {
  const char* name;
  const char* summary;
  double (*bytes)(const MemoryStats& memory);  // the report line counting the same bytes
};

struct MemoryUnit {
  const char* name;
  double bytes;
};
// The step-time error of a row whose metric error is `error` = (predicted - measured) / measured:
// the same for a time metric; for a throughput metric m ~ 1 / t, t_pred / t_meas = m_meas / m_pred,
// so the step-time error is 1 / (1 + error) - 1.
double step_time_error(const ValidationMetric& metric, double error);

std::span<const FlopsFormula> flops_formulas();
std::span<const ValidationMetric> validation_metrics();
const ValidationMetric* find_validation_metric(std::string_view name);
std::span<const PeakMemoryCount> peak_memory_counts();
std::span<const MemoryUnit> memory_units();

}  // namespace clustersim
