#include "sim/core/random_draw.hpp"

#include <cmath>
#include <numbers>

namespace clustersim {
namespace random_draw {

double uniform01(std::mt19937_64& g) {
  return static_cast<double>(g() >> 11) * 0x1.0p-53;
}

double exponential(std::mt19937_64& g, double rate) {
  return -std::log1p(-uniform01(g)) / rate;
}

double standard_normal(std::mt19937_64& g) {
  const double u1 = 1.0 - uniform01(g);  // (0, 1]
  const double u2 = uniform01(g);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double gamma(std::mt19937_64& g, double shape) {
  if (shape < 1.0) {
    // Gamma(k) = Gamma(k + 1) U^(1/k) (Marsaglia and Tsang 2000, sec. 6).
    const double u = 1.0 - uniform01(g);
    return gamma(g, shape + 1.0) * std::pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0.0;
    double v = 0.0;
    do {
      x = standard_normal(g);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = 1.0 - uniform01(g);
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
  }
}

double lognormal(std::mt19937_64& g, double mean, double cv) {
  // E[exp(mu + sigma Z)] = exp(mu + sigma^2 / 2) = mean; CV^2 = exp(sigma^2) - 1.
  const double sigma2 = std::log1p(cv * cv);
  const double mu = std::log(mean) - 0.5 * sigma2;
  return std::exp(mu + std::sqrt(sigma2) * standard_normal(g));
}

}  // namespace random_draw

}  // namespace clustersim
