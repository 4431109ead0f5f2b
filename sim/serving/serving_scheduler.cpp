#include "sim/serving/serving_scheduler.hpp"

#include <limits>

#include "sim/core/named_table.hpp"
#include "sim/serving/serving_scheduler_policies.hpp"

namespace clustersim {
namespace {

constexpr ServingSchedulerEntry kSchedulers[] = {
    {"static",
     "FasterTransformer: a batch of up to max_batch_requests queued requests (prompts within max_batch_tokens, KV "
     "blocks reserved for prompt + output) runs to completion before the next is formed",
     &plan_static_batching, false},
    {"continuous",
     "Orca / vLLM (v0 default): iteration-level batching over a paged KV cache; an iteration is either the prefill "
     "of whole prompts admitted FCFS or one decode token for every running request; preemption by recompute",
     &plan_continuous_batching, false},
    {"chunked_prefill",
     "Sarathi-Serve: a token budget of max_batch_tokens per iteration, decodes first, then prompt chunks "
     "(requests already prefilling, then new ones FCFS) fill the rest; preemption by recompute",
     &plan_chunked_prefill, true},
    {"inflight",
     "TensorRT-LLM: in-flight batching of generation tokens and whole prompts (prompts over max_batch_tokens in "
     "chunks) within max_batch_tokens; KV blocks of prompt + output reserved at admission (GUARANTEED_NO_EVICT), "
     "no preemption",
     &plan_inflight_batching, true},
};

// A registry entry's policy under the deployment's limits.
class PolicyScheduler final : public ServingScheduler {
 public:
  PolicyScheduler(const ServingSchedulerEntry& entry, const SchedulerLimits& limits) : entry_(entry), limits_(limits) {}

  void schedule(ReplicaState& replica, std::span<ServedRequest> requests) const override {
    replica.plan.clear();
    entry_.plan(limits_, replica, requests);
  }

  std::int64_t max_prompt_tokens() const override {
    return entry_.chunks_prompts ? std::numeric_limits<std::int64_t>::max() : limits_.max_batch_tokens;
  }

 private:
  const ServingSchedulerEntry& entry_;
  SchedulerLimits limits_;
};

}  // namespace

const char* to_string(RequestStatus s) {
  switch (s) {
    case RequestStatus::pending:
      return "pending";
    case RequestStatus::finished:
      return "finished";
    case RequestStatus::rejected_context:
      return "rejected_context";
    case RequestStatus::rejected_kv_cache:
      return "rejected_kv_cache";
    case RequestStatus::rejected_batch_tokens:
      return "rejected_batch_tokens";
  }
  return "?";
}

std::span<const ServingSchedulerEntry> serving_schedulers() {
  return kSchedulers;
}

std::vector<std::string> serving_scheduler_names() {
  return names_of(serving_schedulers());
}

std::unique_ptr<ServingScheduler> make_serving_scheduler(std::string_view name, const SchedulerLimits& limits) {
  return std::make_unique<PolicyScheduler>(find_named(serving_schedulers(), name, "serving scheduler"), limits);
}

bool reserve_kv_blocks(ReplicaState& replica, ServedRequest& r, std::int64_t tokens, std::int64_t block_size) {
  const std::int64_t more = kv_blocks_for(tokens, block_size) - r.blocks;
  if (more <= 0) return true;
  if (more > replica.free_blocks && replica.prefix_cache != nullptr)
    replica.prefix_cache->evict_for(more, replica.free_blocks);
  if (more > replica.free_blocks) return false;
  replica.free_blocks -= more;
  r.blocks += static_cast<std::int32_t>(more);
  return true;
}

void release_kv_blocks(ReplicaState& replica, ServedRequest& r) {
  replica.free_blocks += r.blocks - r.shared_blocks;
  r.blocks = r.shared_blocks;
}

std::uint32_t preempt_last(ReplicaState& replica, std::span<ServedRequest> requests) {
  const std::uint32_t victim = replica.running.back();
  replica.running.pop_back();
  ServedRequest& r = requests[victim];
  const std::int64_t own = r.blocks - r.shared_blocks;
  if (replica.host_free_blocks >= 0 && own > 0 && own <= replica.host_free_blocks) {
    // vLLM's PreemptionMode.SWAP: the blocks move to host memory; the request keeps its tokens.
    replica.free_blocks += own;
    replica.host_free_blocks -= own;
    replica.swap_out_blocks += own;
    r.blocks = r.shared_blocks;
    r.swapped_blocks = static_cast<std::int32_t>(own);
  } else {
    if (replica.host_free_blocks >= 0) ++replica.swap_fallbacks;
    release_kv_blocks(replica, r);
    r.computed = r.shared_blocks > 0 ? r.shared_blocks * replica.prefix_cache->block_size() : 0;
  }
  ++r.preemptions;
  ++replica.preemptions;
  replica.waiting.push_front(victim);
  return victim;
}

std::int64_t schedule_decodes(ReplicaState& replica, std::span<ServedRequest> requests, std::int64_t block_size) {
  std::int64_t tokens = 0;
  for (std::size_t i = 0; i < replica.running.size(); ++i) {
    const std::uint32_t id = replica.running[i];
    ServedRequest& r = requests[id];
    if (r.known_tokens() - r.computed != 1) continue;
    bool preempted_self = false;
    while (!reserve_kv_blocks(replica, r, std::int64_t{r.computed} + 1, block_size)) {
      if (preempt_last(replica, requests) == id) {
        preempted_self = true;
        break;
      }
    }
    if (preempted_self) break;  // it was the last running request
    replica.plan.push_back({id, 1});
    ++tokens;
  }
  return tokens;
}

}  // namespace clustersim
