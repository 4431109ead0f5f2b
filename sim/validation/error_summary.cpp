#include "sim/validation/error_summary.hpp"

#include <algorithm>
#include <cmath>

namespace clustersim {

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const double position = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return values[below] + fraction * (values[above] - values[below]);
}

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
  s.median_abs = percentile(magnitudes, 0.5);
  s.p90_abs = percentile(magnitudes, 0.9);
  s.max_abs = *std::max_element(magnitudes.begin(), magnitudes.end());
  return s;
}

}  // namespace clustersim
