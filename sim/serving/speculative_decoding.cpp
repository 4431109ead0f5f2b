// Speculative decoding's expected tokens per verify step (speculative_decoding.hpp).
#include "sim/serving/speculative_decoding.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

#include "sim/core/error.hpp"

namespace clustersim {
namespace {

class DraftSharedModel final : public IterationModel {
 public:
  DraftSharedModel(std::unique_ptr<IterationModel> target, const ReplicaMemory& draft)
      : target_(std::move(target)), memory_(memory_with_draft(target_->memory(), draft)) {}
  IterationTime iteration_time(std::span<const IterationEntry> batch) const override {
    return target_->iteration_time(batch);
  }
  const ReplicaMemory& memory() const override { return memory_; }

 private:
  std::unique_ptr<IterationModel> target_;
  ReplicaMemory memory_;
};

}  // namespace

double expected_tokens_per_step(double alpha, int k) {
  if (alpha >= 1.0) return static_cast<double>(k) + 1.0;
  return (1.0 - std::pow(alpha, k + 1)) / (1.0 - alpha);
}

}  // namespace clustersim

namespace clustersim {

ReplicaMemory memory_with_draft(const ReplicaMemory& target, const ReplicaMemory& draft) {
  ReplicaMemory m = target;
  m.draft_weights_bytes = draft.weights_bytes;
  m.draft_kv_bytes_per_token = draft.kv_bytes_per_token;
  m.kv_cache_bytes = target.kv_cache_bytes - draft.weights_bytes;
  m.kv_bytes_per_token = target.kv_bytes_per_token + draft.kv_bytes_per_token;
  const double tokens = m.kv_cache_bytes > 0.0 ? std::floor(m.kv_cache_bytes / m.kv_bytes_per_token) : 0.0;
  m.kv_capacity_tokens_per_rank = static_cast<std::int64_t>(tokens);
  m.kv_capacity_tokens = m.kv_capacity_tokens_per_rank * std::max(1, target.attention_dp_ranks);
  if (m.kv_capacity_tokens < 1) {
    std::ostringstream msg;
    msg.precision(3);
    msg << "the draft model leaves no KV cache: on one GPU the target's KV cache " << target.kv_cache_bytes / 1e9
        << " GB less the draft's weights " << draft.weights_bytes / 1e9 << " GB leave " << m.kv_cache_bytes / 1e9
        << " GB for " << m.kv_bytes_per_token << " bytes per token (target " << target.kv_bytes_per_token << " + draft "
        << draft.kv_bytes_per_token << "): use a smaller draft or more GPUs per replica";
    throw SpecError("serving replica", "/speculative/draft_model", msg.str());
  }
  return m;
}

std::unique_ptr<IterationModel> with_draft_memory(std::unique_ptr<IterationModel> target, const ReplicaMemory& draft) {
  return std::make_unique<DraftSharedModel>(std::move(target), draft);
}

}  // namespace clustersim
