// In-flight batching as TensorRT-LLM runs it (docs/source/advanced/gpt-attention.md, "In-flight
// batching"; the performance tuning guide's "Tuning Max Batch Size and Max Num Tokens"): context and
// generation requests share an iteration of at most max_batch_tokens tokens (max_num_tokens) and
// max_batch_requests requests (max_batch_size). Each iteration takes
//   1. one generation token for every running request that is generating, in admission order, within
//      the budget;
//   2. the next chunk of each running request still in its context phase, within the budget left;
//   3. new requests from the queue, FCFS, each with its whole prompt, while the budget, the batch's
//      max_batch_requests and the free KV blocks last (the first that does not fit stops). A prompt
//      longer than max_batch_tokens is taken in chunks of the budget left (TensorRT-LLM's chunked
//      context, which such a prompt needs); shorter prompts are not split (chunking off, the default).
// KV blocks: the capacity scheduler's default policy GUARANTEED_NO_EVICT (CapacitySchedulerPolicy)
// admits a request only when the blocks of its prompt and its whole output are free, and reserves
// them, so nothing is ever preempted.
#include <algorithm>
#include <limits>

#include "sim/serving/serving_scheduler_policies.hpp"

namespace clustersim {
namespace {

class InflightBatching final : public ServingScheduler {
 public:
  explicit InflightBatching(const SchedulerLimits& limits) : limits_(limits) {}

  void schedule(ReplicaState& replica, std::span<ServedRequest> requests) const override {
    replica.plan.clear();
    std::int64_t budget = limits_.max_batch_tokens;
    for (const std::uint32_t id : replica.running) {  // generation tokens first
      const ServedRequest& r = requests[id];
      if (r.known_tokens() - r.computed != 1) continue;
      if (budget <= 0) return;
      replica.plan.push_back({id, 1});
      --budget;
    }
    for (const std::uint32_t id : replica.running) {  // context phases in progress (chunked)
      if (budget <= 0) return;
      const ServedRequest& r = requests[id];
      const std::int64_t left = r.known_tokens() - r.computed;
      if (left <= 1) continue;
      const std::int64_t chunk = std::min(left, budget);
      replica.plan.push_back({id, static_cast<std::int32_t>(chunk)});
      budget -= chunk;
    }
    while (budget > 0 && !replica.waiting.empty() &&
           static_cast<std::int64_t>(replica.running.size()) < limits_.max_batch_requests) {
      const std::uint32_t id = replica.waiting.front();
      ServedRequest& r = requests[id];
      const std::int64_t left = r.known_tokens() - r.computed;
      const bool chunked = left > limits_.max_batch_tokens;
      if (!chunked && left > budget) break;
      // Room for every token the request will hold: its last output token is never written back.
      const std::int64_t holds = std::int64_t{r.prompt_tokens} + r.output_tokens - 1;
      if (!reserve_kv_blocks(replica, r, holds, limits_.block_size)) break;
      const std::int64_t chunk = std::min(left, budget);
      replica.waiting.pop_front();
      replica.running.push_back(id);
      replica.plan.push_back({id, static_cast<std::int32_t>(chunk)});
      budget -= chunk;
    }
  }

  std::int64_t max_prompt_tokens() const override { return std::numeric_limits<std::int64_t>::max(); }

 private:
  SchedulerLimits limits_;
};

}  // namespace

std::unique_ptr<ServingScheduler> make_inflight_batching_scheduler(const SchedulerLimits& limits) {
  return std::make_unique<InflightBatching>(limits);
}

}  // namespace clustersim
