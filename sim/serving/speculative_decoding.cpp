// Speculative decoding's expected tokens per verify step (speculative_decoding.hpp).
#include "sim/serving/speculative_decoding.hpp"

#include <cmath>

namespace clustersim {

double expected_tokens_per_step(double alpha, int k) {
  if (alpha >= 1.0) return static_cast<double>(k) + 1.0;
  return (1.0 - std::pow(alpha, k + 1)) / (1.0 - alpha);
}

}  // namespace clustersim
