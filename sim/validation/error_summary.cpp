#include "sim/validation/error_summary.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/core/quantile.hpp"

namespace clustersim {

ErrorSummary summarize_errors(std::span<const double> errors) {
  ErrorSummary s;
  s.count = errors.size();
  if (errors.empty()) return s;
  std::vector<double> magnitudes;
  double sum_abs = 0.0, sum = 0.0;
  for (double e : errors) {
    magnitudes.push_back(std::fabs(e));
    sum_abs += std::fabs(e);
    sum += e;
  }
  const auto n = static_cast<double>(errors.size());
  s.mape = sum_abs / n;
  s.bias = sum / n;
  s.median_abs = quantile(magnitudes, 0.5);
  s.p90_abs = quantile(magnitudes, 0.9);
  s.max_abs = *std::max_element(magnitudes.begin(), magnitudes.end());
  return s;
}

}  // namespace clustersim
