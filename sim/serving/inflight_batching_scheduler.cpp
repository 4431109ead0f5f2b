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

#include "sim/serving/serving_scheduler_policies.hpp"

namespace clustersim {

void plan_inflight_batching(const SchedulerLimits& limits, ReplicaState& replica, std::span<ServedRequest> requests) {
  std::int64_t budget = limits.max_batch_tokens;
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
  while (budget > 0 && can_admit(limits, replica)) {
    const std::uint32_t id = replica.waiting.front();
    ServedRequest& r = requests[id];
    const std::int64_t left = r.known_tokens() - r.computed;
    const bool chunked = left > limits.max_batch_tokens;
    if (!chunked && left > budget) break;
    if (!reserve_whole_request(limits, replica, r)) break;
    const std::int64_t chunk = std::min(left, budget);
    admit_front(replica);
    replica.plan.push_back({id, static_cast<std::int32_t>(chunk)});
    budget -= chunk;
  }
}

}  // namespace clustersim
