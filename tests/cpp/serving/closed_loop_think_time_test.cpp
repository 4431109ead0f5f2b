// A closed loop whose clients pause before each request (traffic.think_time_s): the sends' order, the
// pauses' distribution, and the interactive response time law of a closed system.
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

ServingSpec closed_loop(std::int64_t clients, std::int64_t requests, double think_s) {
  ServingSpec spec = test_serving_spec("continuous", 1000, 64, 4);
  spec.traffic.arrival = "closed";
  spec.traffic.concurrency = clients;
  spec.traffic.requests = requests;
  spec.traffic.think_time_s = think_s;
  spec.traffic.prompt.mean = 10;
  spec.traffic.output.mean = 1;
  return spec;
}

// Two clients, requests of 10 prompt tokens and 1 output token: one prefill iteration of 0.010 +
// 0.001 x 10 = 0.020 s alone. The first two are sent at their pauses, 0.1 and 0.2 s, and leave at 0.12
// and 0.22. The first departure releases a send after the third request's pause (0.5 s: due 0.62),
// the second after the fourth's (0.05 s: due 0.27), so the next pending request (index 2) goes at
// 0.27, the one after at 0.62: sends are taken in order of time, not of release.
TEST(ClosedLoopThinkTime, SendsAreDueAfterThePausesInOrderOfTime) {
  const ServingSpec spec = closed_loop(2, 4, 1.0);
  std::vector<RequestArrival> arrivals(4, RequestArrival{kClosedLoopPending_s, 10, 1, -1, 0.0});
  arrivals[0].arrival_s = 0.1;
  arrivals[1].arrival_s = 0.2;
  arrivals[2].think_s = 0.5;
  arrivals[3].think_s = 0.05;
  const LinearIterationModel model(0.010, 0.001, 1 << 20);
  const ServingResult r = run_serving(spec, model, arrivals);
  const std::vector<double> sent{0.1, 0.2, 0.27, 0.62};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(r.requests[i].arrival_s, sent[i], 1e-12) << i;
    EXPECT_NEAR(r.requests[i].finish_s, sent[i] + 0.020, 1e-12) << i;
  }
  // without think time the same departures send at once, 0.12 and 0.22
  ServingSpec none = spec;
  none.traffic.think_time_s = 0.0;
  arrivals[0].arrival_s = arrivals[1].arrival_s = 0.0;
  const ServingResult n = run_serving(none, model, arrivals);
  // both sent at 0: the first starts the idle replica alone (an arrival is taken as it comes) and leaves
  // at 0.020, sending the third, which misses the iteration that starts then with the second (an
  // iteration's end comes before an arrival at the same instant): the second leaves at 0.040
  EXPECT_NEAR(n.requests[2].arrival_s, 0.020, 1e-12);
  EXPECT_NEAR(n.requests[3].arrival_s, 0.040, 1e-12);
}

// The pauses are exponential with the mean asked (a fifth random stream: prompts, outputs unchanged),
// the first `concurrency` requests go at their pauses in order of time (lengths where they were drawn).
TEST(ClosedLoopThinkTime, PausesAreExponentialFromTheirOwnStream) {
  ServingSpec spec = closed_loop(8, 200000, 2.0);
  spec.traffic.prompt = {"uniform", 0.0, 0.0, 16, 400};
  const std::vector<RequestArrival> a = make_traffic(spec.traffic);
  ServingSpec plain = spec;
  plain.traffic.think_time_s = 0.0;
  const std::vector<RequestArrival> b = make_traffic(plain.traffic);
  double sum = 0.0, squares = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sum += a[i].think_s;
    squares += a[i].think_s * a[i].think_s;
    EXPECT_EQ(a[i].prompt_tokens, b[i].prompt_tokens);
  }
  const double mean = sum / double(a.size()), variance = squares / double(a.size()) - mean * mean;
  EXPECT_NEAR(mean, 2.0, 0.02);                 // standard error 2 / sqrt(200,000) = 0.0045
  EXPECT_NEAR(std::sqrt(variance), 2.0, 0.03);  // exponential: standard deviation = mean
  std::vector<double> first;
  for (std::size_t i = 0; i < 8; ++i)
    first.push_back(a[i].think_s);
  std::sort(first.begin(), first.end());
  for (std::size_t i = 0; i < 8; ++i)
    EXPECT_EQ(a[i].arrival_s, first[i]) << i;
  EXPECT_EQ(a[8].arrival_s, kClosedLoopPending_s);
}

// The interactive response time law of a closed system (Denning and Buzen 1978): N clients, each
// alternating a request of response time R and a pause Z, make X = N / (R + Z) requests per second.
// 16 clients, Z = 0.5 s, 40,000 requests on one replica: the measured throughput is N / (mean E2E +
// mean pause) within 1 % (the start and the drain at the end are the difference).
TEST(ClosedLoopThinkTime, InteractiveResponseTimeLaw) {
  ServingSpec spec = closed_loop(16, 40000, 0.5);
  spec.traffic.prompt = {"uniform", 0.0, 0.0, 16, 400};
  spec.traffic.output = {"uniform", 0.0, 0.0, 1, 40};
  const std::vector<RequestArrival> arrivals = make_traffic(spec.traffic);
  const LinearIterationModel model(0.010, 0.0001, 1 << 20);
  const ServingResult r = run_serving(spec, model, arrivals);
  double e2e = 0.0, think = 0.0;
  for (std::size_t i = 0; i < r.requests.size(); ++i) {
    ASSERT_EQ(r.requests[i].status, RequestStatus::finished);
    e2e += r.requests[i].finish_s - r.requests[i].arrival_s;
    think += arrivals[i].think_s;
  }
  const double n = double(r.requests.size());
  const double throughput = n / r.summary.makespan_s;
  EXPECT_NEAR(throughput * (e2e / n + think / n), 16.0, 0.16);
  // and the clients are no longer in step: requests find the replica with fewer than 16 in it
  EXPECT_LT(r.summary.mean_requests_in_system, 16.0 * 0.9);
}

}  // namespace
}  // namespace clustersim
