// Chunked prefill with a token budget per iteration: Sarathi-Serve (OSDI 2024, Agrawal et al.; vLLM's
// enable_chunked_prefill). Each iteration takes at most max_batch_tokens tokens:
//   1. one decode token for every running request that is generating, in admission order (KV blocks
//      grown, preemption by recompute from the back when they run out, as the continuous policy);
//   2. the next chunk of each running request still prefilling, in order, within the budget left;
//   3. new requests from the queue, FCFS, each with a chunk of its prompt, while the budget, the
//      batch's max_batch_requests and the free KV blocks last (the first that does not fit stops).
// Prompts of any length are served (in chunks), so none is rejected for max_batch_tokens.
#include <algorithm>

#include "sim/serving/serving_scheduler_policies.hpp"

namespace clustersim {
namespace {

// The next `chunk` tokens of `r` in the plan, its KV blocks grown for them; false when too few are free.
bool add_chunk(const SchedulerLimits& limits, ReplicaState& replica, std::uint32_t id, ServedRequest& r,
               std::int64_t chunk) {
  if (!reserve_kv_blocks(replica, r, r.computed + chunk, limits.block_size)) return false;
  replica.plan.push_back({id, static_cast<std::int32_t>(chunk)});
  return true;
}

}  // namespace

void plan_chunked_prefill(const SchedulerLimits& limits, ReplicaState& replica, std::span<ServedRequest> requests) {
  std::int64_t budget = limits.max_batch_tokens - schedule_decodes(replica, requests, limits.block_size);
  for (const std::uint32_t id : replica.running) {
    if (budget <= 0) return;
    ServedRequest& r = requests[id];
    const std::int64_t left = r.known_tokens() - r.computed;
    if (left <= 1) continue;  // decoding (scheduled above)
    if (!add_chunk(limits, replica, id, r, std::min(left, budget))) return;
    budget -= std::min(left, budget);
  }
  while (budget > 0 && can_admit(limits, replica)) {
    const std::uint32_t id = replica.waiting.front();
    ServedRequest& r = requests[id];
    const std::int64_t chunk = std::min<std::int64_t>(r.known_tokens() - r.computed, budget);
    if (!add_chunk(limits, replica, id, r, chunk)) return;
    budget -= chunk;
    admit_front(replica);
  }
}

}  // namespace clustersim
