// Preemption by swap to host memory (vLLM's PreemptionMode.SWAP): a hand-worked two-request case where
// the swap-out and swap-in each take blocks x block_size x KV bytes per token (per GPU) / host-link
// bandwidth; the fallback to recompute when the host space is full; the spec's keys.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../spec_error_of.hpp"
#include "serving_test_support.hpp"
#include "sim/serving/serving_engine.hpp"

namespace clustersim {
namespace {

using testing::test_serving_spec;

// 10 ms + 1 ms per token; 16 tokens of KV cache (4 blocks of 4); 1,000 bytes of KV per token per GPU.
class SwapTestModel final : public IterationModel {
 public:
  SwapTestModel() {
    memory_.kv_capacity_tokens = 16;
    memory_.kv_bytes_per_token = 1000.0;
  }
  IterationTime iteration_time(std::span<const IterationEntry> batch) const override {
    double tokens = 0;
    for (const IterationEntry& e : batch)
      tokens += static_cast<double>(e.new_tokens);
    IterationTime t;
    t.time_s = t.compute_s = 0.010 + 0.001 * tokens;
    return t;
  }
  const ReplicaMemory& memory() const override { return memory_; }

 private:
  ReplicaMemory memory_;
};

ServingSpec swap_spec(double swap_space_GiB) {
  ServingSpec s = test_serving_spec("continuous", 100, 8, 4);
  s.preemption = "swap";
  s.swap_space_GiB = swap_space_GiB;
  return s;
}

// serving_engine_test's PreemptsExactlyWhenTheBlocksRunOut with swap, host link 1 MB/s: a block is
// 4 tokens x 1,000 bytes = 4,000 bytes, 4 ms.
//   0 -> 14 prefill A; 14 -> 28 prefill B; 28 .. 76 both decode (4 x 12 ms).
//   76: A needs a 3rd block: B (2 blocks, 8 tokens computed) is swapped out; A decodes alone:
//       11 ms + the swap-out of 2 blocks (8 ms) -> 95, A done.
//   95: B is swapped in (2 blocks, 8 ms) and decodes its 6th token (it kept its 8 computed tokens):
//       11 + 8 -> 114, done. (By recompute it re-prefilled 9 tokens: done at 106.)
TEST(SwapPreemption, SwapOutAndInTakeBytesOverTheHostLink) {
  const std::vector<RequestArrival> two = {{0.0, 4, 6}, {0.0, 4, 6}};
  const SwapTestModel model;
  const ServingResult r = run_serving(swap_spec(1.0), ServingModels{model, nullptr, nullptr, 1e6}, two);
  ASSERT_EQ(r.summary.finished, 2);
  EXPECT_EQ(r.summary.preemptions, 1);
  EXPECT_NEAR(r.requests[0].finish_s, 0.095, 1e-12);
  EXPECT_NEAR(r.requests[1].finish_s, 0.114, 1e-12);
  const SwapStats& x = r.swap;
  EXPECT_EQ(x.swap_outs, 1);
  EXPECT_EQ(x.swap_ins, 1);
  EXPECT_EQ(x.blocks_out, 2);
  EXPECT_EQ(x.blocks_in, 2);
  EXPECT_EQ(x.bytes_per_gpu, 16000.0);
  EXPECT_NEAR(x.time_s, 0.016, 1e-15);  // 16,000 bytes / 1e6 bytes/s
  EXPECT_EQ(x.recompute_fallbacks, 0);
  // 1 GiB per GPU / 1,000 bytes per token = 1,073,741 tokens = 268,435 blocks of 4.
  EXPECT_EQ(x.host_blocks_per_replica, 268435);
}

// Host space of one block (4,000 bytes < 2 blocks): B cannot be swapped and is recomputed, exactly as
// with preemption by recompute (done at 87 and 106 ms).
TEST(SwapPreemption, FullHostSpaceFallsBackToRecompute) {
  const std::vector<RequestArrival> two = {{0.0, 4, 6}, {0.0, 4, 6}};
  const SwapTestModel model;
  const ServingResult r =
      run_serving(swap_spec(4000.0 / 1073741824.0), ServingModels{model, nullptr, nullptr, 1e6}, two);
  EXPECT_EQ(r.swap.host_blocks_per_replica, 1);
  EXPECT_EQ(r.swap.recompute_fallbacks, 1);
  EXPECT_EQ(r.swap.swap_outs, 0);
  EXPECT_NEAR(r.requests[0].finish_s, 0.087, 1e-12);
  EXPECT_NEAR(r.requests[1].finish_s, 0.106, 1e-12);
}

// Under pressure every request is served, swaps in equal swaps out, and host blocks come back.
TEST(SwapPreemption, EveryRequestServedUnderPressure) {
  for (const char* scheduler : {"continuous", "chunked_prefill"}) {
    SCOPED_TRACE(scheduler);
    std::vector<RequestArrival> many;
    for (int i = 0; i < 60; ++i)
      many.push_back({0.001 * i, 3 + i % 5, 2 + i % 7});
    ServingSpec s = swap_spec(1.0);
    s.scheduler = scheduler;
    const SwapTestModel model;
    const ServingResult r = run_serving(s, ServingModels{model, nullptr, nullptr, 1e9}, many);
    EXPECT_EQ(r.summary.finished, 60);
    EXPECT_GT(r.swap.swap_outs, 0);
    EXPECT_EQ(r.swap.swap_ins, r.swap.swap_outs);
    EXPECT_EQ(r.swap.blocks_in, r.swap.blocks_out);
  }
}

TEST(SwapPreemption, SpecKeys) {
  const std::string traffic =
      R"("traffic": {"rate_rps": 2, "duration_s": 10, "prompt": {"mean": 100}, "output": {"mean": 10}})";
  const ServingSpec s = parse_serving_spec(
      R"({"model": "llama2-7b", "scheduler": {"preemption": "swap"}, "replica": {"swap_space_GiB": 16}, )" + traffic +
          "}",
      "s.json");
  EXPECT_EQ(s.preemption, "swap");
  EXPECT_EQ(s.swap_space_GiB, 16.0);
  EXPECT_EQ(parse_serving_spec(R"({"model": "llama2-7b", )" + traffic + "}", "s.json").preemption, "recompute");
  const SpecError e = testing::spec_error_of([&] {
    parse_serving_spec(R"({"model": "llama2-7b", "scheduler": {"preemption": "drop"}, )" + traffic + "}", "s.json");
  });
  EXPECT_EQ(e.json_path(), "/scheduler/preemption");
}

}  // namespace
}  // namespace clustersim
