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
  bool record_iterations = false;  // keep one IterationRecord per iteration (memory: 48 bytes each)
  double sample_interval_s = 1.0;  // period of the cluster's samples (running, queued, KV blocks)
};

struct ServingResult {
  ServingSummary summary;
  std::vector<ServedRequest> requests;  // in arrival order
  std::vector<ServingSample> samples;
  std::vector<IterationRecord> iterations;  // when recorded
};

// Serves `arrivals` (in arrival order) on spec.replicas replicas of `model`. The model is shared: every
// replica is the same. Throws SimulationError if the model returns a time that is not > 0.
ServingResult run_serving(const ServingSpec& spec, const IterationModel& model,
                          std::span<const RequestArrival> arrivals, const ServingRunOptions& options = {});

}  // namespace clustersim
