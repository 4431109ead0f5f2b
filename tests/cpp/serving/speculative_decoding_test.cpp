// Speculative decoding: the closed form of the expected tokens per verify step (Leviathan et al. 2023),
// alpha = 0 giving one token per step, and a hand-worked one-request timeline.
#include "sim/serving/speculative_decoding.hpp"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../spec_error_of.hpp"
#include "serving_test_support.hpp"
#include "sim/hardware/calibration_profile.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/serving/serving_engine.hpp"
#include "topologies/cluster_spec.hpp"

namespace clustersim {
namespace {

using testing::LinearIterationModel;
using testing::test_serving_spec;

TEST(SpeculativeDecoding, ExpectedTokensPerStepClosedForm) {
  EXPECT_DOUBLE_EQ(expected_tokens_per_step(0.5, 2), 1.75);      // (1 - 1/8) / (1/2)
  EXPECT_NEAR(expected_tokens_per_step(0.8, 4), 3.3616, 1e-12);  // (1 - 0.32768) / 0.2
  EXPECT_EQ(expected_tokens_per_step(0.0, 5), 1.0);              // every draft rejected: the verify's token
  EXPECT_EQ(expected_tokens_per_step(1.0, 5), 6.0);              // every draft accepted: k + 1
  EXPECT_EQ(expected_tokens_per_step(0.7, 0), 1.0);              // no draft: plain decoding
  // The geometric series it sums: 1 + alpha + ... + alpha^k.
  double sum = 0.0;
  for (int i = 0; i <= 7; ++i)
    sum += std::pow(0.6, i);
  EXPECT_NEAR(expected_tokens_per_step(0.6, 7), sum, 1e-12);
}

ServingSpec speculative_spec(int k, double alpha) {
  ServingSpec s = test_serving_spec("continuous", 1000, 8, 16);
  s.speculative.tokens = k;
  s.speculative.acceptance_rate = alpha;
  return s;
}

// One request, prompt 10, output 7; served model 10 ms + 1 ms per token, draft 2 ms + 0.1 ms per token;
// k = 2, alpha = 0.5: E = 1.75.
//   0: prefill, no decode to speculate: 10 + 10 ms (served) + 2 + 1 ms (draft) -> 0.023, token 1.
//   each step: verify 3 tokens 10 + 3 = 13 ms, draft 2 passes of one token 2 x 2.1 ms: 17.2 ms.
//   credit 1.75 -> 1 token (0.0402, 2 tokens), 2.5 -> 2 (0.0574, 4), 2.25 -> 2 (0.0746, 6),
//   2.0 -> 2 but one left: 1 (0.0918, 7: done; a truncated step). 4 steps, 6 tokens.
TEST(SpeculativeDecoding, OneRequestTimelineByHand) {
  const LinearIterationModel served(0.010, 0.001, 1000);
  const LinearIterationModel draft(0.002, 0.0001, 1000);
  const std::vector<RequestArrival> one = {{0.0, 10, 7}};
  const ServingResult r =
      run_serving(speculative_spec(2, 0.5), ServingModels{served, nullptr, nullptr, 0.0, &draft}, one);
  ASSERT_EQ(r.summary.finished, 1);
  EXPECT_NEAR(r.requests[0].first_token_s, 0.023, 1e-12);
  EXPECT_NEAR(r.requests[0].finish_s, 0.0918, 1e-12);
  EXPECT_EQ(r.speculative.steps, 4);
  EXPECT_EQ(r.speculative.tokens, 6);
  EXPECT_EQ(r.speculative.truncated_steps, 1);
  EXPECT_EQ(r.speculative.expected_tokens_per_step, 1.75);
  EXPECT_EQ(r.summary.iterations, 5);
  // Mean gap between tokens: (0.0918 - 0.023) / 6.
  EXPECT_NEAR(r.requests[0].tbt_sum_s, 0.0918 - 0.023, 1e-12);

  // alpha = 0: one token per step, each step still paying the draft and the 3-token verify: 6 steps.
  const ServingResult none =
      run_serving(speculative_spec(2, 0.0), ServingModels{served, nullptr, nullptr, 0.0, &draft}, one);
  EXPECT_EQ(none.speculative.steps, 6);
  EXPECT_EQ(none.speculative.tokens, 6);
  EXPECT_NEAR(none.requests[0].finish_s, 0.023 + 6 * 0.0172, 1e-12);
}

// Over many requests the tokens per step approach E (each request's credit owes less than one token).
TEST(SpeculativeDecoding, TokensPerStepIsTheExpectation) {
  std::vector<RequestArrival> many;
  for (int i = 0; i < 200; ++i)
    many.push_back({0.01 * i, 50, 1001});
  const LinearIterationModel served(0.010, 0.0001, 1 << 20);
  const LinearIterationModel draft(0.001, 0.00001, 1 << 20);
  const ServingResult r =
      run_serving(speculative_spec(4, 0.8), ServingModels{served, nullptr, nullptr, 0.0, &draft}, many);
  EXPECT_EQ(r.summary.finished, 200);
  // 1000 tokens after the first per request; per request at most one step short of 1000 / E.
  const double per_step = static_cast<double>(r.speculative.tokens) / static_cast<double>(r.speculative.steps);
  EXPECT_NEAR(per_step, 3.3616, 3.3616 * 0.003);
  EXPECT_EQ(r.speculative.tokens, 200 * 1000);
}

// The draft's weights and KV cache come out of the KV budget (vLLM's split_num_cache_blocks_evenly).
// Target Llama-3-8B in bf16 on one H100 (docs/serving_iteration_model.md's worked example): KV cache
// 60,035,791,257.6 B at 131,072 B per token, 458,036 tokens. Draft Llama-3.2-1B's shape (16 layers,
// hidden 2048, 32 heads of 64, 8 KV heads, ffn 8192, vocabulary 128256, untied): a layer's linear
// weights 2048 x (2048 + 2 x 512) + 2048 x 2048 + 3 x 2048 x 8192 = 60,817,408 x 2 B plus its norms
// 2 x 2048 x 2 B = 121,643,008 B; 16 layers 1,946,288,128 B, embedding and LM head 128256 x 2048 x 2 B
// each, the final norm 4,096 B: 2,996,965,376 B. Its KV per token 2 x 16 x 8 x 64 x 2 = 32,768 B.
// Capacity: floor((60,035,791,257.6 - 2,996,965,376) / (131,072 + 32,768)) = floor(348,137.4) = 348,137.
TEST(SpeculativeDecoding, DraftWeightsAndKvComeOutOfTheKvBudget) {
  const GpuSpec gpu = testing::calibrated_gpu("h100-sxm5-80gb");
  const ClusterSpec cluster = load_cluster_spec("dgx-h100");
  ReplicaConfig target;
  target.model = testing::llama2(false);
  target.model.kv_heads = 8;
  target.model.ffn_hidden = 14336;
  target.model.vocab = 128256;
  target.model.seq_len = 8192;
  ReplicaConfig draft = target;
  draft.model.layers = 16;
  draft.model.hidden = 2048;
  draft.model.ffn_hidden = 8192;
  std::unique_ptr<IterationModel> model = make_iteration_model(target, gpu, cluster);
  const auto draft_model = make_iteration_model(draft, gpu, cluster);
  ASSERT_EQ(model->memory().kv_capacity_tokens, 458036);
  EXPECT_DOUBLE_EQ(draft_model->memory().weights_bytes, 2996965376.0);
  EXPECT_DOUBLE_EQ(draft_model->memory().kv_bytes_per_token, 32768.0);
  const std::vector<IterationEntry> batch{{512, 0}, {1, 700}};
  const double before_s = model->iteration_time(batch).time_s;
  model = with_draft_memory(std::move(model), draft_model->memory());
  const ReplicaMemory& m = model->memory();
  EXPECT_NEAR(m.kv_cache_bytes, 60035791257.6 - 2996965376.0, 1.0);
  EXPECT_DOUBLE_EQ(m.kv_bytes_per_token, 163840.0);
  EXPECT_EQ(m.kv_capacity_tokens, 348137);
  EXPECT_DOUBLE_EQ(m.draft_weights_bytes, 2996965376.0);
  EXPECT_DOUBLE_EQ(m.draft_kv_bytes_per_token, 32768.0);
  EXPECT_DOUBLE_EQ(m.weights_bytes, 16060522496.0);                 // the target's own line is unchanged
  EXPECT_DOUBLE_EQ(model->iteration_time(batch).time_s, before_s);  // and so are its iteration times
  // A draft whose weights exceed the KV budget is refused with the lines
  ReplicaMemory huge = draft_model->memory();
  huge.weights_bytes = 61e9;
  const SpecError e = testing::spec_error_of([&] { memory_with_draft(model->memory(), huge); });
  EXPECT_EQ(e.json_path(), "/speculative/draft_model");
  EXPECT_NE(std::string(e.what()).find("leaves no KV cache"), std::string::npos) << e.what();
}

TEST(SpeculativeDecoding, SpecKeys) {
  const std::string traffic =
      R"("traffic": {"rate_rps": 2, "duration_s": 10, "prompt": {"mean": 100}, "output": {"mean": 10}})";
  const ServingSpec s = parse_serving_spec(
      R"({"model": "gpt3-175b", "speculative": {"draft_model": "gpt3-1.3b", "tokens": 4, "acceptance_rate": 0.7}, )" +
          traffic + "}",
      "s.json");
  EXPECT_EQ(s.speculative.tokens, 4);
  EXPECT_EQ(s.speculative.draft.layers, 24);  // GPT-3 1.3B (Brown et al. 2020, table 2.1)
  EXPECT_EQ(draft_replica_config(s).model.layers, 24);
  const SpecError no_draft = testing::spec_error_of([&] {
    parse_serving_spec(R"({"model": "gpt3-175b", "speculative": {"tokens": 4}, )" + traffic + "}", "s.json");
  });
  EXPECT_EQ(no_draft.json_path(), "/speculative/tokens");
  const SpecError bad = testing::spec_error_of([&] {
    parse_serving_spec(
        R"({"model": "gpt3-175b", "speculative": {"draft_model": "no-such", "tokens": 4}, )" + traffic + "}", "s.json");
  });
  EXPECT_EQ(bad.json_path(), "/speculative/draft_model");
  const SpecError alpha = testing::spec_error_of([&] {
    parse_serving_spec(R"({"model": "gpt3-175b", "speculative": {"draft_model": "gpt3-1.3b", "tokens": 4,
        "acceptance_rate": 1.5}, )" +
                           traffic + "}",
                       "s.json");
  });
  EXPECT_EQ(alpha.json_path(), "/speculative/acceptance_rate");
}

}  // namespace
}  // namespace clustersim
