#pragma once
// A serving run's report (stable JSON keys, docs/serving.md "Report"), its text summary, and its
// timeline: the requests as Chrome / Perfetto trace slices (ui.perfetto.dev).
#include <cstddef>
#include <string>

#include "sim/serving/iteration_model.hpp"
#include "sim/serving/serving_cost.hpp"
#include "sim/serving/serving_engine.hpp"
#include "sim/serving/serving_spec.hpp"

namespace clustersim {

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
};

// Keys: run, memory, requests, latency, throughput, utilization, power, cost, samples (columns:
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
