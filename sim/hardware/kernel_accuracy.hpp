#pragma once
// The kernel model's error on measurements: per operation (as the source names it), the median and
// 90th percentile of |error|, where error is the relative error of the predicted time (or of the
// predicted throughput, flops / time, for comparisons with published TFLOP/s tables).
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "sim/core/quantile.hpp"
#include "sim/hardware/gpu_spec.hpp"
#include "sim/hardware/kernel_measurement.hpp"

namespace clustersim {

enum class ErrorMetric { time, throughput };

struct ErrorStats {
  std::string operation;  // "mlp_up_proj", "gemm"; "all" for the pooled row
  std::size_t count = 0;
  double median_abs_error = 0.0;
  double p90_abs_error = 0.0;
  double median_error = 0.0;  // signed: > 0 the model predicts too long (time) or too fast (throughput)
};

struct AccuracySummary {
  std::vector<ErrorStats> operations;  // in order of first appearance
  ErrorStats all;
};

// time error = t_model / t_measured - 1; throughput error = t_measured / t_model - 1.
AccuracySummary kernel_accuracy(const GpuSpec& gpu, std::span<const KernelMeasurement> measurements,
                                ErrorMetric metric = ErrorMetric::time);

}  // namespace clustersim
