#pragma once
// One serving deployment on several cluster designs (`clustersim compare --serving S --cluster A
// --cluster B ...`): per design the run of the spec's traffic (latency percentiles, throughput, SLO
// attainment, power, $ per million tokens) and the highest rate meeting the SLO with its cost per
// million output tokens; the designs no other beats on both that cost and the TTFT p90 (docs/serving.md
// "Comparing designs").
#include <optional>
#include <string>
#include <vector>

#include "sim/api/serving_request.hpp"

namespace clustersim {

struct ServingDesignRow {
  std::string design;                   // the cluster's name, or the source given; repeated ones numbered ("x #2")
  std::string error;                    // this design cannot run the deployment (e.g. the replica does not fit): why
  std::optional<ServingReport> report;  // the spec's traffic on this design
  // The capacity search (none for a request trace, whose rate is its own).
  std::optional<double> max_rate_rps;
  bool upper_bound_reached = false;  // max_rate_rps is a lower bound
  std::string capacity_error;        // the search found no rate meeting the SLO: why
  double usd_per_million_output_tokens_at_max = 0.0;
  bool pareto = false;  // no other design is at least as cheap per output token at its maximum rate and as
                        // fast (TTFT p90 of the spec's traffic), and better in one
};

struct ServingComparison {
  std::string serving;  // the spec's name
  std::vector<ServingDesignRow> rows;
};

// Every spec is loaded and checked before any run (bad input: SpecError). A design on which the
// deployment cannot run (a SpecError of the replica on its GPU, too few GPUs) is a row with its error.
ServingComparison compare_serving(const std::vector<std::string>& clusters, const std::string& serving,
                                  const std::vector<std::string>& settings);

// {"serving", "designs": [{"design", "error"} | {"design", "gpu", "gpus", "pareto", "ttft_p90_s",
// "tbt_p99_s", "e2e_p90_s", "throughput_rps", "output_tokens_per_s", "slo_attainment", "gpu_power_w",
// "energy_per_output_token_j", "usd_per_hour", "usd_per_million_output_tokens", "max_rate_rps",
// "upper_bound_reached", "usd_per_million_output_tokens_at_max", "capacity_error", "report"}]}
std::string serving_comparison_json(const ServingComparison& c, int indent);
std::string serving_comparison_text(const ServingComparison& c);

}  // namespace clustersim
