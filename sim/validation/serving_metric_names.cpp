#include "sim/validation/serving_metric_names.hpp"

namespace clustersim {

const std::vector<std::string>& serving_metric_names() {
  static const std::vector<std::string> names{
      "output_tokens_per_s", "ttft_s",     "itl_s",     "ttft_p50_s", "ttft_p90_s", "ttft_p99_s", "tpot_p50_s",
      "tpot_p90_s",          "tpot_p99_s", "itl_p50_s", "itl_p99_s",  "e2e_p50_s",  "e2e_p90_s",  "e2e_p99_s"};
  return names;
}

}  // namespace clustersim
