// Error statistics of the kernel model against measurements (kernel_accuracy.hpp).
#include "sim/hardware/kernel_accuracy.hpp"

#include <algorithm>
#include <cmath>

#include "sim/hardware/kernel_model.hpp"

namespace clustersim {

namespace {

ErrorStats stats_of(std::string operation, const std::vector<double>& errors) {
  std::vector<double> abs_errors(errors.size());
  std::transform(errors.begin(), errors.end(), abs_errors.begin(), [](double e) { return std::abs(e); });
  return ErrorStats{std::move(operation), errors.size(), quantile(abs_errors, 0.5), quantile(abs_errors, 0.9),
                    quantile(errors, 0.5)};
}

}  // namespace

AccuracySummary kernel_accuracy(const GpuSpec& gpu, std::span<const KernelMeasurement> measurements,
                                ErrorMetric metric) {
  std::vector<std::string> order;
  std::vector<std::vector<double>> errors;
  std::vector<double> all;
  for (const auto& m : measurements) {
    const double t = kernel_time(gpu, m.op(), m.timing).time_s;
    const double e = metric == ErrorMetric::time ? t / m.time_s - 1.0 : m.time_s / t - 1.0;
    auto it = std::find(order.begin(), order.end(), m.operation);
    if (it == order.end()) {
      order.push_back(m.operation);
      errors.emplace_back();
      it = order.end() - 1;
    }
    errors[static_cast<std::size_t>(it - order.begin())].push_back(e);
    all.push_back(e);
  }
  AccuracySummary s;
  for (std::size_t i = 0; i < order.size(); ++i)
    s.operations.push_back(stats_of(order[i], errors[i]));
  s.all = stats_of("all", all);
  return s;
}

}  // namespace clustersim
