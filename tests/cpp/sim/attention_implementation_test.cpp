// The attention implementations (workloads/attention_implementation.*): the registry's values and
// their source, the spec accepting each name and naming the path of a bad one, and what an
// implementation changes: the fused ones generate the same kernels (the same work, the same memory),
// only the replay's time of the attention class differs (sim/simulate.cpp), by the published ratio.
#include "workloads/attention_implementation.hpp"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../spec_error_of.hpp"
#include "sim/core/error.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/memory_model.hpp"
#include "workloads/transformer_generator.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {
namespace {

TEST(AttentionImplementation, RegistryNamesEveryImplementationOnce) {
  EXPECT_EQ(attention_implementation_names(), (std::vector<std::string>{"flash", "triton", "unfused"}));
  EXPECT_TRUE(find_attention_implementation("flash").fused);
  EXPECT_TRUE(find_attention_implementation("triton").fused);
  EXPECT_FALSE(find_attention_implementation("unfused").fused);
  for (const auto& i : attention_implementations())
    EXPECT_FALSE(i.source.empty()) << i.name;
  EXPECT_THROW(find_attention_implementation("xformers"), SimulationError);
}

// Dao 2023 (FlashAttention-2, sec. 4.1): FlashAttention-2 is 1.3 to 2.5x faster than FlashAttention in
// Triton; the ratio is the range's geometric middle, sqrt(1.3 x 2.5) = 1.803, to two decimals.
TEST(AttentionImplementation, TritonTakesThePublishedRatioOfFlashAttention2) {
  EXPECT_EQ(find_attention_implementation("flash").time_vs_flash2, 1.0);
  const double triton = find_attention_implementation("triton").time_vs_flash2;
  EXPECT_NEAR(triton, std::sqrt(1.3 * 2.5), 0.005);
  EXPECT_GE(triton, 1.3);
  EXPECT_LE(triton, 2.5);
}

// One GPU: h 1024, 8 heads, seq 2048, 2 layers.
nlohmann::json spec_json(const std::string& attention) {
  return nlohmann::json{
      {"name", "attn"},
      {"model",
       {{"type", "transformer"},
        {"layers", 2},
        {"hidden", 1024},
        {"heads", 8},
        {"ffn_hidden", 4096},
        {"seq_len", 2048},
        {"vocab", 1024}}},
      {"training", {{"global_batch", 4}, {"micro_batch", 2}, {"precision", "bf16"}, {"attention", attention}}},
      {"parallelism", {{"dp", 1}}}};
}

TEST(AttentionImplementation, TheSpecAcceptsEachNameAndNamesThePathOfABadOne) {
  for (const std::string& name : attention_implementation_names())
    EXPECT_EQ(parse_workload_spec(spec_json(name).dump(), "w.json").training.attention, name);
  const SpecError e = testing::spec_error_of([] { parse_workload_spec(spec_json("tritonn").dump(), "w.json"); });
  EXPECT_EQ(e.file(), "w.json");
  EXPECT_EQ(e.json_path(), "/training/attention");
  EXPECT_NE(e.message().find("triton"), std::string::npos) << e.message();
}

// A fused implementation other than FlashAttention-2 does the same work with the same kernels: the
// graphs are equal op for op (kind, flops, bytes) and the memory footprint is the same; only its
// time differs (the replay's attention factor). The unfused path has other kernels and keeps the
// s x s scores.
TEST(AttentionImplementation, FusedImplementationsGenerateTheSameKernelsAndMemory) {
  const WorkloadSpec flash = parse_workload_spec(spec_json("flash").dump(), "w.json");
  const WorkloadSpec triton = parse_workload_spec(spec_json("triton").dump(), "w.json");
  const WorkloadSpec unfused = parse_workload_spec(spec_json("unfused").dump(), "w.json");
  const ExecutionGraph gf = generate_transformer_training(flash, 1);
  const ExecutionGraph gt = generate_transformer_training(triton, 1);
  const OpTable& f = gf.classes().at(0).ops;
  const OpTable& t = gt.classes().at(0).ops;
  ASSERT_EQ(f.size(), t.size());
  int attention_ops = 0;
  for (OpId i = 0; i < f.size(); ++i) {
    ASSERT_EQ(f.kind(i), t.kind(i));
    EXPECT_EQ(f.flops(i), t.flops(i));
    EXPECT_EQ(f.bytes(i), t.bytes(i));
    if (f.kind(i) == OpKind::compute && f.kernel(i) == KernelClass::attention) ++attention_ops;
  }
  // 2 layers x 2 micro-batches x (forward + backward)
  EXPECT_EQ(attention_ops, 8);
  const GpuSpec gpu = find_gpu("h100-sxm5-80gb", "test", "/gpu");
  EXPECT_EQ(estimate_memory(flash, gpu).peak_bytes, estimate_memory(triton, gpu).peak_bytes);
  EXPECT_GT(estimate_memory(unfused, gpu).peak_bytes, estimate_memory(flash, gpu).peak_bytes);
}

}  // namespace
}  // namespace clustersim
