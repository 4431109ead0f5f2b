#pragma once
// The batching policies of the scheduler registry (serving_scheduler.cpp), one file each, and the steps
// they share. A policy fills replica.plan (empty on entry) with the next iteration under `limits`.
#include <cstdint>
#include <span>

#include "sim/serving/serving_scheduler.hpp"

namespace clustersim {

void plan_static_batching(const SchedulerLimits& limits, ReplicaState& replica, std::span<ServedRequest> requests);
void plan_continuous_batching(const SchedulerLimits& limits, ReplicaState& replica, std::span<ServedRequest> requests);
void plan_chunked_prefill(const SchedulerLimits& limits, ReplicaState& replica, std::span<ServedRequest> requests);
void plan_inflight_batching(const SchedulerLimits& limits, ReplicaState& replica, std::span<ServedRequest> requests);

// Whether a queued request may join: the queue has one and the batch has fewer than max_batch_requests.
inline bool can_admit(const SchedulerLimits& limits, const ReplicaState& replica) {
  return !replica.waiting.empty() && static_cast<std::int64_t>(replica.running.size()) < limits.max_batch_requests;
}

// The queue's front joins the running batch (FCFS; after the policy has reserved its KV blocks).
inline void admit_front(ReplicaState& replica) {
  replica.running.push_back(replica.waiting.front());
  replica.waiting.pop_front();
}

// Reserves the KV blocks of every token `r` will hold, prompt and whole output (its last output token is
// never written back): the policies that never preempt (static, inflight). False (nothing reserved) when
// too few are free.
inline bool reserve_whole_request(const SchedulerLimits& limits, ReplicaState& replica, ServedRequest& r) {
  return reserve_kv_blocks(replica, r, std::int64_t{r.prompt_tokens} + r.output_tokens - 1, limits.block_size);
}

}  // namespace clustersim
