#include "sim/training_run/young_daly.hpp"

#include <cmath>

namespace clustersim {

double young_interval_s(double checkpoint_s, double mtbf_s) {
  return std::sqrt(2.0 * checkpoint_s * mtbf_s);
}

double daly_interval_s(double checkpoint_s, double mtbf_s) {
  const double c = checkpoint_s, m = mtbf_s;
  if (c >= 2.0 * m) return m;
  return std::sqrt(2.0 * c * m) * (1.0 + std::sqrt(c / (2.0 * m)) / 3.0 + c / (18.0 * m)) - c;
}

}  // namespace clustersim
