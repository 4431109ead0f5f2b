#pragma once
// A serving run's report (stable JSON keys, docs/serving.md "Report"), its text summary, and its
// timeline: the requests as Chrome / Perfetto trace slices (ui.perfetto.dev).
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "sim/report/report.hpp"
#include "sim/serving/iteration_model.hpp"
#include "sim/serving/serving_cost.hpp"
#include "sim/serving/serving_engine.hpp"
#include "sim/serving/serving_spec.hpp"

namespace clustersim {

// The interval the measured value of a metric is expected in, from the serving validation residuals
// nearest the deployment (sim/validation/error_bars.hpp: the rule of training's step_time_interval_s;
// the application layer fills it): metric_interval's StepTimeInterval, in the metric's unit, with its
// basis (the neighbours' rows per dataset, their distance, their errors' quantiles, the rule).
struct ServingInterval : StepTimeInterval {
  std::string metric;      // output_tokens_per_s, ttft_s (mean TTFT), itl_s (mean gap between tokens)
  double predicted = 0.0;  // the run's value
};

struct ServingReport {
  std::string serving;  // the spec's name
  std::string cluster;  // the cluster spec's name
  std::string gpu;      // the GPU id
  std::string scheduler;
  std::string router;
  int replicas = 0;
  int tp = 1;
  int pp = 1;
  ReplicaMemory memory;      // per GPU of a replica (disaggregated: of the decode pool)
  int prefill_replicas = 0;  // disaggregated serving: the prefill pool (0: colocated)
  int prefill_tp = 1;
  int prefill_pp = 1;
  ReplicaMemory prefill_memory;  // per GPU of a prefill replica
  bool prefix_caching = false;   // scheduler.prefix_caching: the report has `prefix_cache`
  bool swap = false;             // scheduler.preemption = swap: the report has `swap`
  int speculative_tokens = 0;    // speculative decoding's k: the report has `speculative` when > 0
  ServingResult result;
  ServingCost cost;
  std::vector<ServingInterval> intervals;  // per metric with residuals (none without shipped residuals)
};

// Keys: run, memory, requests, latency, throughput, intervals ({metric: {predicted, interval [lo, hi],
// basis {rows, datasets, mean_distance, widening, error_p5, error_p50, error_p95, rule}}}), utilization,
// power, cost, samples (columns:
// time_s, running, queued, kv_blocks_used, preemptions so far), and for disaggregated serving
// `disaggregation` (the prefill pool, its memory, the KV transfers), with prefix caching `prefix_cache`,
// with preemption by swap `swap`, with speculative decoding `speculative`.
// indent < 0: one line. Deterministic.
std::string serving_report_json(const ServingReport& report, int indent);
std::string serving_report_text(const ServingReport& report);

// The first `max_requests` accepted requests, a process per replica and a thread per lane (a request
// takes the lowest lane free at its arrival): a slice "request N" from arrival to finish, inside it a
// slice "to first token" from arrival to the first token. Timestamps in microseconds.
std::string serving_timeline_json(const ServingResult& result, std::size_t max_requests);

}  // namespace clustersim
