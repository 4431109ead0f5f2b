// Memory footprint per GPU: model state sharded by tp, pp and ZeRO, activations from Korthikanti et
// al. 2022 (Table 2), buffers and overhead, against hand-computed numbers.
#include <gtest/gtest.h>

#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/memory_model.hpp"

namespace clustersim {
namespace {

constexpr double kGiB = 1073741824.0;

// GPT-3 175B (174,615,846,912 parameters, tied) on tp 8, pp 8, dp 16, built directly: this
// milestone's resolve_parallelism refuses tp, pp and ZeRO, the memory model does not.
WorkloadSpec gpt3_175b() {
  WorkloadSpec s;
  s.model.layers = 96;
  s.model.hidden = 12288;
  s.model.heads = 96;
  s.model.ffn_hidden = 49152;
  s.model.seq_len = 2048;
  s.model.vocab = 51200;
  s.model.tied_embeddings = true;
  s.training.global_batch = 1536;
  s.training.micro_batch = 1;
  s.training.precision = Precision::bf16;
  s.training.recompute = "selective";
  s.parallelism.tp = 8;
  s.parallelism.pp = 8;
  s.parallelism.dp = 16;
  s.parallelism.sequence_parallel = true;
  s.parallelism.pipeline_schedule = "1f1b";
  s.parallelism.zero_stage = 1;
  return s;
}

TEST(MemoryModel, Gpt3ModelStateWithZero1) {
  // Per GPU 174,615,846,912 / 64 = 2,728,372,608 parameters: weights 2 bytes = 5,456,745,216;
  // fp32 main grads 4 bytes = 10,913,490,432; Adam 12 bytes sharded over dp 16 = 0.75 bytes
  // = 2,046,279,456.
  const MemoryFootprint f = estimate_memory(gpt3_175b(), find_gpu("a100-sxm4-80gb", "t", ""));
  EXPECT_DOUBLE_EQ(f.weights_bytes, 5'456'745'216.0);
  EXPECT_DOUBLE_EQ(f.gradients_bytes, 10'913'490'432.0);
  EXPECT_DOUBLE_EQ(f.optimizer_bytes, 2'046'279'456.0);
}

TEST(MemoryModel, ZeroStagesShardGradientsThenWeights) {
  WorkloadSpec s = gpt3_175b();
  s.parallelism.zero_stage = 3;
  const MemoryFootprint f = estimate_memory(s, find_gpu("a100-sxm4-80gb", "t", ""));
  EXPECT_DOUBLE_EQ(f.weights_bytes, 5'456'745'216.0 / 16);
  EXPECT_DOUBLE_EQ(f.gradients_bytes, 10'913'490'432.0 / 16);
  EXPECT_DOUBLE_EQ(f.optimizer_bytes, 2'046'279'456.0);
}

TEST(MemoryModel, Gpt3ActivationsSelectiveWithSequenceParallelism) {
  // Korthikanti Table 2, selective recompute + SP: s b h 34 / t = 2048 * 12288 * 34 / 8
  // = 106,954,752 bytes per layer; 96 / 8 = 12 layers per stage, 1F1B keeps pp = 8 micro-batches in
  // flight on the first stage: 106,954,752 * 96 = 10,267,656,192. Logits 4 * 2048 * 51200 / 8
  // = 52,428,800. Total 10,320,084,992.
  const MemoryFootprint f = estimate_memory(gpt3_175b(), find_gpu("a100-sxm4-80gb", "t", ""));
  EXPECT_DOUBLE_EQ(f.activations_bytes, 10'320'084'992.0);
}

TEST(MemoryModel, ActivationsFollowKorthikantiForEachRecomputeMode) {
  WorkloadSpec s = gpt3_175b();
  const GpuSpec gpu = find_gpu("a100-sxm4-80gb", "t", "");
  const double sbh = 2048.0 * 12288.0, a = 96, sq = 2048, h = 12288, t = 8, layers = 96;
  const double logits = 4.0 * 2048 * 51200 / 8;
  s.training.recompute = "none";  // TP + SP: sbh (34/t + 5as/(ht))
  EXPECT_DOUBLE_EQ(estimate_memory(s, gpu).activations_bytes,
                   sbh * (34.0 / t + 5.0 * a * sq / (h * t)) * layers + logits);
  s.parallelism.sequence_parallel = false;  // TP without SP: sbh (10 + 24/t + 5as/(ht))
  EXPECT_DOUBLE_EQ(estimate_memory(s, gpu).activations_bytes,
                   sbh * (10.0 + 24.0 / t + 5.0 * a * sq / (h * t)) * layers + logits);
  s.training.recompute = "selective";  // sbh (10 + 24/t)
  EXPECT_DOUBLE_EQ(estimate_memory(s, gpu).activations_bytes, sbh * (10.0 + 24.0 / t) * layers + logits);
  s.training.recompute = "full";  // 2 sbh per layer
  EXPECT_DOUBLE_EQ(estimate_memory(s, gpu).activations_bytes, 2.0 * sbh * layers + logits);
}

TEST(MemoryModel, Gpt3SmallFitsOnEightyGigabytesDataParallel) {
  // gpt3-1.3b preset (micro_batch 2, no recompute, bf16, Adam), dp 64, on H100:
  //   parameters 1,317,654,528 x (2 + 4 + 12) bytes  = 23,717,781,504
  //   activations 2048*2*2048 * (34 + 5*16*2048/2048) = 956,301,312 per layer x 24 = 22,951,231,488
  //               + logits 4 * 2048 * 2 * 51200 = 838,860,800
  //   buffers 2 buckets of max(40e6, 64e6) = 64e6 params x 4 bytes = 512,000,000
  //   overhead 1 GiB = 1,073,741,824
  //   peak 49,093,615,616 bytes (45.7 GiB) <= 81,559 MiB
  WorkloadSpec s = load_workload_spec("gpt3-1.3b");
  resolve_parallelism(s, 64);
  const MemoryFootprint f = estimate_memory(s, find_gpu("h100-sxm5-80gb", "t", ""));
  EXPECT_DOUBLE_EQ(f.weights_bytes + f.gradients_bytes + f.optimizer_bytes, 23'717'781'504.0);
  EXPECT_DOUBLE_EQ(f.activations_bytes, 22'951'231'488.0 + 838'860'800.0);
  EXPECT_DOUBLE_EQ(f.communication_buffers_bytes, 512'000'000.0);
  EXPECT_DOUBLE_EQ(f.framework_overhead_bytes, kGiB);
  EXPECT_DOUBLE_EQ(f.peak_bytes, 49'093'615'616.0);
  EXPECT_DOUBLE_EQ(f.capacity_bytes, 81559.0 * 1048576.0);
  EXPECT_TRUE(f.fits);
  // ... but not on a 40 GB A100 (40 GiB = 42,949,672,960 bytes).
  EXPECT_FALSE(estimate_memory(s, find_gpu("a100-sxm4-40gb", "t", "")).fits);
}

TEST(MemoryModel, NoBuffersWithoutDataParallelism) {
  WorkloadSpec s = load_workload_spec("gpt3-1.3b");
  resolve_parallelism(s, 1);
  EXPECT_EQ(estimate_memory(s, find_gpu("h100-sxm5-80gb", "t", "")).communication_buffers_bytes, 0.0);
}

TEST(MemoryModel, Llama7bNeedsShardingOnEightyGigabytes) {
  // 6,738,415,616 parameters x 18 bytes = 121.3e9 bytes of model state alone.
  WorkloadSpec s = load_workload_spec("llama2-7b");
  resolve_parallelism(s, 8);
  const MemoryFootprint f = estimate_memory(s, find_gpu("h100-sxm5-80gb", "t", ""));
  EXPECT_DOUBLE_EQ(f.weights_bytes + f.gradients_bytes + f.optimizer_bytes, 6'738'415'616.0 * 18);
  EXPECT_FALSE(f.fits);
  EXPECT_GT(f.peak_bytes, f.capacity_bytes);
}

}  // namespace
}  // namespace clustersim
