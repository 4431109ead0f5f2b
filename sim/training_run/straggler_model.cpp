#include "sim/training_run/straggler_model.hpp"

#include <cmath>
#include <numbers>

namespace clustersim {

LognormalSlowdown lognormal_slowdown(double cv) {
  const double s2 = std::log1p(cv * cv);
  return {-s2 / 2.0, std::sqrt(s2)};
}

double expected_max_slowdown(double cv, double n) {
  if (cv <= 0.0 || n <= 1.0) return 1.0;
  const LognormalSlowdown d = lognormal_slowdown(cv);
  // Simpson's rule over z in [-12, 12]: the density n Phi^(n-1) phi is negligible outside for n <= 2^24.
  constexpr int kSteps = 24000;  // even
  constexpr double kLo = -12.0, kHi = 12.0;
  const double h = (kHi - kLo) / kSteps;
  double sum = 0.0;
  for (int i = 0; i <= kSteps; ++i) {
    const double z = kLo + i * h;
    const double log_cdf = std::log(0.5 * std::erfc(-z / std::numbers::sqrt2));
    const double log_pdf = -0.5 * z * z - 0.5 * std::log(2.0 * std::numbers::pi);
    const double f = std::exp(d.mu + d.sigma * z + std::log(n) + (n - 1.0) * log_cdf + log_pdf);
    sum += f * (i == 0 || i == kSteps ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0));
  }
  return sum * h / 3.0;
}

}  // namespace clustersim
