#pragma once
// GPT-3 175B (174,615,846,912 parameters, tied) in Megatron-LM's layout: tp 8, pp 8, dp 16 (1,024 GPUs),
// 96 micro-batches of 1 (global batch 1536), bf16, selective recompute, sequence parallelism, ZeRO-1;
// built directly, for the memory model's and DualPipe's hand-worked cases.
#include <string>
#include <utility>

#include "transformer_fixture.hpp"

namespace clustersim::testing {

inline WorkloadSpec gpt3_175b(std::string pipeline_schedule = "1f1b") {
  WorkloadSpec s = transformer_workload(
      "", {.layers = 96, .hidden = 12288, .heads = 96, .ffn_hidden = 49152, .seq_len = 2048, .vocab = 51200}, 1536, 1);
  s.model.tied_embeddings = true;
  s.training.precision = Precision::bf16;
  s.training.recompute = "selective";
  s.parallelism.tp = 8;
  s.parallelism.pp = 8;
  s.parallelism.dp = 16;
  s.parallelism.sequence_parallel = true;
  s.parallelism.pipeline_schedule = std::move(pipeline_schedule);
  s.parallelism.zero_stage = 1;
  return s;
}

}  // namespace clustersim::testing
