#pragma once
// The metrics a serving validation row compares and a serving residual row names (docs/serving.md,
// "Validation"): output_tokens_per_s; the means ttft_s and itl_s (each request's mean gap between
// tokens, averaged); the nearest-rank percentiles ttft_p50_s, ttft_p90_s, ttft_p99_s, tpot_p50_s,
// tpot_p90_s, tpot_p99_s (over requests of each one's mean gap: vLLM's TPOT), itl_p50_s, itl_p99_s
// (over every gap between tokens: vLLM's ITL), e2e_p50_s, e2e_p90_s, e2e_p99_s. The one list: the
// residual reader (error_bars) takes these names, the serving validation (sim/api/serving_validation)
// computes each from a run's summary.
#include <string>
#include <vector>

namespace clustersim {

const std::vector<std::string>& serving_metric_names();

}  // namespace clustersim
