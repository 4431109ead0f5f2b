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
namespace clustersim {

// E above. alpha in [0, 1], k >= 0.
double expected_tokens_per_step(double alpha, int k);

}  // namespace clustersim
