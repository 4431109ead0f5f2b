// A DeepSeek-V3-class replica (multi-head latent attention, MoE, attention data parallelism) against
// TensorRT-LLM's published DeepSeek-R1 max-throughput run on 8 x H200
// (calibration/data/published/serving_throughput_mla.json; the deployment as a serving spec with its
// assumptions in tests/cpp/serving/specs/trtllm_deepseek_r1_h200.json). Nothing is fitted to it.
//
// Measured on this commit (2026-11-28): 17,363 output tokens/s against the published 11,489 (+51.1 %),
// with the checkpoint's fp8 block scales (replica.fp8_block_scales: GEMMs at gemm_fp8_blockwise_efficiency);
// without them 17,520 (+52.5 %); with every layer timed as 256 routed experts (no shared expert, no dense
// first layers) 18,013 (+56.8 %); before MLA's kernels (attention timed as multi-head attention of hidden /
// heads = 56 per head) 20,071 (+74.7 %). The run goes in waves (max_num_tokens 1151 = one 1024-token prompt
// and 127 decodes per rank, 1,024 clients for 8 x 128 slots): 645 prefill iterations and 9,727 decode-only
// ones of 128 requests per rank; the gap is in the decode step (docs/serving.md: each candidate sized).
// The decode step per kernel class and each piece against published figures:
// tests/cpp/serving/mla_decode_breakdown_test.cpp (re-measured 2026-11-28 on base 57da362: 17,398, +51.4 %).
// Asserted: the model stays within +49 % .. +53 % of the published figure, so that a change moving it is
// seen. A second test sizes a bound: every prompt in an iteration of its own (contexts not co-scheduled
// across the attention ranks) lands within 5 % below the published figure.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../published_table.hpp"
#include "cli_support.hpp"

namespace clustersim {
namespace {

TEST(CliServePublished, DeepSeekR1MaxThroughputOnEightH200) {
  const nlohmann::json rows = testing::published_table("serving_throughput_mla.json");
  ASSERT_EQ(rows.size(), 1u);
  const double published = rows[0]["output_tokens_per_s"];
  const auto r =
      testing::run_cli("serve --cluster dgx-h200-superpod --set nodes=1 --json --serving " +
                       std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/cpp/serving/specs/trtllm_deepseek_r1_h200.json");
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["requests"]["finished"], 5120);
  EXPECT_EQ(j["requests"]["output_tokens"], 5120 * 2048);
  const double tokens_per_s = j["throughput"]["output_tokens_per_s"];
  const double error = tokens_per_s / published - 1.0;
  EXPECT_GT(error, 0.49) << tokens_per_s;
  EXPECT_LT(error, 0.53) << tokens_per_s;
  // The error bars (sim/validation/error_bars.cpp): the MLA row of serving-trtllm-mla (this run's own
  // residual, distance 0) and the 20 dense fp8 Hopper tp 8 throughput rows, each 3 away (model moe,
  // attention mla, sharding serving-ep): mean distance 60 / 21, widening 1 + 60 / 21; the published
  // figure is inside.
  const auto& i = j["intervals"]["output_tokens_per_s"];
  EXPECT_EQ(i["basis"]["rows"], 21);
  EXPECT_NEAR(i["basis"]["mean_distance"].get<double>(), 60.0 / 21.0, 1e-12);
  EXPECT_NEAR(i["basis"]["widening"].get<double>(), 1.0 + 60.0 / 21.0, 1e-12);
  EXPECT_GE(published, i["interval"][0].get<double>());
  EXPECT_LE(published, i["interval"][1].get<double>());
}

// A bound, not the model (docs/serving.md, "Validation: multi-head latent attention", context
// synchronisation): the replica's one scheduler puts up to one prompt on every attention rank in the same
// iteration (8 contexts of 1024 tokens within max_num_tokens 1151 per rank), as TensorRT-LLM's ADP
// balance strategy does (NVIDIA/TensorRT-LLM docs/source/blogs/tech_blog/blog10_ADP_Balance_Strategy.md);
// its round-robin baseline does not co-schedule the ranks' context phases, and at worst every prompt runs
// in an iteration of its own while the other ranks decode. A replica budget of 2047 tokens (1023 decodes
// + one 1024-token prompt: two prompts are 2048) forces that worst case: measured 11,243 output tokens/s,
// -2.1 % against the published 11,489, where the synchronised run above is +51.4 %. Asserted: the
// published figure lies between the two bounds, the staggered one within 5 % below it.
TEST(CliServePublished, DeepSeekR1ContextStaggeringBound) {
  const nlohmann::json rows = testing::published_table("serving_throughput_mla.json");
  ASSERT_EQ(rows.size(), 1u);
  const double published = rows[0]["output_tokens_per_s"];
  const auto r = testing::run_cli(
      "serve --cluster dgx-h200-superpod --set nodes=1 --json "
      "--set scheduler.max_batch_tokens=2047 --serving " +
      std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/cpp/serving/specs/trtllm_deepseek_r1_h200.json");
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["requests"]["finished"], 5120);
  EXPECT_EQ(j["requests"]["preemptions"], 0);
  // Hand-worked iteration count: one prompt per iteration, so client c's first prompt (c = 1..1024) runs
  // in iteration c and its request finishes 2047 decode iterations later, in iteration c + 2047; the
  // successor arrives at that iteration's end, after the next iteration was started (an iteration's end
  // is processed before an arrival at the same instant), so it prefills in iteration c + 2049. Five
  // requests per client: the last (client 1024's fifth) prefills in 1024 + 4 x 2049 and finishes 2047
  // iterations later.
  EXPECT_EQ(j["requests"]["iterations"], 1024 + 4 * 2049 + 2047);
  const double error = j["throughput"]["output_tokens_per_s"].get<double>() / published - 1.0;
  EXPECT_LT(error, 0.0) << error;
  EXPECT_GT(error, -0.05) << error;
}

}  // namespace
}  // namespace clustersim
