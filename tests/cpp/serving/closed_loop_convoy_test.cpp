// Closed-loop clients with equal lengths lock into a convoy (docs/serving.md, "Why closed-loop clients
// with fixed lengths stay in step"; the NIM latency rows): the lock is in iterations, so a request's
// successor is sent at the end of the iteration that prefills another client's prompt and waits all of
// the next one; output lengths that differ by a few tokens break it.
#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "serving_test_support.hpp"
#include "sim/serving/serving_engine.hpp"
#include "sim/serving/serving_traffic.hpp"

namespace clustersim {
namespace {

using testing::LinearIterationModel;
using testing::test_serving_spec;

constexpr int kClients = 5;
constexpr int kRequests = 40 * kClients;
constexpr std::int32_t kPrompt = 1000;

// In-flight batching with a budget under two prompts (1500 tokens: TensorRT-LLM's max_num_tokens 8192
// against 5000-token prompts, scaled), an iteration of 0.010 s + 0.0004 s a token: a prompt's iteration
// 0.41 s and more, a decode of 5 requests 0.012 s (the NIM row's 0.43 s and 20 ms).
ServingResult run_closed_loop(const std::vector<std::int32_t>& outputs) {
  ServingSpec spec = test_serving_spec("inflight", 1500, 64, 16);
  spec.traffic.arrival = "closed";
  spec.traffic.concurrency = kClients;
  spec.traffic.requests = kRequests;
  std::vector<RequestArrival> arrivals(kRequests, RequestArrival{kClosedLoopPending_s, kPrompt, 50, -1, 0.0});
  for (int i = 0; i < kRequests; ++i) {
    arrivals[i].output_tokens = outputs[i % outputs.size()];
    if (i < kClients) arrivals[i].arrival_s = 0.0;
  }
  const LinearIterationModel model(0.010, 0.0004, 1 << 24);
  return run_serving(spec, model, arrivals);
}

struct Convoy {
  double locked_fraction = 0.0;  // of the second half's requests: sent as another's prompt iteration ended
  double mean_ttft_s = 0.0;      // of the second half's requests
};

Convoy measure(const ServingResult& r) {
  std::vector<double> first_tokens;
  for (const auto& q : r.requests)
    first_tokens.push_back(q.first_token_s);
  std::sort(first_tokens.begin(), first_tokens.end());
  Convoy c;
  int n = 0, locked = 0;
  for (std::size_t i = r.requests.size() / 2; i < r.requests.size(); ++i, ++n) {
    const auto& q = r.requests[i];
    c.mean_ttft_s += q.first_token_s - q.arrival_s;
    const auto at = std::lower_bound(first_tokens.begin(), first_tokens.end(), q.arrival_s - 1e-9);
    if (at != first_tokens.end() && std::abs(*at - q.arrival_s) < 1e-9) ++locked;
  }
  c.mean_ttft_s /= n;
  c.locked_fraction = double(locked) / n;
  return c;
}

// Equal outputs of 50 tokens: the requests whose prompts ran back to back decode in the same iterations,
// so they leave one decode apart, each in the iteration that prefills another client's prompt: its
// successor is sent as that iteration ends, when the queued prompt's iteration starts, and waits all of
// it. 3 of the 5 sends of a round are so locked (measured 0.600 of the second half), and the mean TTFT
// is above 1.5 prompt iterations (0.41 s alone: 0.615 s; measured 0.743 s).
TEST(ClosedLoopConvoy, EqualLengthsLockIntoAConvoy) {
  const Convoy c = measure(run_closed_loop({50}));
  EXPECT_GE(c.locked_fraction, 3.0 / 5.0 - 1e-12);
  EXPECT_GT(c.mean_ttft_s, 0.615);
}

// Outputs of 47 .. 53 tokens (at most 3 decode iterations either way, 6 % of the output): a pair's
// requests no longer leave in the same prompt iteration's shadow, the lock breaks (measured 0.030 of the
// sends locked; asserted at most 0.1) and the mean TTFT falls by over a quarter against equal lengths'
// (measured 0.504 s against 0.743 s, 32 % lower).
TEST(ClosedLoopConvoy, OutputLengthsThatDifferBreakIt) {
  const Convoy equal = measure(run_closed_loop({50}));
  const Convoy spread = measure(run_closed_loop({50, 48, 52, 49, 51, 47, 53}));
  EXPECT_LE(spread.locked_fraction, 0.1);
  EXPECT_LT(spread.mean_ttft_s, 0.75 * equal.mean_ttft_s);
}

}  // namespace
}  // namespace clustersim
