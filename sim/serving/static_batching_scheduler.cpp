// Static batching (FasterTransformer): a batch is formed from the queue when the replica is idle and
// runs to completion. Its first iteration prefills every prompt, then each iteration decodes one
// token of every request still generating; a finished request leaves the iteration (its slot is not
// refilled) and no request joins until the whole batch is done. The KV blocks of prompt + output are
// reserved at admission, so nothing is ever preempted.

#include "sim/serving/serving_scheduler_policies.hpp"

namespace clustersim {
namespace {

// A new batch: queued requests FCFS while their prompts fit max_batch_tokens and their whole KV is free.
void admit_batch(const SchedulerLimits& limits, ReplicaState& replica, std::span<ServedRequest> requests) {
  std::int64_t tokens = 0;
  while (can_admit(limits, replica)) {
    ServedRequest& r = requests[replica.waiting.front()];
    if (tokens + r.prompt_tokens > limits.max_batch_tokens) break;
    if (!reserve_whole_request(limits, replica, r)) break;
    tokens += r.prompt_tokens;
    admit_front(replica);
  }
}

}  // namespace

void plan_static_batching(const SchedulerLimits& limits, ReplicaState& replica, std::span<ServedRequest> requests) {
  if (replica.running.empty()) admit_batch(limits, replica, requests);
  for (const std::uint32_t id : replica.running) {
    const ServedRequest& r = requests[id];
    replica.plan.push_back({id, r.known_tokens() - r.computed});
  }
}

}  // namespace clustersim
