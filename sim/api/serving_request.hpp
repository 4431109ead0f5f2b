#pragma once
// `clustersim serve`'s options as the front ends take them (the CLI's flags, Python's keywords), with
// their defaults and checks written once: both front ends fill a ServingRequest and call serve().
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/serving/serving_report.hpp"
#include "sim/serving/serving_spec.hpp"
#include "topologies/cluster_spec.hpp"

namespace clustersim {

struct ServingRequest {
  std::string cluster;                            // a cluster spec file or preset name
  std::string serving;                            // a serving spec file or preset name
  std::vector<std::string> settings;              // --set K=V (see split_serving_overrides)
  std::optional<std::string> timeline_path;       // write the requests as a Perfetto trace there
  std::optional<std::int64_t> timeline_requests;  // requests in the timeline, >= 1; none: 10,000
  std::optional<double> sample_interval_s;        // the report's samples, > 0; none: 1 s
  std::int64_t iteration_records = 0;             // keep the first N iterations (Python's table), >= 0
};

struct SplitServingOverrides {
  Overrides cluster;
  ServingOverrides serving;
};

// "cluster.K=V" and "serving.K=V" go where their prefix says; without one, the cluster's sections
// (gpu, nodes, node, fabric, power, cost) go to the cluster and the serving spec's (model, replica,
// scheduler, slo, traffic) to the serving spec. Throws SpecError("--set ...") otherwise.
SplitServingOverrides split_serving_overrides(const std::vector<std::string>& settings);

// Loads both specs, builds the iteration model on the cluster's GPU, serves the traffic, prices it and
// writes the timeline when asked. Throws SpecError for bad input (file + JSON path, or the option),
// e.g. a deployment needing more GPUs than the cluster has, or a replica that does not fit.
ServingReport serve(const ServingRequest& request);

// The SLO of find_max_rate: some request finished, TTFT p90 <= slo.ttft_s and the p99 of the gaps
// between tokens <= slo.tbt_s.
bool meets_percentile_slo(const ServingSummary& summary, const SloSpec& slo);

// The capacity search (`clustersim serve --find-max-rate`): the highest arrival rate of the spec's
// generated traffic (same seed, same duration or request count) at which the TTFT p90 is at most
// slo.ttft_s and the p99 of the gaps between tokens at most slo.tbt_s. From the spec's rate it doubles
// until a rate fails (or halves until one meets), then bisects to a relative `precision`. The SLO need
// not be monotone in the rate: the result is a rate that meets it next to one that does not.
struct RateProbe {
  double rate_rps = 0.0;
  double ttft_p90_s = 0.0;
  double tbt_p99_s = 0.0;
  double slo_attainment = 0.0;
  bool meets = false;
};

struct MaxRateSearch {
  double max_rate_rps = 0.0;
  std::vector<RateProbe> probes;     // in the order they ran
  ServingReport at_max;              // the run at max_rate_rps (its timeline is the one written)
  bool upper_bound_reached = false;  // still met at 2^22 arrivals (or 40 doublings): a lower bound
};

MaxRateSearch find_max_rate(const ServingRequest& request, double precision = 0.01);
// What find_max_rate and a layout search's target rate need of the traffic, whose arrival rate they
// set: generated traffic (not a request trace) of an open loop (a closed loop's rate is the
// deployment's own). `option_sets` begins the error ("--find-max-rate varies"). Throws SpecError.
void check_arrival_rate_settable(const ServingSpec& spec, const std::string& option_sets);
// Keys: max_rate_rps, upper_bound_reached, probes (rate_rps, ttft_p90_s, tbt_p99_s, slo_attainment,
// meets), report (serving_report_json of the run at the maximum). indent < 0: one line.
std::string max_rate_search_json(const MaxRateSearch& search, int indent);
std::string max_rate_search_text(const MaxRateSearch& search);

}  // namespace clustersim
