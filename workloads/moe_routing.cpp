// The busiest expert-parallel rank's routed tokens (moe_routing.hpp).
//
// Mean: every rank routes T tokens to top_k experts, and the ep ranks of a group hold the experts in
// equal shares, so a rank receives T k copies on average.
// load_distribution "factor": the busiest takes load_imbalance x T k (a measured or assumed skew).
// load_distribution "multinomial": each of the group's ep T k copies picks its expert uniformly, so a
// rank's load is Binomial(ep T k, 1/ep): mean T k, variance T k (1 - 1/ep). For the large counts of a
// training step (T k in the thousands) it is normal, and the busiest of the ep ranks takes
//   T k + z_ep sqrt(T k (1 - 1/ep)),   z_ep = E[max of ep standard normals]
// (the ranks' loads are taken as independent: their sum is fixed, which lowers the maximum by a term
// of order 1/ep; top_k distinct experts per token and node-limited routing are not modelled), times
// load_imbalance for any skew of the router on top of chance. DeepSeek-V3 (T 4096, k 8, ep 64):
// z_64 = 2.344, the busiest rank 1.3 % over the mean: chance alone balances a step's tokens well;
// the imbalance of real routers is the factor's (e.g. Mixtral's per-layer expert shares, Jiang et al.
// 2024 sec. 5).
// z_n = integral of x n phi(x) Phi(x)^(n-1) dx (the density of the maximum), by Simpson's rule on
// [-12, 12] in 4800 steps (error below 1e-9 against the closed forms z_2 = 1/sqrt(pi), z_3 =
// 3 / (2 sqrt(pi))).
// Token dropping (Megatron-Core's --moe-expert-capacity-factor, drop policy "probs"): a rank keeps at
// most capacity_factor x T k copies, so the busiest is capped there.
#include "workloads/moe_routing.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace clustersim {

double expected_max_of_standard_normals(int n) {
  if (n <= 1) return 0.0;
  constexpr int kSteps = 4800;
  constexpr double kLimit = 12.0;
  const double step = 2.0 * kLimit / kSteps;
  double sum = 0.0;
  for (int i = 0; i <= kSteps; ++i) {
    const double x = -kLimit + i * step;
    const double density = std::exp(-0.5 * x * x) / std::sqrt(2.0 * std::numbers::pi);
    const double below = 0.5 * std::erfc(-x / std::numbers::sqrt2);
    const double f = x * n * density * std::pow(below, n - 1);
    const double weight = i == 0 || i == kSteps ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0);
    sum += weight * f;
  }
  return sum * step / 3.0;
}

double busiest_rank_routed_tokens(const MoeSpec& moe, int ep, double tokens) {
  const double mean = tokens * moe.top_k;
  double busiest = mean * moe.load_imbalance;
  if (moe.load_distribution == "multinomial" && ep > 1 && mean > 0.0)
    busiest = (mean + expected_max_of_standard_normals(ep) * std::sqrt(mean * (1.0 - 1.0 / ep))) * moe.load_imbalance;
  if (moe.token_dropping) busiest = std::min(busiest, moe.capacity_factor * mean);
  return busiest;
}

}  // namespace clustersim
