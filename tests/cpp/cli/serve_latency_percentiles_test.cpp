// clustersim validate serving-latency-percentiles: vLLM v0.11.0's published latency percentiles (TTFT,
// TPOT, ITL: median and p99) of Qwen3-14B in bf16 on one H100 SXM, bursts of 100 to 1000 fixed-length
// requests (GPUStack's performance lab; calibration/data/published/serving_latency_percentiles.json,
// mapping calibration/validation/serving/serving-latency-percentiles.json; docs/serving.md, "Validation:
// latency percentiles"). Nothing is fitted to these rows.
//
// Measured on this commit (2026-11-28, predicted / published - 1):
//   row (ISL/OSL, requests)   ttft_p50 ttft_p99 tpot_p50 tpot_p99 itl_p50 itl_p99
//   0001 32000/100, 100        -20.8    -20.6    -18.0    -21.4    -39.4   -14.8
//   0002 4000/200, 500         -37.7    -35.2    -31.2    -33.3    -36.3   -33.7
//   0003 2000/100, 500         -43.2    -39.1    -31.9    -32.1    -36.9   -35.4
//   0004 128/4, 1000           -82.8    -72.6    -35.1    -36.6    -33.4   -38.8
// Every row misses issue 20's 15 % but one (0001 itl_p99): the simulated burst drains 1.26x (32K) to 1.65x
// (2K) faster than the published run (makespan 306.6 / 146.8 / 60.0 s against the published durations
// 386.8 / 227.6 / 98.9 s), and 3.6x for 128/4 (6.2 against 22.7 s: 44 requests/s, the API server's
// per-request work, not modelled). The percentiles' shape within the burst is the published one (below).
// Tolerance per row: the measured error +- 3 points (a change that moves a row is seen).
#include <array>
#include <cmath>
#include <cstddef>
#include <map>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"

namespace clustersim {
namespace {

using testing::run_cli;

struct Row {
  double measured = 0.0;
  double predicted = 0.0;
  double error = 0.0;
};

// `validate serving-latency-percentiles --json`: its rows by "id metric".
std::map<std::string, Row> percentile_rows(nlohmann::json& d) {
  const auto r = run_cli("validate serving-latency-percentiles --json");
  EXPECT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["datasets"].size(), 1u);
  d = j["datasets"][0];
  std::map<std::string, Row> rows;
  for (const auto& x : d["rows"])
    rows[x["id"].get<std::string>() + " " + x["metric"].get<std::string>()] = {
        x["measured"].get<double>(), x["predicted"].get<double>(), x["error"].get<double>()};
  return rows;
}

TEST(ServeLatencyPercentilesCli, EachRowWithinItsMeasuredBand) {
  nlohmann::json d;
  const auto rows = percentile_rows(d);
  EXPECT_EQ(d["dataset"], "serving-latency-percentiles");
  EXPECT_EQ(d["data"], "calibration/data/published/serving_latency_percentiles.json");
  EXPECT_EQ(d["residuals"], false);  // 50 % leave-one-out coverage as residuals (docs/serving.md)
  ASSERT_EQ(rows.size(), 24u);       // 4 records x 6 metrics
  for (const auto& row : d["rows"]) {
    EXPECT_EQ(row["scheduler"], "chunked_prefill");
    EXPECT_EQ(row["tp"], 1);
  }
  // The published values as printed (ms -> s): 0002's median TTFT 110734.54 ms, 0001's p99 ITL 1101.18 ms.
  EXPECT_NEAR(rows.at("gpustack-q14-0002 ttft_p50_s").measured, 110.73454, 1e-9);
  EXPECT_NEAR(rows.at("gpustack-q14-0001 itl_p99_s").measured, 1.10118, 1e-12);
  // The measured error of each record's six percentiles, in kMetrics' order (the table above).
  constexpr const char* kMetrics[] = {"ttft_p50_s", "ttft_p99_s", "tpot_p50_s", "tpot_p99_s", "itl_p50_s", "itl_p99_s"};
  const std::pair<const char*, std::array<double, 6>> measured_error[] = {
      {"gpustack-q14-0001", {-0.208, -0.206, -0.180, -0.214, -0.394, -0.148}},
      {"gpustack-q14-0002", {-0.377, -0.352, -0.312, -0.333, -0.363, -0.337}},
      {"gpustack-q14-0003", {-0.432, -0.391, -0.319, -0.321, -0.369, -0.354}},
      {"gpustack-q14-0004", {-0.828, -0.726, -0.351, -0.366, -0.334, -0.388}},
  };
  for (const auto& [id, errors] : measured_error) {
    for (std::size_t i = 0; i < errors.size(); ++i) {
      const std::string key = std::string(id) + " " + kMetrics[i];
      ASSERT_EQ(rows.count(key), 1u) << key;
      const Row& r = rows.at(key);
      EXPECT_NEAR(r.error, r.predicted / r.measured - 1.0, 1e-12) << key;
      EXPECT_NEAR(r.error, errors[i], 0.03) << key;
    }
  }
}

// The shape of a burst: every request arrives at t = 0 and the prompts are served first come, so the
// i-th TTFT is about i / n of the time to prefill them all, the median half the p99. Published:
// 191.05 / 380.41 = 0.502 (32K), 110.73 / 219.75 = 0.504 (4K), 49.14 / 94.61 = 0.519 (2K); the
// simulated ratios are 0.501, 0.484, 0.485 (measured 2026-11-28): -0.2, -3.9, -6.7 % (tolerance 8 %) where
// the levels are 21-43 % off, so the miss is the burst's speed, not its order. (128/4 is not a
// prefill-bound burst: 0.80 published, the API server admits 44 requests/s; 0.50 simulated.)
TEST(ServeLatencyPercentilesCli, BurstMedianOverP99MatchesThePublishedShape) {
  nlohmann::json d;
  const auto rows = percentile_rows(d);
  for (const char* id : {"gpustack-q14-0001", "gpustack-q14-0002", "gpustack-q14-0003"}) {
    const Row& p50 = rows.at(std::string(id) + " ttft_p50_s");
    const Row& p99 = rows.at(std::string(id) + " ttft_p99_s");
    const double published = p50.measured / p99.measured;
    const double simulated = p50.predicted / p99.predicted;
    EXPECT_NEAR(published, 0.5, 0.02) << id;
    EXPECT_NEAR(simulated / published - 1.0, 0.0, 0.08) << id;
  }
}

}  // namespace
}  // namespace clustersim
