// Static batching (FasterTransformer): a batch is formed from the queue when the replica is idle and
// runs to completion. Its first iteration prefills every prompt, then each iteration decodes one
// token of every request still generating; a finished request leaves the iteration (its slot is not
// refilled) and no request joins until the whole batch is done. The KV blocks of prompt + output are
// reserved at admission, so nothing is ever preempted.
#include <limits>

#include "sim/serving/serving_scheduler_policies.hpp"

namespace clustersim {
namespace {

class StaticBatching final : public ServingScheduler {
 public:
  explicit StaticBatching(const SchedulerLimits& limits) : limits_(limits) {}

  void schedule(ReplicaState& replica, std::span<ServedRequest> requests) const override {
    replica.plan.clear();
    if (replica.running.empty()) admit(replica, requests);
    for (const std::uint32_t id : replica.running) {
      const ServedRequest& r = requests[id];
      replica.plan.push_back({id, r.known_tokens() - r.computed});
    }
  }

  std::int64_t max_prompt_tokens() const override { return limits_.max_batch_tokens; }

 private:
  void admit(ReplicaState& replica, std::span<ServedRequest> requests) const {
    std::int64_t tokens = 0;
    while (!replica.waiting.empty() && static_cast<std::int64_t>(replica.running.size()) < limits_.max_batch_requests) {
      const std::uint32_t id = replica.waiting.front();
      ServedRequest& r = requests[id];
      if (tokens + r.prompt_tokens > limits_.max_batch_tokens) break;
      // Room for every token the request will hold: its last output token is never written back.
      const std::int64_t holds = std::int64_t{r.prompt_tokens} + r.output_tokens - 1;
      if (!reserve_kv_blocks(replica, r, holds, limits_.block_size)) break;
      tokens += r.prompt_tokens;
      replica.waiting.pop_front();
      replica.running.push_back(id);
    }
  }

  SchedulerLimits limits_;
};

}  // namespace

std::unique_ptr<ServingScheduler> make_static_batching_scheduler(const SchedulerLimits& limits) {
  return std::make_unique<StaticBatching>(limits);
}

}  // namespace clustersim
