// Continuous (iteration-level) batching over a paged KV cache: Orca (OSDI 2022) as vLLM v0's default
// scheduler runs it (vllm/core/scheduler.py, _schedule_default). Each iteration is either
//   - a prefill: queued requests admitted FCFS while the batch has fewer than max_batch_requests, their
//     whole prompts (or, after a preemption, every token they know) within max_batch_tokens and their
//     KV blocks free; the first request that does not fit stops the admission (no skipping), or
//   - a decode, when nothing can be admitted: one token for every running request, in admission order,
//     each growing its blocks; when none is free the last running request is preempted by recompute
//     (its blocks freed, back to the front of the queue), until the request fits or is itself preempted.
// A request whose tokens alone exceed max_batch_tokens (a preempted request that has generated many) is
// admitted when the batch is otherwise empty. vLLM's 1 % watermark of free blocks is not modelled.
#include "sim/serving/serving_scheduler_policies.hpp"

namespace clustersim {

void plan_continuous_batching(const SchedulerLimits& limits, ReplicaState& replica, std::span<ServedRequest> requests) {
  std::int64_t tokens = 0;
  while (can_admit(limits, replica)) {
    const std::uint32_t id = replica.waiting.front();
    ServedRequest& r = requests[id];
    const std::int64_t need = r.known_tokens() - r.computed;
    if (tokens + need > limits.max_batch_tokens && !replica.plan.empty()) break;
    if (!reserve_kv_blocks(replica, r, r.known_tokens(), limits.block_size)) break;
    tokens += need;
    admit_front(replica);
    replica.plan.push_back({id, static_cast<std::int32_t>(need)});
  }
  if (!replica.plan.empty()) return;
  schedule_decodes(replica, requests, limits.block_size);
}

}  // namespace clustersim
