#pragma once
// The q-quantile of a sample: linear interpolation between its order statistics at position q (n - 1)
// of the sorted values (numpy's default "linear" method; Hyndman and Fan's type 7). One rule for the
// kernel model's error statistics and fit (sim/hardware), the validation errors and error bars
// (sim/validation) and the training run's days p10/p50/p90 (sim/training_run). Not the serving
// metrics' percentiles: those are the nearest rank (docs/serving.md, nearest_rank_percentile).
#include <vector>

namespace clustersim {

// q is clamped to [0, 1]; 0 for an empty sample. `values` is taken by value and sorted.
double quantile(std::vector<double> values, double q);

}  // namespace clustersim
