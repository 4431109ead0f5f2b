// clustersim validate serving-trtllm-inflight: TensorRT-LLM's 60 published in-flight saturation
// throughputs (calibration/data/published/serving_throughput.json) replayed through the serving engine
// (mapping: calibration/validation/serving/serving-trtllm-inflight.json; docs/serving.md, "Validation:
// saturation throughput"), and the options and mistakes of the serving kind of dataset.
//
// Measured on this commit (predicted / published - 1, 60 rows, every published request simulated):
// median |error| 6.5 %, MAPE 6.5 %, bias -1.4 %; H100 median 6.7 % (bias -4.7 %), H200 6.3 % (+1.9 %);
// 8B 9.1 %, 70B 4.5 %, 405B 5.1 %; worst rows +16.3 % (serve-0053, 405B H100 128/4096) and -16.0 %
// (serve-0017, 8B H100 2048/128) (2026-11-28, with vLLM's custom all-reduce table for all-reduces up to
// 1 MiB; before it bias -1.5 %, H100 -4.8 %, serve-0053 +15.9 %). Nothing is fitted to these rows. With scheduler
// continuous the median is 14.6 % (bias -13.7 %). Tolerances: the measured figures + 2 points (median, MAPE), |bias| <=
// 5 %, every per-GPU median <= 10 % (the target), every row within 20 %.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"

namespace clustersim {
namespace {

using testing::expect_refused;
using testing::run_cli;

const nlohmann::json* group(const nlohmann::json& d, const std::string& name) {
  for (const auto& g : d["summary"])
    if (g["group"] == name) return &g;
  return nullptr;
}

// `validate <dataset> --json`, which must succeed and report that one dataset: its report in `d`.
void validate_one(const std::string& dataset, nlohmann::json& d) {
  const auto r = run_cli("validate " + dataset + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["datasets"].size(), 1u);
  d = j["datasets"][0];
  EXPECT_EQ(d["dataset"], dataset);
}

TEST(ValidateServingCli, TrtllmSaturationThroughputWithinTheMeasuredError) {
  nlohmann::json d;
  ASSERT_NO_FATAL_FAILURE(validate_one("serving-trtllm-inflight", d));
  EXPECT_EQ(d["data"], "calibration/data/published/serving_throughput.json");
  ASSERT_EQ(d["rows"].size(), 60u);
  long long requests = 0;
  double worst = 0.0;
  for (const auto& row : d["rows"]) {
    requests += row["requests"].get<long long>();
    EXPECT_EQ(row["scheduler"], "inflight");
    EXPECT_EQ(row["preemptions"], 0) << row["id"];  // GUARANTEED_NO_EVICT
    const double e = row["predicted"].get<double>() / row["measured"].get<double>() - 1.0;
    EXPECT_NEAR(row["error"].get<double>(), e, 1e-12);
    worst = std::max(worst, std::abs(e));
  }
  // Every published request: 6 rows of 30,000, 24 of 3,000, 24 of 1,500, 6 of 1,000.
  EXPECT_EQ(requests, 6 * 30000 + 24 * 3000 + 24 * 1500 + 6 * 1000);
  // The worst row: serve-0010, Llama 3.1 8B on one H200 at 20,000 input tokens, -20.3 % (-16.8 % with the
  // H200 catalogue entry alone): the H200 profile's clock under the cap is the measured H200's, which
  // sustained less on large GEMMs than NVIDIA's and Azure's H200s (docs/validation.md, h200-device).
  EXPECT_LE(worst, 0.21);
  const nlohmann::json* all = group(d, "all");
  ASSERT_NE(all, nullptr);
  EXPECT_EQ((*all)["rows"], 60);
  EXPECT_LE((*all)["median_abs_error"].get<double>(), 0.065 + 0.02);
  EXPECT_LE((*all)["mape"].get<double>(), 0.065 + 0.02);
  EXPECT_LE(std::abs((*all)["bias"].get<double>()), 0.05);
  for (const char* gpu : {"h100-sxm5-80gb", "h200-sxm-141gb"}) {
    const nlohmann::json* g = group(d, gpu);
    ASSERT_NE(g, nullptr) << gpu;
    EXPECT_EQ((*g)["rows"], 30);
    EXPECT_LE((*g)["median_abs_error"].get<double>(), 0.10) << gpu;
  }
  for (const char* model : {"Llama 3.1 8B", "Llama 3.3 70B", "Llama 3.1 405B"}) {
    const nlohmann::json* g = group(d, model);
    ASSERT_NE(g, nullptr) << model;
    EXPECT_EQ((*g)["rows"], 20);
  }
}

// serving-nim-latency (calibration/validation/serving/serving-nim-latency.json): NIM 1.8.0's eight
// operating points of Llama 3.3 70B fp8 tp 2 on two H100s (5000/500 tokens, AIPerf closed loop of 1 to
// 250 clients), each run once and compared on three metrics. Measured on this commit (2026-11-28,
// predicted / published - 1; the same runs as tests/cpp/cli/serve_published_latency_test.cpp):
//   output_tokens_per_s  median |error| 10.6 %, bias -6.6 %
//   ttft_s (mean)        11.6 %, bias +23.6 % (the convoy at 5 to 50 clients: +45 .. +47 %)
//   itl_s (mean)         11.5 %, bias +7.0 %
//   all 24 rows          11.0 %
// Tolerance: the measured medians +- 1.5 points (a change that moves them is seen).
TEST(ValidateServingCli, NimLatencyDatasetPerMetric) {
  nlohmann::json d;
  ASSERT_NO_FATAL_FAILURE(validate_one("serving-nim-latency", d));
  EXPECT_EQ(d["data"], "calibration/data/published/serving_latency.json");
  EXPECT_EQ(d["residuals"], true);
  ASSERT_EQ(d["rows"].size(), 24u);  // 8 records x 3 metrics
  for (const auto& row : d["rows"]) {
    EXPECT_EQ(row["scheduler"], "inflight");
    EXPECT_NEAR(row["error"].get<double>(), row["predicted"].get<double>() / row["measured"].get<double>() - 1.0,
                1e-12);
    // nim-0001 (1 client): the published TTFT 406.77 ms and ITL 18.58 ms, in seconds.
    if (row["id"] == "nim-0001" && row["metric"] == "ttft_s") {
      EXPECT_NEAR(row["measured"].get<double>(), 0.40677, 1e-12);
    }
    if (row["id"] == "nim-0001" && row["metric"] == "itl_s") {
      EXPECT_NEAR(row["measured"].get<double>(), 0.01858, 1e-12);
    }
    if (row["id"] == "nim-0008") {
      EXPECT_EQ(row["requests"], 30 * 250);  // 30 requests per client
    }
  }
  const std::vector<std::pair<const char*, double>> medians{
      {"output_tokens_per_s", 0.106}, {"ttft_s", 0.116}, {"itl_s", 0.115}, {"all", 0.110}};
  for (const auto& [name, median] : medians) {
    const nlohmann::json* g = group(d, name);
    ASSERT_NE(g, nullptr) << name;
    EXPECT_EQ((*g)["rows"], std::string(name) == "all" ? 24 : 8) << name;
    EXPECT_NEAR((*g)["median_abs_error"].get<double>(), median, 0.015) << name;
  }
}

// serving-trtllm-mla: TensorRT-LLM's DeepSeek-R1 max-throughput run on 8 x H200 as a dataset (the spec
// of tests/cpp/cli/serve_published_mla_test.cpp in the mapping). Measured 2026-11-28: 17,363 against
// 11,489 output tokens/s, +51.1 %; among the error bars' residuals, as an MoE / MLA row (the mapping says
// why the distance keeps it from dense predictions).
TEST(ValidateServingCli, TrtllmMlaDatasetIsOneThroughputRowInTheResiduals) {
  nlohmann::json d;
  ASSERT_NO_FATAL_FAILURE(validate_one("serving-trtllm-mla", d));
  EXPECT_EQ(d["residuals"], true);
  ASSERT_EQ(d["rows"].size(), 1u);
  const auto& row = d["rows"][0];
  EXPECT_EQ(row["metric"], "output_tokens_per_s");
  EXPECT_EQ(row["requests"], 5120);
  EXPECT_DOUBLE_EQ(row["measured"].get<double>(), 11489.2671);
  EXPECT_GT(row["error"].get<double>(), 0.48);
  EXPECT_LT(row["error"].get<double>(), 0.55);
}

TEST(ValidateServingCli, TextReportAndOtherSchedulers) {
  const auto r = run_cli("validate serving-trtllm-inflight --limit 10 --scheduler continuous");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("# serving-trtllm-inflight: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# assumes: "), std::string::npos);
  EXPECT_NE(r.out.find("| all | 10 | "), std::string::npos) << r.out;
  // Rows 0001..0009 run continuous; serve-0010's 20000-token prompt exceeds max_batch_tokens 8192, which
  // continuous would reject: it runs chunked_prefill.
  EXPECT_NE(r.out.find(" continuous "), std::string::npos);
  const auto row10 = r.out.find("  serve-0010 ");
  ASSERT_NE(row10, std::string::npos);
  EXPECT_NE(r.out.find("chunked_prefill", row10), std::string::npos);
  EXPECT_EQ(r.out.find("  serve-0011 "), std::string::npos);
}

TEST(ValidateServingCli, ListShowsBothKinds) {
  const auto r = run_cli("validate --list");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("serving-trtllm-inflight\tserving\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("serving-nim-latency\tserving\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("serving-trtllm-mla\tserving\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vtrain-single\ttraining\n"), std::string::npos) << r.out;
}

TEST(ValidateServingCli, MistakesExitTwo) {
  expect_refused("validate serving-trtllm-inflight --scheduler fifo", {"--scheduler", "fifo"});
  expect_refused("validate serving-trtllm-inflight vtrain-single", {"run on their own"});
  expect_refused("validate serving-trtllm-inflight --fidelity flow", {"--fidelity"});
  expect_refused("validate vtrain-single --scheduler inflight", {"--scheduler"});
}

}  // namespace
}  // namespace clustersim
