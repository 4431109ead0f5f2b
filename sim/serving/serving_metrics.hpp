#pragma once
// What a serving run measures: per-request latencies (TTFT, time between tokens, end to end), their
// percentiles, throughput, goodput and SLO attainment, KV-cache occupancy and queue lengths over time,
// preemptions, rejections and GPU busy time.
//
// One percentile definition everywhere (docs/serving.md): the nearest rank. The p-th percentile of n
// values is the ceil(p / 100 x n)-th smallest (the smallest value with at least p % of the values at or
// below it); no interpolation, so it is always a value that was measured. The p99 of the gaps between
// tokens over all requests is taken from a log-scale histogram (TokenGapHistogram) whose bins are
// 0.1 % wide: it is that nearest-rank percentile to within 0.05 %.
#include <cstdint>
#include <span>
#include <vector>

#include "sim/serving/serving_scheduler.hpp"
#include "sim/serving/serving_spec.hpp"

namespace clustersim {

// The nearest-rank percentile of `sorted` (ascending, non-empty), 0 < p <= 100.
double nearest_rank_percentile(std::span<const double> sorted, double p);

class TokenGapHistogram {
 public:
  TokenGapHistogram();
  void add(double gap_s);
  std::int64_t count() const { return count_; }
  // The nearest-rank percentile (0 when empty): the geometric middle of the bin holding that rank.
  double percentile(double p) const;

 private:
  std::vector<std::int64_t> bins_;
  std::int64_t count_ = 0;
  double last_gap_s_ = -1.0;  // consecutive gaps of one iteration are equal: their bin is remembered
  std::size_t last_bin_ = 0;
};

struct LatencySummary {
  double mean_s = 0.0;
  double p50_s = 0.0;
  double p90_s = 0.0;
  double p99_s = 0.0;
  double max_s = 0.0;
};

// The cluster's state at one instant (sums over the replicas).
struct ServingSample {
  double time_s = 0.0;
  std::int64_t running = 0;
  std::int64_t queued = 0;
  std::int64_t kv_blocks_used = 0;
  std::int64_t preemptions = 0;  // so far
};

struct IterationRecord {
  std::int32_t replica = 0;
  double start_s = 0.0;
  double time_s = 0.0;
  std::int32_t requests = 0;
  std::int32_t prefill_tokens = 0;  // tokens of requests that had more than one left
  std::int32_t decode_tokens = 0;
  std::int64_t kv_blocks_used = 0;  // on the replica, once the iteration is scheduled
};

struct ServingSummary {
  std::int64_t requests = 0;  // arrivals
  std::int64_t finished = 0;
  std::int64_t rejected_context = 0;       // prompt + output over the context limit
  std::int64_t rejected_kv_cache = 0;      // prompt + output - 1 tokens more than a replica's KV cache
  std::int64_t rejected_batch_tokens = 0;  // prompt over max_batch_tokens (policies without chunking)
  std::int64_t preemptions = 0;
  std::int64_t iterations = 0;
  std::int64_t input_tokens = 0;   // prompts of the finished requests
  std::int64_t output_tokens = 0;  // tokens they generated
  double makespan_s = 0.0;         // from 0 to the last finish
  LatencySummary ttft;
  LatencySummary e2e;
  LatencySummary tbt_mean;  // per request: the mean gap between its tokens (requests with >= 2 tokens)
  LatencySummary tbt_max;   // per request: its longest gap
  double tbt_p50_s = 0.0;   // over every gap between tokens of every request (TokenGapHistogram)
  double tbt_p99_s = 0.0;
  double throughput_rps = 0.0;  // finished / makespan
  double input_tokens_per_s = 0.0;
  double output_tokens_per_s = 0.0;
  // Time averages over [0, makespan].
  double mean_requests_in_system = 0.0;  // queued or running (Little's law: rate x mean e2e)
  double mean_running = 0.0;
  double mean_queued = 0.0;
  double mean_kv_occupancy = 0.0;  // blocks used / blocks of every replica
  double peak_kv_occupancy = 0.0;
  double gpu_busy_fraction = 0.0;  // iteration time less host overhead / (replicas x makespan)
  double slo_attainment = 0.0;     // of the arrivals (rejected ones miss it)
  double goodput_rps = 0.0;        // requests attaining the SLO / makespan
  std::int64_t kv_blocks_per_replica = 0;
  std::int64_t kv_capacity_tokens_per_replica = 0;
};

// Whether a finished request attains `slo`.
bool attains_slo(const ServedRequest& r, const SloSpec& slo);

// The summary's request statistics (latencies, throughput, goodput, counts) from the requests; the
// engine fills in the time averages, iterations and preemptions.
ServingSummary summarize_requests(std::span<const ServedRequest> requests, const SloSpec& slo,
                                  const TokenGapHistogram& gaps);

}  // namespace clustersim
