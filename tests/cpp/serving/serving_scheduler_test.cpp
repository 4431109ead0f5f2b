// The three policies on one hand-worked case of three requests (one replica, iteration time
// 10 ms + 1 ms per token, KV blocks of 4 tokens, 1024 tokens of KV cache):
//   R0 arrives at 0 ms, prompt 4, output 3;  R1 at 5 ms, prompt 8, output 2;  R2 at 5 ms, prompt 2, output 1.
// Times in ms in the comments; each iteration lists its tokens.
#include <vector>

#include <gtest/gtest.h>

#include "serving_test_support.hpp"
#include "sim/serving/serving_engine.hpp"

namespace clustersim {
namespace {

using testing::LinearIterationModel;
using testing::test_serving_spec;

const std::vector<RequestArrival> kThree = {{0.000, 4, 3}, {0.005, 8, 2}, {0.005, 2, 1}};

struct Expected {
  double first_token_s;
  double finish_s;
  double tbt_max_s;
};

void expect_requests(const ServingResult& r, const std::vector<Expected>& want) {
  ASSERT_EQ(r.requests.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("request " + std::to_string(i));
    EXPECT_EQ(r.requests[i].status, RequestStatus::finished);
    EXPECT_NEAR(r.requests[i].first_token_s, want[i].first_token_s, 1e-12);
    EXPECT_NEAR(r.requests[i].finish_s, want[i].finish_s, 1e-12);
    EXPECT_NEAR(r.requests[i].tbt_max_s, want[i].tbt_max_s, 1e-12);
  }
}

// The three requests under `scheduler` (its budgets of tokens and requests per iteration): each
// request's times and the iteration count, asserted; the result for the test's own checks.
ServingResult run_three(const char* scheduler, std::int64_t max_batch_tokens, std::int64_t max_batch_requests,
                        const std::vector<Expected>& want, int iterations) {
  SCOPED_TRACE(scheduler);
  const LinearIterationModel model(0.010, 0.001, 1024);
  ServingResult r = run_serving(test_serving_spec(scheduler, max_batch_tokens, max_batch_requests, 4), model, kThree);
  expect_requests(r, want);
  EXPECT_EQ(r.summary.iterations, iterations);
  return r;
}

TEST(ServingScheduler, StaticBatchRunsToCompletionBeforeTheNext) {
  // 0: R0 alone (the only one queued), prefill 4 -> 14.  14: decode R0, 1 -> 25.  25: decode R0 -> 36,
  // R0 done.  36: batch {R1, R2}: prefill 8 + 2 = 10 tokens, 20 -> 56, R2 done.  56: decode R1 -> 67.
  const ServingResult r =
      run_three("static", 100, 2, {{0.014, 0.036, 0.011}, {0.056, 0.067, 0.011}, {0.056, 0.056, 0.0}}, 5);
  EXPECT_EQ(r.summary.finished, 3);
  // Tokens: R0 3, R1 2, R2 1.
  EXPECT_EQ(r.summary.output_tokens, 6);
  EXPECT_EQ(r.summary.input_tokens, 14);
  EXPECT_NEAR(r.summary.makespan_s, 0.067, 1e-12);
}

TEST(ServingScheduler, ContinuousPrefillsNewRequestsBetweenDecodes) {
  // 0: prefill R0, 4 -> 14.  14: R1, R2 queued: prefill 10 -> 34 (R1's first token, R2 done).
  // 34: decode R0, R1: 2 tokens, 12 -> 46 (R1 done; R0's gap 46 - 14 = 32).  46: decode R0 -> 57.
  const ServingResult r =
      run_three("continuous", 100, 4, {{0.014, 0.057, 0.032}, {0.034, 0.046, 0.012}, {0.034, 0.034, 0.0}}, 4);
  EXPECT_EQ(r.summary.preemptions, 0);
  // R0's gaps 32 and 11 ms: mean 21.5.
  EXPECT_NEAR(r.requests[0].tbt_sum_s / 2, 0.0215, 1e-12);
}

TEST(ServingScheduler, ChunkedPrefillFillsTheBudgetAfterDecodes) {
  // Budget 6 tokens.  0: R0's prompt, 4 -> 14.  14: decode R0 (1) + R1's first chunk (5): 16 -> 30.
  // 30: decode R0 (1) + R1's last 3 + R2's 2: 16 -> 46 (R0 done, R1's first token, R2 done).
  // 46: decode R1 -> 57.
  const ServingResult r =
      run_three("chunked_prefill", 6, 4, {{0.014, 0.046, 0.016}, {0.046, 0.057, 0.011}, {0.046, 0.046, 0.0}}, 4);
  // TTFT: R0 14, R1 41, R2 41 ms; nearest rank p50 of 3 values is the 2nd: 41.
  EXPECT_NEAR(r.summary.ttft.p50_s, 0.041, 1e-12);
  EXPECT_NEAR(r.summary.ttft.mean_s, (0.014 + 0.041 + 0.041) / 3, 1e-12);
}

TEST(ServingScheduler, InflightBatchesWholePromptsWithGenerationTokens) {
  // Budget 10 tokens.  0: R0's prompt, 4 -> 14.  14: generation R0 (1) + R1's whole prompt (8); R2's 2
  // tokens do not fit the 1 left and a prompt within the budget is not split: 9 tokens, 19 -> 33 (R0's
  // 2nd token, R1's first).  33: generation R0, R1 (2) + R2's prompt (2): 14 -> 47 (all done).
  // (chunked_prefill would take R2's first token at 14.)
  const ServingResult r =
      run_three("inflight", 10, 4, {{0.014, 0.047, 0.019}, {0.033, 0.047, 0.014}, {0.047, 0.047, 0.0}}, 3);
  EXPECT_EQ(r.summary.preemptions, 0);
}

TEST(ServingScheduler, InflightReservesPromptAndOutputBlocksSoNothingIsPreempted) {
  // KV cache of 16 tokens = 4 blocks of 4. Three requests at 0, prompt 4, output 5: each holds
  // 4 + 5 - 1 = 8 tokens = 2 blocks, reserved at admission (GUARANTEED_NO_EVICT). An idle replica
  // schedules on the first arrival: 0: A's prompt, 4 -> 14.  14: generation A (1) + B's prompt (4),
  // B takes the last 2 blocks, C waits: 15 -> 29.  29, 41, 53: generation A, B (2 tokens, 12 each)
  // -> 41, 53, 65 (A's 5th token at 65: done, its blocks freed).  65: generation B + C's prompt: 15 -> 80
  // (B done, C's first token).  C alone: 91, 102, 113, 124.  Gaps: A 15 (14 -> 29), B 15 (65 -> 80).
  const LinearIterationModel model(0.010, 0.001, 16);
  const std::vector<RequestArrival> three = {{0.0, 4, 5}, {0.0, 4, 5}, {0.0, 4, 5}};
  const ServingResult r = run_serving(test_serving_spec("inflight", 100, 4, 4), model, three);
  expect_requests(r, {{0.014, 0.065, 0.015}, {0.029, 0.080, 0.015}, {0.080, 0.124, 0.011}});
  EXPECT_EQ(r.summary.iterations, 10);
  EXPECT_EQ(r.summary.preemptions, 0);
  // The continuous policy on the same case admits C too (its prompt's blocks are free) and preempts.
  const ServingResult c = run_serving(test_serving_spec("continuous", 100, 4, 4), model, three);
  EXPECT_GT(c.summary.preemptions, 0);
}

TEST(ServingScheduler, RegistryListsThePolicies) {
  EXPECT_EQ(serving_scheduler_names(),
            (std::vector<std::string>{"static", "continuous", "chunked_prefill", "inflight"}));
}

}  // namespace
}  // namespace clustersim
