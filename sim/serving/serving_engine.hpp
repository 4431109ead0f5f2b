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
#include "sim/serving/kv_transfer.hpp"
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

// Disaggregated serving's KV-cache transfers (kv_transfer.hpp), over the run.
struct KvTransferStats {
  std::int64_t transfers = 0;
  double bytes = 0.0;  // sum of prompt tokens x kv_cache_bytes_per_token
  double bytes_per_token = 0.0;
  double total_s = 0.0;  // the transfers' times, summed
  double max_s = 0.0;
  std::int64_t prefill_kv_blocks_per_replica = 0;
};

// Preemption by swap over the run (blocks of the replica: each GPU copies its shard).
struct SwapStats {
  std::int64_t swap_outs = 0;
  std::int64_t swap_ins = 0;
  std::int64_t blocks_out = 0;
  std::int64_t blocks_in = 0;
  double bytes_per_gpu = 0.0;            // copied over each GPU's host link, both ways
  double time_s = 0.0;                   // added to the iterations
  std::int64_t recompute_fallbacks = 0;  // preemptions that recomputed: the host swap space was full
  std::int64_t host_blocks_per_replica = 0;
};

// Speculative decoding over the run.
struct SpeculativeStats {
  double expected_tokens_per_step = 0.0;  // (1 - alpha^(k+1)) / (1 - alpha)
  std::int64_t steps = 0;                 // decode steps (verify passes of one request)
  std::int64_t tokens = 0;                // tokens they emitted
  std::int64_t truncated_steps = 0;       // steps that emitted fewer: the output's end or no KV block free
  double draft_time_s = 0.0;              // the draft's passes, over the iterations
};

struct ServingResult {
  ServingSummary summary;
  KvTransferStats kv_transfers;         // disaggregated serving only
  PrefixCacheStats prefix_cache;        // scheduler.prefix_caching only
  SwapStats swap;                       // scheduler.preemption = swap only
  SpeculativeStats speculative;         // speculative.tokens > 0 only
  std::vector<ServedRequest> requests;  // in arrival order
  std::vector<ServingSample> samples;
  std::vector<IterationRecord> iterations;  // the first options.iteration_records
  bool samples_truncated = false;           // kMaxSamples were taken before the run ended
};

// The models a run uses. Colocated serving: `decode` times every replica. Disaggregated serving
// (spec.prefill_pool.replicas > 0): `prefill` times the prefill pool's replicas, `decode` the decode
// pool's (spec.replicas), and `transfer` the move of each request's KV cache between them.
struct ServingModels {
  const IterationModel& decode;
  const IterationModel* prefill = nullptr;
  const KvTransfer* transfer = nullptr;
  // Preemption by swap: each GPU's link to host memory (bytes/s per direction); a replica's GPUs copy
  // their shards of a request's blocks at once, so a copy of b blocks takes
  // b x block_size x kv_bytes_per_token (per GPU: memory()) / host_link_Bps.
  double host_link_Bps = 0.0;
  // Speculative decoding (spec.speculative.tokens > 0): the draft model on the replicas that decode.
  const IterationModel* draft = nullptr;
};

// Serves `arrivals` (in arrival order) on spec.replicas replicas of `model`. The model is shared: every
// replica is the same. Throws SimulationError if the model returns a time that is not > 0.
ServingResult run_serving(const ServingSpec& spec, const IterationModel& model,
                          std::span<const RequestArrival> arrivals, const ServingRunOptions& options = {});
// Disaggregated serving (DistServe's flow; docs/serving.md "Disaggregated prefill and decode"): a request
// is routed to a prefill replica (replicas 0 .. P - 1, P = spec.prefill_pool.replicas), which runs its
// prompt under the spec's scheduler and emits its first token (its TTFT); its KV cache of prompt tokens
// then moves to a decode replica (P .. P + spec.replicas - 1, chosen by the router when the prefill ends;
// the prefill replica holds the blocks until the move ends), where it queues with its prompt computed
// and generates the rest. The first gap between tokens includes the transfer. Throws SimulationError as
// above, and std::invalid_argument when a disaggregated spec comes without a prefill model or transfer.
ServingResult run_serving(const ServingSpec& spec, const ServingModels& models,
                          std::span<const RequestArrival> arrivals, const ServingRunOptions& options = {});

}  // namespace clustersim
