// Automatic prefix caching (vLLM APC, SGLang RadixAttention): a hand-worked four-request case with a hit,
// LRU evictions and misses after them; the traffic's prefix groups; the spec's keys and errors.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../spec_error_of.hpp"
#include "serving_test_support.hpp"
#include "sim/serving/serving_engine.hpp"
#include "sim/serving/serving_traffic.hpp"

namespace clustersim {
namespace {

using testing::LinearIterationModel;
using testing::test_serving_spec;

ServingSpec caching_spec(bool on) {
  ServingSpec s = test_serving_spec("continuous", 1000, 8, 16);
  s.prefix_caching = on;
  s.traffic.prefix_groups = 2;
  s.traffic.prefix_tokens = 40;  // floor(40 / 16) = 2 full blocks shared (32 tokens)
  return s;
}

// One replica of 5 blocks of 16 tokens (80 tokens), 10 ms + 1 ms per token, continuous batching.
// A (0 s, group 0, prompt 40 + 10, output 2): prefill 50 -> 0.060 (4 blocks); it gives its first 2 blocks
//   to the cache; decode -> 0.071, done: frees its other 2; group 0 cached, unreferenced: free 3.
// B (1 s, group 0, prompt 40 + 20): hit, computed 32 in the 2 shared blocks; prefill 60 - 32 = 28 tokens
//   -> 1.038 (TTFT 38 ms instead of 70), 2 more blocks (free 1); decode -> 1.049; frees 2: free 3.
// C (2 s, group 1, prompt 40 + 30): miss; needs 5 blocks, 3 free: group 0 (2 blocks) evicted; prefill 70
//   -> 2.080, caches group 1; decode -> 2.091; frees 3: free 3.
// D (3 s, group 0, prompt 40 + 10): miss (evicted); needs 4: group 1 evicted; prefill 50 -> 3.060.
TEST(PrefixCaching, HitSkipsThePrefixAndLruEvicts) {
  std::vector<RequestArrival> four = {{0.0, 50, 2, 0}, {1.0, 60, 2, 0}, {2.0, 70, 2, 1}, {3.0, 50, 2, 0}};
  const LinearIterationModel five_blocks(0.010, 0.001, 80);
  const ServingResult r = run_serving(caching_spec(true), five_blocks, four);
  ASSERT_EQ(r.summary.finished, 4);
  EXPECT_NEAR(r.requests[0].first_token_s, 0.060, 1e-12);
  EXPECT_NEAR(r.requests[1].first_token_s - 1.0, 0.038, 1e-12);
  EXPECT_NEAR(r.requests[1].finish_s, 1.049, 1e-12);
  EXPECT_NEAR(r.requests[2].first_token_s - 2.0, 0.080, 1e-12);
  EXPECT_NEAR(r.requests[3].first_token_s - 3.0, 0.060, 1e-12);
  const PrefixCacheStats& x = r.prefix_cache;
  EXPECT_EQ(x.lookups, 4);
  EXPECT_EQ(x.hits, 1);
  EXPECT_EQ(x.saved_prefill_tokens, 32);
  EXPECT_EQ(x.lookup_prompt_tokens, 50 + 60 + 70 + 50);
  EXPECT_EQ(x.evictions, 2);
  EXPECT_EQ(r.summary.preemptions, 0);

  // Without caching B prefills its 60 tokens: TTFT 70 ms; nothing is looked up.
  const ServingResult off = run_serving(caching_spec(false), five_blocks, four);
  EXPECT_NEAR(off.requests[1].first_token_s - 1.0, 0.070, 1e-12);
  EXPECT_EQ(off.prefix_cache.lookups, 0);
}

// Two requests of one group queued at once: the second finds nothing cached at its arrival (the first has
// not computed the prefix yet) and prefills everything; the third, after both, hits.
TEST(PrefixCaching, OnlyComputedPrefixesAreShared) {
  std::vector<RequestArrival> three = {{0.0, 50, 2, 0}, {0.0, 50, 2, 0}, {1.0, 50, 2, 0}};
  const LinearIterationModel big(0.010, 0.001, 1600);
  const ServingResult r = run_serving(caching_spec(true), big, three);
  EXPECT_EQ(r.prefix_cache.hits, 1);
  EXPECT_NEAR(r.requests[2].first_token_s - 1.0, 0.010 + 0.001 * (50 - 32), 1e-12);
}

// Under memory pressure with many groups every request is still served (evictions, then preemptions).
TEST(PrefixCaching, EveryRequestIsServedUnderPressure) {
  for (const char* scheduler : {"continuous", "chunked_prefill", "inflight", "static"}) {
    SCOPED_TRACE(scheduler);
    TrafficSpec t;
    t.rate_rps = 40;
    t.requests = 1500;
    t.prefix_groups = 20;
    t.prefix_tokens = 200;
    t.prefix_zipf_s = 1.2;
    t.prompt = {"uniform", 0.0, 0.0, 1, 300};
    t.output = {"uniform", 0.0, 0.0, 1, 60};
    ServingSpec s = test_serving_spec(scheduler, 2048, 32, 16);
    s.prefix_caching = true;
    s.traffic = t;
    const LinearIterationModel small(0.005, 0.00005, 3000);
    const ServingResult r = run_serving(s, small, make_traffic(t));
    EXPECT_EQ(r.summary.finished, 1500);
    EXPECT_GT(r.prefix_cache.hits, 0);
    EXPECT_EQ(r.prefix_cache.lookups, 1500);
    EXPECT_LE(r.prefix_cache.saved_prefill_tokens, r.prefix_cache.hits * 192);  // 12 blocks of 16 at most
  }
}

// Prefix groups come from a fourth random stream: arrivals and outputs are those of the same traffic
// without prefixes, prompts are longer by exactly prefix_tokens; zipf_s 0 spreads the groups evenly.
TEST(PrefixCaching, TrafficPrefixGroups) {
  TrafficSpec t;
  t.rate_rps = 10;
  t.requests = 40000;
  t.prompt = {"uniform", 0.0, 0.0, 1, 100};
  t.output = {"uniform", 0.0, 0.0, 1, 100};
  const std::vector<RequestArrival> plain = make_traffic(t);
  t.prefix_groups = 4;
  t.prefix_tokens = 500;
  const std::vector<RequestArrival> grouped = make_traffic(t);
  ASSERT_EQ(plain.size(), grouped.size());
  std::vector<int> per_group(4, 0);
  for (std::size_t i = 0; i < plain.size(); ++i) {
    EXPECT_EQ(grouped[i].arrival_s, plain[i].arrival_s);
    EXPECT_EQ(grouped[i].output_tokens, plain[i].output_tokens);
    EXPECT_EQ(grouped[i].prompt_tokens, plain[i].prompt_tokens + 500);
    ASSERT_GE(grouped[i].prefix_group, 0);
    ASSERT_LT(grouped[i].prefix_group, 4);
    ++per_group[static_cast<std::size_t>(grouped[i].prefix_group)];
    EXPECT_EQ(plain[i].prefix_group, -1);
  }
  for (int n : per_group)  // 10,000 each; binomial sd sqrt(40000 x 0.25 x 0.75) = 87: within 5 sd
    EXPECT_NEAR(n, 10000, 435);
  // zipf s = 1 over 2 groups: P(0) = 1 / (1 + 1/2) = 2/3.
  t.prefix_groups = 2;
  t.prefix_zipf_s = 1.0;
  int zeros = 0;
  for (const RequestArrival& a : make_traffic(t))
    zeros += a.prefix_group == 0;
  EXPECT_NEAR(zeros / 40000.0, 2.0 / 3.0, 5 * std::sqrt(40000 * 2.0 / 9.0) / 40000);
}

TEST(PrefixCaching, SpecKeys) {
  const ServingSpec s = parse_serving_spec(
      R"({"model": "llama2-7b", "scheduler": {"prefix_caching": true}, "traffic": {"rate_rps": 2, "duration_s": 10,
          "prompt": {"mean": 100}, "output": {"mean": 10}, "prefix_groups": 8, "prefix_tokens": 1000,
          "prefix_zipf_s": 0.9}})",
      "s.json");
  EXPECT_TRUE(s.prefix_caching);
  EXPECT_EQ(s.traffic.prefix_groups, 8);
  EXPECT_EQ(s.traffic.prefix_tokens, 1000);
  EXPECT_EQ(s.traffic.prefix_zipf_s, 0.9);
  const SpecError no_len = testing::spec_error_of([] {
    parse_serving_spec(R"({"model": "llama2-7b", "traffic": {"rate_rps": 2, "duration_s": 10,
        "prompt": {"mean": 100}, "output": {"mean": 10}, "prefix_groups": 8}})",
                       "s.json");
  });
  EXPECT_EQ(no_len.json_path(), "/traffic/prefix_groups");
  const SpecError no_groups = testing::spec_error_of([] {
    parse_serving_spec(R"({"model": "llama2-7b", "traffic": {"rate_rps": 2, "duration_s": 10,
        "prompt": {"mean": 100}, "output": {"mean": 10}, "prefix_tokens": 8}})",
                       "s.json");
  });
  EXPECT_EQ(no_groups.json_path(), "/traffic/prefix_tokens");
}

}  // namespace
}  // namespace clustersim

namespace clustersim {
namespace {

// A trace names each request's prefix group (column prefix_id, optional); prefix_tokens is the groups'
// shared length. Bad ids are refused with the file, line and column.
TEST(PrefixCaching, TraceColumnPrefixId) {
  const std::vector<RequestArrival> csv = parse_request_trace(
      "arrival_s,prompt_tokens,output_tokens,prefix_id\n0.0,50,2,0\n1.0,60,2,0\n2.0,70,2,1\n3.0,50,2,0\n", "t.csv",
      false);
  ASSERT_EQ(csv.size(), 4u);
  EXPECT_EQ(csv[2].prefix_group, 1);
  const std::vector<RequestArrival> jsonl = parse_request_trace(
      "{\"arrival_s\": 0, \"prompt_tokens\": 50, \"output_tokens\": 2, \"prefix_id\": 3}\n"
      "{\"arrival_s\": 1, \"prompt_tokens\": 50, \"output_tokens\": 2}\n",
      "t.jsonl", true);
  EXPECT_EQ(jsonl[0].prefix_group, 3);
  EXPECT_EQ(jsonl[1].prefix_group, -1);
  EXPECT_EQ(parse_request_trace("arrival_s,prompt_tokens,output_tokens\n0,5,5\n", "t.csv", false)[0].prefix_group, -1);
  // The trace of HitSkipsThePrefixAndLruEvicts gives its figures.
  ServingSpec s = test_serving_spec("continuous", 1000, 8, 16);
  s.prefix_caching = true;
  s.traffic.prefix_tokens = 40;
  const ServingResult r = run_serving(s, LinearIterationModel(0.010, 0.001, 80), csv);
  EXPECT_EQ(r.prefix_cache.hits, 1);
  EXPECT_EQ(r.prefix_cache.evictions, 2);
  EXPECT_NEAR(r.requests[1].first_token_s - 1.0, 0.038, 1e-12);
  for (const char* bad : {"-1", "1.5", "x", "1048576"}) {
    const SpecError e = testing::spec_error_of([&] {
      parse_request_trace(std::string("arrival_s,prompt_tokens,output_tokens,prefix_id\n0,5,5,") + bad + "\n", "t.csv",
                          false);
    });
    EXPECT_EQ(e.file(), "t.csv");
    EXPECT_EQ(e.json_path(), "line 2/column prefix_id") << bad;
  }
  // A trace spec may give prefix_tokens, not the generated groups.
  const ServingSpec traced = parse_serving_spec(
      R"({"model": "llama2-7b", "traffic": {"trace": "t.csv", "prefix_tokens": 40}})", "/tmp/s.json");
  EXPECT_EQ(traced.traffic.prefix_tokens, 40);
  const SpecError groups = testing::spec_error_of([] {
    parse_serving_spec(R"({"model": "llama2-7b", "traffic": {"trace": "t.csv", "prefix_groups": 4}})", "/tmp/s.json");
  });
  EXPECT_EQ(groups.json_path(), "/traffic/prefix_groups");
}

}  // namespace
}  // namespace clustersim
