#include "sim/validation/validation_metric.hpp"

#include <algorithm>

#include "sim/core/named_table.hpp"
#include "workloads/transformer_math.hpp"

namespace clustersim {
namespace {

double narayanan2021_recompute(const ModelSpec& m, double sequences) {
  const double s = m.seq_len, h = m.hidden, L = m.layers, V = m.vocab;
  return 96.0 * sequences * s * L * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * L * h));
}

constexpr FlopsFormula kFlopsFormulas[] = {
    {"model_flops", "clustersim's model flops: forward + backward, no recompute (Megatron-Core's count)",
     &training_flops_per_step},
    {"narayanan2021_recompute",
     "96 B s L h^2 (1 + s/(6h) + V/(16 L h)) (Narayanan et al. 2021: counts the full-recompute forward)",
     &narayanan2021_recompute},
};

constexpr ValidationMetric kMetrics[] = {
    {"iteration_time_ms", "ms", "iteration time in ms", true,
     [](double step_time_s, int, double) { return step_time_s * 1e3; }},
    {"iteration_time_s", "s", "iteration time in s", true, [](double step_time_s, int, double) { return step_time_s; }},
    {"tflops_per_gpu", "TFLOP/s", "TFLOP/s per GPU (the source's flops per step / step time / GPUs)", false,
     [](double step_time_s, int gpus, double flops) {
       return step_time_s > 0 && gpus > 0 ? flops / step_time_s / gpus / 1e12 : 0.0;
     }},
};

constexpr PeakMemoryCount kPeakMemoryCounts[] = {
    {"allocated", "allocated by the framework (torch.cuda.max_memory_allocated; no CUDA context, no allocator reserve)",
     [](const MemoryStats& m) { return m.allocated_peak_bytes; }},
    {"reserved", "reserved by the caching allocator (torch.cuda.max_memory_reserved; no CUDA context)",
     [](const MemoryStats& m) { return m.reserved_peak_bytes; }},
    {"device", "used on the GPU by the process, CUDA context included (nvidia-smi)",
     [](const MemoryStats& m) { return m.peak_bytes_per_gpu; }},
};

constexpr MemoryUnit kMemoryUnits[] = {
    {"GiB", 1073741824.0},
    {"GB", 1e9},
    {"MiB", 1048576.0},
    {"bytes", 1.0},
};

}  // namespace

double step_time_error(const ValidationMetric& metric, double error) {
  return metric.proportional_to_time ? error : 1.0 / (1.0 + error) - 1.0;
}

std::span<const FlopsFormula> flops_formulas() {
  return kFlopsFormulas;
}

std::span<const ValidationMetric> validation_metrics() {
  return kMetrics;
}

const ValidationMetric* find_validation_metric(std::string_view name) {
  return find_by_name(validation_metrics(), name);
}

std::span<const PeakMemoryCount> peak_memory_counts() {
  return kPeakMemoryCounts;
}

std::span<const MemoryUnit> memory_units() {
  return kMemoryUnits;
}

}  // namespace clustersim
