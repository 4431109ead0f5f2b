#pragma once
// The summary statistics of a validation: relative errors e = (predicted - measured) / measured of the
// rows that were simulated, summarized as
//   MAPE    mean |e|
//   median  median |e|
//   p90     90th percentile of |e| (linear interpolation between order statistics: numpy's default)
//   max     max |e|
//   bias    mean e (signed: > 0 the simulator over-predicts the metric)
#include <cstddef>
#include <span>

namespace clustersim {

struct ErrorSummary {
  std::size_t count = 0;  // errors summarized; the statistics are 0 when there are none
  double mape = 0.0;
  double median_abs = 0.0;
  double p90_abs = 0.0;
  double max_abs = 0.0;
  double bias = 0.0;
};

ErrorSummary summarize_errors(std::span<const double> errors);

}  // namespace clustersim
