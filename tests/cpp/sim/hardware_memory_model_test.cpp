// Memory footprint per GPU: model state in Megatron-LM's layout sharded by tp, pp and ZeRO, activations
// from Korthikanti et al. 2022 (Table 2, fused-attention variant), pipeline in-flight micro-batches per
// stage, buffers and overhead, against hand-computed numbers.
#include <gtest/gtest.h>

#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/memory_model.hpp"
#include "workloads/transformer_math.hpp"

namespace clustersim {
namespace {

constexpr double kGiB = 1073741824.0;

// GPT-3 175B (174,615,846,912 parameters, tied) on tp 8, pp 8, dp 16 (1,024 GPUs), built directly.
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

TEST(MemoryModel, Gpt3ParametersPerStageInMegatronLayout) {
  // Per layer 12h^2 + 13h (h = 12288). tp 8 splits the matrices and the column-parallel biases (QKV 3h,
  // MLP up 4h) and replicates the two LayerNorms (4h) and the row-parallel biases (2h):
  //   (12h^2 + 7h) / 8 + 6h = 226,503,168 + 73,728 = 226,576,896; 12 layers = 2,718,922,752.
  // Stage 0 adds the word embedding V h / 8 = 78,643,200 and the position embedding s h =
  // 25,165,824: 2,822,731,776. Stage 7 adds the final LayerNorm 2h = 24,576 and its copy of the
  // tied word embedding, 78,643,200: 2,797,590,528.
  const WorkloadSpec s = gpt3_175b();
  EXPECT_DOUBLE_EQ(stage_parameters(s, 0), 2'822'731'776.0);
  EXPECT_DOUBLE_EQ(stage_parameters(s, 3), 2'718'922'752.0);
  EXPECT_DOUBLE_EQ(stage_parameters(s, 7), 2'797'590'528.0);
  // Summed over the 64 GPUs of one replica, less the replicas of replicated tensors (6h x 96 layers x
  // 7, position embedding x 7, final norm x 7, the tied copy x 8), it is the model.
  double sum = 0.0;
  for (int i = 0; i < 8; ++i)
    sum += 8.0 * stage_parameters(s, i);
  const double h = 12288.0;
  sum -= 6.0 * h * 96 * 7 + 2048.0 * h * 7 + 2.0 * h * 7 + 51200.0 * h;
  EXPECT_DOUBLE_EQ(sum, total_parameters(s.model));
}

TEST(MemoryModel, Gpt3ModelStateWithZero1) {
  // Stage 0 (the peak): 2,822,731,776 parameters. Weights 2 bytes = 5,645,463,552; fp32 main grads
  // 4 bytes = 11,290,927,104; Adam's 12 bytes sharded over dp 16 = 0.75 bytes = 2,117,048,832.
  const MemoryFootprint f = estimate_memory(gpt3_175b(), find_gpu("a100-sxm4-80gb", "t", ""));
  EXPECT_EQ(f.stage, 0);
  EXPECT_DOUBLE_EQ(f.parameters, 2'822'731'776.0);
  EXPECT_DOUBLE_EQ(f.weights_bytes, 5'645'463'552.0);
  EXPECT_DOUBLE_EQ(f.gradients_bytes, 11'290'927'104.0);
  EXPECT_DOUBLE_EQ(f.optimizer_bytes, 2'117'048'832.0);
}

TEST(MemoryModel, ZeroStagesShardGradientsThenWeights) {
  WorkloadSpec s = gpt3_175b();
  s.parallelism.zero_stage = 3;
  const MemoryFootprint f = estimate_memory(s, find_gpu("a100-sxm4-80gb", "t", ""));
  EXPECT_DOUBLE_EQ(f.weights_bytes, 5'645'463'552.0 / 16);
  EXPECT_DOUBLE_EQ(f.gradients_bytes, 11'290'927'104.0 / 16);
  EXPECT_DOUBLE_EQ(f.optimizer_bytes, 2'117'048'832.0);
  s.parallelism.zero_stage = 0;
  EXPECT_DOUBLE_EQ(estimate_memory(s, find_gpu("a100-sxm4-80gb", "t", "")).optimizer_bytes, 2'822'731'776.0 * 12);
}

TEST(MemoryModel, Gpt3ActivationsPerStage) {
  // Korthikanti Table 2, selective recompute + SP: s b h 34 / t = 2048 * 12288 * 34 / 8 = 106,954,752
  // bytes per layer, 12 layers per stage. 1F1B: stage i holds min(pp - i, m) = 8 - i micro-batches
  // (m = 1536 / 16 = 96). Stage 0: 106,954,752 * 12 * 8 = 10,267,656,192. Stage 7: one micro-batch,
  // 1,283,457,024, plus the fp32 logits of the loss 4 * 2048 * 51200 / 8 = 52,428,800.
  const std::vector<MemoryFootprint> stages =
      estimate_memory_per_stage(gpt3_175b(), find_gpu("a100-sxm4-80gb", "t", ""));
  ASSERT_EQ(stages.size(), 8u);
  EXPECT_DOUBLE_EQ(stages[0].micro_batches_in_flight, 8.0);
  EXPECT_DOUBLE_EQ(stages[5].micro_batches_in_flight, 3.0);
  EXPECT_DOUBLE_EQ(stages[0].activations_bytes, 10'267'656'192.0);
  EXPECT_DOUBLE_EQ(stages[7].activations_bytes, 1'283'457'024.0 + 52'428'800.0);
  // Buffers: 2 gradient buckets of max(40e6, 1e6 * 16) = 40e6 fp32 gradients = 320,000,000, and the
  // pipeline's send + receive buffers 2 * 2048 * 12288 * 2 / 8 = 12,582,912.
  EXPECT_DOUBLE_EQ(stages[0].communication_buffers_bytes, 332'582'912.0);
  // Stage 0 peak: 5,645,463,552 + 11,290,927,104 + 2,117,048,832 + 10,267,656,192 + 332,582,912
  // + 1 GiB = 30,727,420,416 bytes (28.6 GiB): fits in 80 GB.
  EXPECT_DOUBLE_EQ(stages[0].peak_bytes, 30'727'420'416.0);
  EXPECT_TRUE(stages[0].fits);
  EXPECT_DOUBLE_EQ(estimate_memory(gpt3_175b(), find_gpu("a100-sxm4-80gb", "t", "")).peak_bytes, 30'727'420'416.0);
}

TEST(MemoryModel, PublishedActivationFormulasForEachRecomputeMode) {
  // Korthikanti Table 2 with unfused attention (the 5 a s / h term), and the fused variant without it.
  WorkloadSpec s = gpt3_175b();
  const double sbh = 2048.0 * 12288.0, a = 96, sq = 2048, h = 12288, t = 8;
  s.training.recompute = "none";  // TP + SP: sbh (34/t + 5as/(ht))
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, AttentionKernel::unfused), sbh * (34.0 / t + 5.0 * a * sq / (h * t)));
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, AttentionKernel::fused), sbh * 34.0 / t);
  s.parallelism.sequence_parallel = false;  // TP without SP: sbh (10 + 24/t + 5as/(ht))
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, AttentionKernel::unfused),
                   sbh * (10.0 + 24.0 / t + 5.0 * a * sq / (h * t)));
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, AttentionKernel::fused), sbh * (10.0 + 24.0 / t));
  s.training.recompute = "selective";  // sbh (10 + 24/t) either way
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, AttentionKernel::unfused), sbh * (10.0 + 24.0 / t));
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, AttentionKernel::fused), sbh * (10.0 + 24.0 / t));
  s.training.recompute = "full";  // 2 sbh per layer (the layer's input), / t with SP
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, AttentionKernel::unfused), 2.0 * sbh);
  s.parallelism.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, AttentionKernel::fused), 2.0 * sbh / t);
  // No tensor parallelism: sbh (34 + 5as/h)
  s.parallelism.tp = 1;
  s.parallelism.sequence_parallel = false;
  s.training.recompute = "none";
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, AttentionKernel::unfused), sbh * (34.0 + 5.0 * a * sq / h));
}

TEST(MemoryModel, MicroBatchesInFlightBySchedule) {
  WorkloadSpec s = gpt3_175b();  // pp 8, m 96
  s.parallelism.pipeline_schedule = "gpipe";
  EXPECT_DOUBLE_EQ(micro_batches_in_flight(s, 0), 96.0);
  EXPECT_DOUBLE_EQ(micro_batches_in_flight(s, 7), 96.0);
  // Interleaved, v = 2: stage i holds 2 (pp - i - 1) + (v - 1) pp + 1 chunks of 6 layers = that / v
  // micro-batches of 12 layers. Stage 0: 23 / 2 = 11.5 = pp (1 + (pp - 1) / (pp v)) (Korthikanti
  // 4.2.3); stage 7: 9 / 2 = 4.5.
  s.parallelism.pipeline_schedule = "interleaved";
  s.parallelism.virtual_stages = 2;
  EXPECT_DOUBLE_EQ(micro_batches_in_flight(s, 0), 11.5);
  EXPECT_DOUBLE_EQ(micro_batches_in_flight(s, 7), 4.5);
  // 1F1B with fewer micro-batches than stages: min(pp - i, m)
  s.parallelism.pipeline_schedule = "1f1b";
  s.training.global_batch = 64;  // m = 64 / 16 = 4
  EXPECT_DOUBLE_EQ(micro_batches_in_flight(s, 0), 4.0);
  EXPECT_DOUBLE_EQ(micro_batches_in_flight(s, 6), 2.0);
}

TEST(MemoryModel, Gpt3SmallFitsOnEightyGigabytesDataParallel) {
  // gpt3-1.3b preset (micro_batch 2, no recompute, fused attention, bf16, Adam), dp 64, on H100:
  //   parameters 1,317,654,528 x (2 + 4 + 12) bytes   = 23,717,781,504
  //   activations 2048*2*2048 * 34 = 285,212,672 per layer x 24 = 6,845,104,128
  //               + logits 4 * 2048 * 2 * 51200 = 838,860,800
  //   buffers 2 buckets of max(40e6, 64e6) = 64e6 params x 4 bytes = 512,000,000
  //   overhead 1 GiB = 1,073,741,824
  //   peak 32,987,488,256 bytes (30.7 GiB) <= 81,559 MiB
  WorkloadSpec s = load_workload_spec("gpt3-1.3b");
  resolve_parallelism(s, 64);
  const MemoryFootprint f = estimate_memory(s, find_gpu("h100-sxm5-80gb", "t", ""));
  EXPECT_DOUBLE_EQ(f.weights_bytes + f.gradients_bytes + f.optimizer_bytes, 23'717'781'504.0);
  EXPECT_DOUBLE_EQ(f.activations_bytes, 6'845'104'128.0 + 838'860'800.0);
  EXPECT_DOUBLE_EQ(f.communication_buffers_bytes, 512'000'000.0);
  EXPECT_DOUBLE_EQ(f.framework_overhead_bytes, kGiB);
  EXPECT_DOUBLE_EQ(f.peak_bytes, 32'987'488'256.0);
  EXPECT_DOUBLE_EQ(f.capacity_bytes, 81559.0 * 1048576.0);
  EXPECT_TRUE(f.fits);
}

TEST(MemoryModel, NotFittingSaysSoWithTheNumbers) {
  // The same run with micro_batch 8: activations 4x (27.4e9 + 3.4e9), peak 56.1e9 bytes > the 40 GiB
  // of an A100 40GB.
  WorkloadSpec s = load_workload_spec("gpt3-1.3b");
  s.training.micro_batch = 8;
  resolve_parallelism(s, 64);
  const MemoryFootprint f = estimate_memory(s, find_gpu("a100-sxm4-40gb", "t", ""));
  EXPECT_FALSE(f.fits);
  EXPECT_DOUBLE_EQ(f.capacity_bytes, 40960.0 * 1048576.0);
  EXPECT_DOUBLE_EQ(f.peak_bytes, 23'717'781'504.0 + 4.0 * (6'845'104'128.0 + 838'860'800.0) + 512'000'000.0 + kGiB);
  EXPECT_GT(f.peak_bytes, f.capacity_bytes);
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
