// Generated traffic (moments of the arrival and length distributions, determinism) and request trace
// files (good rows, and bad rows named by file, line and column).
#include "sim/serving/serving_traffic.hpp"

#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../spec_error_of.hpp"

namespace clustersim {
namespace {

using testing::spec_error_of;

TrafficSpec traffic(const char* arrival, double cv, std::int64_t requests) {
  TrafficSpec t;
  t.arrival = arrival;
  t.cv = cv;
  t.rate_rps = 10.0;
  t.requests = requests;
  t.prompt = {"fixed", 100};
  t.output = {"fixed", 10};
  return t;
}

// Mean and coefficient of variation of the inter-arrival times.
std::pair<double, double> gap_moments(const std::vector<RequestArrival>& a) {
  std::vector<double> g;
  double prev = 0.0;
  for (const RequestArrival& r : a) {
    g.push_back(r.arrival_s - prev);
    prev = r.arrival_s;
  }
  const double mean = std::accumulate(g.begin(), g.end(), 0.0) / static_cast<double>(g.size());
  double var = 0.0;
  for (const double x : g)
    var += (x - mean) * (x - mean);
  var /= static_cast<double>(g.size() - 1);
  return {mean, std::sqrt(var) / mean};
}

TEST(ServingTraffic, PoissonAndGammaArrivalsHaveTheirMoments) {
  // 200,000 gaps: the standard error of the mean is cv / sqrt(n) = 0.22 % (Poisson), 0.67 % (CV 3).
  const auto [mean, cv] = gap_moments(make_traffic(traffic("poisson", 1.0, 200000)));
  EXPECT_NEAR(mean, 0.1, 0.1 * 0.01);
  EXPECT_NEAR(cv, 1.0, 0.01);
  const auto [gmean, gcv] = gap_moments(make_traffic(traffic("gamma", 3.0, 200000)));
  EXPECT_NEAR(gmean, 0.1, 0.1 * 0.03);
  EXPECT_NEAR(gcv, 3.0, 0.1);
  const auto [smean, scv] = gap_moments(make_traffic(traffic("gamma", 0.5, 200000)));
  EXPECT_NEAR(smean, 0.1, 0.1 * 0.01);
  EXPECT_NEAR(scv, 0.5, 0.01);
}

TEST(ServingTraffic, DurationBoundsTheArrivals) {
  TrafficSpec t = traffic("poisson", 1.0, 0);
  t.duration_s = 1000.0;
  const std::vector<RequestArrival> a = make_traffic(t);
  EXPECT_LT(a.back().arrival_s, 1000.0);
  EXPECT_NEAR(static_cast<double>(a.size()), 10000.0, 300.0);  // 3 sigma = 3 sqrt(10^4)
}

TEST(ServingTraffic, LengthDistributions) {
  TrafficSpec t = traffic("poisson", 1.0, 100000);
  t.prompt = {"lognormal", 1000, 1.0, 1, 0, 1};
  t.output = {"uniform", 0, 0, 10, 20, 1};
  const std::vector<RequestArrival> a = make_traffic(t);
  double sum = 0.0;
  double sum2 = 0.0;
  int lo = 20;
  int hi = 10;
  for (const RequestArrival& r : a) {
    sum += r.prompt_tokens;
    sum2 += static_cast<double>(r.prompt_tokens) * r.prompt_tokens;
    lo = std::min(lo, r.output_tokens);
    hi = std::max(hi, r.output_tokens);
  }
  const double mean = sum / 1e5;
  const double cv = std::sqrt(sum2 / 1e5 - mean * mean) / mean;
  EXPECT_NEAR(mean, 1000.0, 10.0);  // 1 %: 3 standard errors of cv / sqrt(n)
  EXPECT_NEAR(cv, 1.0, 0.05);       // the sample CV of a lognormal converges slowly
  EXPECT_EQ(lo, 10);
  EXPECT_EQ(hi, 20);

  // Zipf with s = 1 on [1, 4]: P(k) = (1/k) / (1 + 1/2 + 1/3 + 1/4) = 12 / 25, 6 / 25, 4 / 25, 3 / 25.
  t.output = {"zipf", 0, 0, 1, 4, 1.0};
  std::vector<int> counts(5, 0);
  for (const RequestArrival& r : make_traffic(t))
    ++counts[r.output_tokens];
  EXPECT_NEAR(counts[1] / 1e5, 0.48, 0.005);
  EXPECT_NEAR(counts[2] / 1e5, 0.24, 0.005);
  EXPECT_NEAR(counts[3] / 1e5, 0.16, 0.005);
  EXPECT_NEAR(counts[4] / 1e5, 0.12, 0.005);
}

TEST(ServingTraffic, TheSeedFixesTheRequests) {
  TrafficSpec t = traffic("gamma", 2.0, 1000);
  t.prompt = {"lognormal", 500, 2.0, 1, 0, 1};
  const std::vector<RequestArrival> a = make_traffic(t);
  const std::vector<RequestArrival> b = make_traffic(t);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].arrival_s, b[i].arrival_s);
    ASSERT_EQ(a[i].prompt_tokens, b[i].prompt_tokens);
  }
  // The streams are independent: other prompt lengths leave the arrival times as they were.
  t.prompt = {"fixed", 7};
  const std::vector<RequestArrival> c = make_traffic(t);
  for (std::size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(a[i].arrival_s, c[i].arrival_s);
  // mt19937_64's 10,000th output for the default seed is fixed by the standard (C++11 26.5.5).
  std::mt19937_64 g;
  g.discard(9999);
  EXPECT_EQ(g(), 9981545732273789042ULL);
}

TEST(ServingTraffic, TraceFilesCsvAndJsonl) {
  const std::vector<RequestArrival> csv =
      parse_request_trace("id,arrival_s,prompt_tokens,output_tokens\n1,0.0,10,5\n\n2,0.5,20,1\n", "t.csv", false);
  ASSERT_EQ(csv.size(), 2u);
  EXPECT_EQ(csv[1].arrival_s, 0.5);
  EXPECT_EQ(csv[1].prompt_tokens, 20);
  const std::vector<RequestArrival> jsonl = parse_request_trace(
      "{\"arrival_s\": 0.25, \"prompt_tokens\": 3, \"output_tokens\": 4}\n\n{\"arrival_s\": 1, \"prompt_tokens\": 5, "
      "\"output_tokens\": 6}\n",
      "t.jsonl", true);
  ASSERT_EQ(jsonl.size(), 2u);
  EXPECT_EQ(jsonl[0].output_tokens, 4);
  EXPECT_EQ(jsonl[1].arrival_s, 1.0);
}

TEST(ServingTraffic, MalformedTraceRowsNameFileLineAndColumn) {
  struct Case {
    const char* text;
    bool jsonl;
    const char* path;
  };
  const Case cases[] = {
      {"arrival_s,prompt_tokens\n0,1\n", false, "line 1/column output_tokens"},
      {"arrival_s,prompt_tokens,output_tokens\n0,1,1\n0.5,abc,1\n", false, "line 3/column prompt_tokens"},
      {"arrival_s,prompt_tokens,output_tokens\n0,1,1\n0.5,2,0\n", false, "line 3/column output_tokens"},
      {"arrival_s,prompt_tokens,output_tokens\n0,1,1.5\n", false, "line 2/column output_tokens"},
      {"arrival_s,prompt_tokens,output_tokens\n1,1,1\n0.5,1,1\n", false, "line 3/column arrival_s"},
      {"arrival_s,prompt_tokens,output_tokens\n-1,1,1\n", false, "line 2/column arrival_s"},
      {"arrival_s,prompt_tokens,output_tokens\n1,1\n", false, "line 2/column arrival_s"},
      {"{\"arrival_s\": 0, \"prompt_tokens\": 1, \"output_tokens\": 1}\n{\"arrival_s\": 1, \"prompt_tokens\": 1,}\n",
       true, "line 2/column 37"},
      {"{\"arrival_s\": 0, \"prompt_tokens\": 1}\n", true, "line 1/column output_tokens"},
      {"{\"arrival_s\": 0, \"prompt_tokens\": \"7\", \"output_tokens\": 1}\n", true, "line 1/column prompt_tokens"},
      // A number beyond a double (the parser's out_of_range, found by fuzz_request_trace): a bad row at
      // the column where the number starts (1-based: `{"arrival_s": ` is 14 bytes), not an escaped exception.
      {"{\"arrival_s\": 9E999, \"prompt_tokens\": 1, \"output_tokens\": 1}\n", true, "line 1/column 15"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const SpecError e = spec_error_of([&] { parse_request_trace(c.text, "req.csv", c.jsonl); });
    EXPECT_EQ(e.file(), "req.csv");
    EXPECT_EQ(e.json_path(), c.path) << e.what();
  }
  const SpecError missing = spec_error_of([] { read_request_trace("/no/such/trace.csv"); });
  EXPECT_EQ(missing.file(), "/no/such/trace.csv");
}

}  // namespace
}  // namespace clustersim
