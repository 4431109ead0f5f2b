#pragma once
// The serving engine: a discrete-event simulation of every replica's iteration loop. Requests arrive
// (generated traffic or a trace), are checked against the context limit, the scheduler's prompt limit
// and one replica's KV cache (rejected and counted otherwise), routed to a replica, and batched there by
// the scheduler policy; each iteration's time comes from the IterationModel. Events are processed in
// time order, an iteration's end before an arrival at the same instant, replicas by index on ties, so
// a run is deterministic. Cost: O(log replicas) per event plus O(batch) per iteration; no state grows
// with the square of the requests.
#include <cstdint>
#include <span>
#include <vector>

#include "sim/serving/iteration_model.hpp"
#include "sim/serving/serving_metrics.hpp"
#include "sim/serving/serving_scheduler.hpp"
#include "sim/serving/serving_spec.hpp"
#include "sim/serving/serving_traffic.hpp"

namespace clustersim {

struct ServingRunOptions {
  // Keep an IterationRecord (40 bytes) for each of the first `iteration_records` iterations; 0: none.
  std::int64_t iteration_records = 0;
  // Period of the cluster's samples (running, queued, KV blocks, preemptions); at most kMaxSamples
  // are taken (ServingResult::samples_truncated says when the run was longer).
  double sample_interval_s = 1.0;
  static constexpr std::size_t kMaxSamples = std::size_t{1} << 22;
};

struct ServingResult {
  ServingSummary summary;
  std::vector<ServedRequest> requests;  // in arrival order
  std::vector<ServingSample> samples;
  std::vector<IterationRecord> iterations;  // the first options.iteration_records
  bool samples_truncated = false;           // kMaxSamples were taken before the run ended
};

// Serves `arrivals` (in arrival order) on spec.replicas replicas of `model`. The model is shared: every
// replica is the same. Throws SimulationError if the model returns a time that is not > 0.
ServingResult run_serving(const ServingSpec& spec, const IterationModel& model,
                          std::span<const RequestArrival> arrivals, const ServingRunOptions& options = {});

}  // namespace clustersim
