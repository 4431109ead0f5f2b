#pragma once
// Speculative decoding (Leviathan, Kalman, Matias, "Fast Inference from Transformers via Speculative
// Decoding", ICML 2023; vLLM's draft-model speculation): a small draft model proposes k tokens one at a
// time, the served model verifies the k + 1 positions in one forward pass, and each proposal is accepted
// with probability alpha (independently, the paper's simplification). A verify step then yields
//   E = (1 - alpha^(k+1)) / (1 - alpha)   tokens on average   (k + 1 when alpha = 1; 1 when alpha = 0)
// (the paper's equation 1). How the engine uses it (serving_engine.cpp): every decode step of a request
// costs the draft's k forward passes (its first also runs the iteration's prompt chunks: the draft keeps
// its own KV cache) plus one verify pass with k + 1 new tokens per decoding request, and emits
// floor(credit) tokens, where each step adds E to the request's credit: deterministic, E per step on
// average.
//
// Memory (vLLM v0's draft-model speculation, vllm/spec_decode/spec_decode_worker.py: both models are
// loaded in the same process before the profile run, and split_num_cache_blocks_evenly gives both the
// same number of blocks, total x target block bytes / (target + draft block bytes)): the draft's
// weights come out of the KV budget and every token holds K and V in both models:
//   kv_cache_bytes     = target's KV cache - draft weights (per GPU, the draft on the replica's layout)
//   kv_bytes_per_token = target's + draft's (per GPU)
//   kv_capacity_tokens = floor(kv_cache_bytes / kv_bytes_per_token)
// The draft's activations are not added: the profile run's peak is the larger model's, the target's.
#include <memory>

#include "sim/serving/iteration_model.hpp"

namespace clustersim {

// E above. alpha in [0, 1], k >= 0.
double expected_tokens_per_step(double alpha, int k);

// The target replica's memory lines with the draft loaded beside it (above). Throws SpecError (file
// "serving replica", path "/speculative/draft_model") naming the lines when no KV token is left.
ReplicaMemory memory_with_draft(const ReplicaMemory& target, const ReplicaMemory& draft);
// The target's iteration model with memory_with_draft's memory (its iteration times unchanged).
std::unique_ptr<IterationModel> with_draft_memory(std::unique_ptr<IterationModel> target, const ReplicaMemory& draft);

}  // namespace clustersim
