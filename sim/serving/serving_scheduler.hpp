#pragma once
// The request-level schedulers of one replica (the serving spec's `scheduler.name`) and the state they
// work on: each request's tokens and KV-cache blocks, each replica's queue and running batch.
//
// Token accounting (every policy): a request "knows" prompt_tokens + generated tokens; `computed` of
// them are in the KV cache. An iteration processes `new_tokens` of the rest (a prompt chunk, the whole
// prompt, or the one token generated last); when computed reaches known the request samples its next
// token. Preemption by recompute frees every block and sets computed to 0: the request prefills its
// known tokens again when it is scheduled next (vLLM's RECOMPUTE).
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/serving/iteration_model.hpp"
#include "sim/serving/prefix_cache.hpp"

namespace clustersim {

enum class RequestStatus : std::uint8_t {
  pending,
  finished,
  rejected_context,
  rejected_kv_cache,
  rejected_batch_tokens
};
const char* to_string(RequestStatus s);

// One request's state through the simulation (kept small: 96 bytes).
struct ServedRequest {
  double arrival_s = 0.0;
  double first_token_s = -1.0;
  double last_token_s = 0.0;
  double finish_s = -1.0;
  double tbt_sum_s = 0.0;  // the gaps between its output tokens
  double tbt_max_s = 0.0;
  std::int32_t prompt_tokens = 0;
  std::int32_t output_tokens = 0;  // tokens to generate, the first included (>= 1)
  std::int32_t generated = 0;
  std::int32_t computed = 0;  // tokens in the KV cache
  std::int32_t blocks = 0;    // KV-cache blocks held
  std::int32_t replica = -1;
  std::int32_t preemptions = 0;
  std::int32_t prefix_group = -1;   // its prefix group (prefix caching); -1: none
  std::int32_t shared_blocks = 0;   // of `blocks`, those it references in the replica's prefix cache
  std::int32_t swapped_blocks = 0;  // blocks swapped out to host memory (preemption by swap)
  float speculative_credit = 0.0f;  // speculative decoding: tokens owed (each step adds E, emits the floor)
  RequestStatus status = RequestStatus::pending;
  bool prefix_hit = false;  // it found its group's blocks cached when it joined the replica

  std::int32_t known_tokens() const { return prompt_tokens + generated; }
};

struct SchedulerLimits {
  std::int64_t max_batch_tokens = 8192;
  std::int64_t max_batch_requests = 256;
  std::int64_t block_size = 16;
};

// One request's share of the next iteration.
struct ScheduledEntry {
  std::uint32_t request = 0;
  std::int32_t new_tokens = 0;
};

struct ReplicaState {
  std::deque<std::uint32_t> waiting;   // FCFS; a preempted request goes back to the front
  std::vector<std::uint32_t> running;  // in admission order: preemption takes the last
  std::int64_t total_blocks = 0;
  std::int64_t free_blocks = 0;
  std::vector<ScheduledEntry> plan;  // the iteration in flight (empty: idle)
  std::int64_t preemptions = 0;
  PrefixCache* prefix_cache = nullptr;  // prefix caching: its unreferenced blocks are evicted before failing
  // Preemption by swap (scheduler.preemption = swap): host blocks free (-1: preemption by recompute), the
  // blocks swapped out since the last iteration started (their copy is timed with the next iteration), and
  // the preemptions that recomputed because the host swap space was full.
  std::int64_t host_free_blocks = -1;
  std::int64_t swap_out_blocks = 0;
  std::int64_t swap_fallbacks = 0;
};

class ServingScheduler {
 public:
  virtual ~ServingScheduler() = default;
  // Fills replica.plan with the next iteration (left empty: nothing can run), moving requests from the
  // queue to the running batch, allocating the KV blocks the iteration's tokens need and preempting
  // when they run out.
  virtual void schedule(ReplicaState& replica, std::span<ServedRequest> requests) const = 0;
  // Prefill tokens one iteration can take for a single request: a longer prompt is rejected on
  // arrival (std::int64_t max: the policy chunks prompts).
  virtual std::int64_t max_prompt_tokens() const = 0;
};

// A batching policy: fills replica.plan (empty on entry) with the next iteration under `limits`.
using BatchingPlan = void (*)(const SchedulerLimits& limits, ReplicaState& replica, std::span<ServedRequest> requests);

struct ServingSchedulerEntry {
  const char* name;
  const char* doc;
  BatchingPlan plan;
  // Whether the policy splits a prompt over iterations (any length is served); if not, a prompt over
  // max_batch_tokens is rejected on arrival.
  bool chunks_prompts;
};

std::span<const ServingSchedulerEntry> serving_schedulers();
std::vector<std::string> serving_scheduler_names();
std::unique_ptr<ServingScheduler> make_serving_scheduler(std::string_view name, const SchedulerLimits& limits);

// -- the KV blocks, shared by the policies ----------------------------------------------------------

inline std::int64_t kv_blocks_for(std::int64_t tokens, std::int64_t block_size) {
  return (tokens + block_size - 1) / block_size;
}

// Allocates blocks until `r` holds room for `tokens` (evicting unreferenced prefix-cache blocks first when
// too few are free); false (nothing allocated) when too few are free even then.
bool reserve_kv_blocks(ReplicaState& replica, ServedRequest& r, std::int64_t tokens, std::int64_t block_size);
// Frees every block of `r` but the prefix-cache blocks it references (it keeps those).
void release_kv_blocks(ReplicaState& replica, ServedRequest& r);
// Preempts the last running request (back to the front of the queue) and returns its index: by swap when
// the replica swaps and its host space holds the request's blocks (they move to host memory; its
// computed tokens are kept), else by recompute (its computed tokens fall back to the prefix-cache blocks
// it references, 0 without).
std::uint32_t preempt_last(ReplicaState& replica, std::span<ServedRequest> requests);
// Gives the running requests from running[first] on one decode token each, in order, growing their
// blocks and preempting from the back when the blocks run out (vLLM's _schedule_running). Requests
// with more than one token left (prefilling) are skipped. Returns the decode tokens scheduled.
std::int64_t schedule_decodes(ReplicaState& replica, std::span<ServedRequest> requests, std::int64_t block_size);

}  // namespace clustersim
