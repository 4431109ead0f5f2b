#pragma once
// A dense transformer workload built in code, for the tests that generate, replay or size a step
// without a spec file: the model's shape and the batch; every other key keeps the struct's default
// (each test sets what it varies).
#include <cstdint>
#include <string>
#include <utility>

#include "workloads/workload_spec.hpp"

namespace clustersim::testing {

// The ModelSpec keys of the same names.
struct TransformerShape {
  int layers = 0, hidden = 0, heads = 0, ffn_hidden = 0, seq_len = 0, vocab = 0;
};

inline WorkloadSpec transformer_workload(std::string name, const TransformerShape& shape, std::int64_t global_batch,
                                         int micro_batch) {
  WorkloadSpec s;
  s.name = std::move(name);
  s.model.layers = shape.layers;
  s.model.hidden = shape.hidden;
  s.model.heads = shape.heads;
  s.model.ffn_hidden = shape.ffn_hidden;
  s.model.seq_len = shape.seq_len;
  s.model.vocab = shape.vocab;
  s.training.global_batch = global_batch;
  s.training.micro_batch = micro_batch;
  return s;
}

// The replay tests' generated step: 4 layers of hidden 1,024 (8 heads, FFN 4,096, sequence 1,024, vocabulary
// 1,000) at tp 2 x pp 2 x `dp`, micro-batch 1.
inline WorkloadSpec small_tp2_pp2_workload(std::string name, int dp, std::int64_t global_batch) {
  WorkloadSpec s = transformer_workload(
      std::move(name), {.layers = 4, .hidden = 1024, .heads = 8, .ffn_hidden = 4096, .seq_len = 1024, .vocab = 1000},
      global_batch, 1);
  s.parallelism.tp = 2;
  s.parallelism.pp = 2;
  s.parallelism.dp = dp;
  return s;
}

// transformer_workload's model: `shape`, every other key the struct's default (GELU, multi-head
// attention, untied embeddings).
inline ModelSpec transformer_model(const TransformerShape& shape) {
  return transformer_workload("", shape, 0, 1).model;
}

// A SwiGLU decoder of `shape` with `kv_heads` key-value heads (grouped-query attention when fewer than
// the heads), as the Llama family's config.json files give them.
inline ModelSpec swiglu_decoder(const TransformerShape& shape, int kv_heads) {
  ModelSpec m = transformer_model(shape);
  m.kv_heads = kv_heads;
  m.activation = "swiglu";
  return m;
}

}  // namespace clustersim::testing
