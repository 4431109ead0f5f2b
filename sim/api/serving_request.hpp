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

}  // namespace clustersim
