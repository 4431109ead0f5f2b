// Unknown report figures (a replayed trace without batch sizes or memory events): NaN in C++, null
// with a reason in JSON, "unknown (reason)" in the text, and the same after a JSON round trip.
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../expect_contains.hpp"
#include "sim/report/report.hpp"

namespace clustersim {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Report trace_report() {
  Report r;
  r.step_time_s = 0.25;
  r.tokens_per_s = kNaN;
  r.mark_unknown("tokens_per_s", "the trace has no batch or sequence size");
  r.tflops_per_gpu = 400.0;
  r.mfu = 0.4;
  r.memory.capacity_bytes = 80e9;
  r.memory.peak_bytes_per_gpu = kNaN;
  r.memory.weights_bytes = kNaN;
  r.mark_unknown("memory.peak_bytes_per_gpu", "the trace has no memory events");
  r.mark_unknown("memory.weights_bytes", "the trace has no memory events");
  return r;
}

TEST(ReportUnknown, JsonHasNullAndTheReason) {
  const auto j = nlohmann::json::parse(trace_report().to_json());
  EXPECT_TRUE(j["tokens_per_s"].is_null());
  EXPECT_EQ(j["tflops_per_gpu"], 400.0);
  EXPECT_TRUE(j["memory"]["peak_bytes_per_gpu"].is_null());
  EXPECT_TRUE(j["memory"]["fits"].is_null());  // unknown peak: whether it fits is unknown too
  EXPECT_EQ(j["memory"]["capacity_bytes"], 80e9);
  EXPECT_EQ(j["unknown"]["tokens_per_s"], "the trace has no batch or sequence size");
  EXPECT_EQ(j["unknown"].size(), 3u);
  // A report with every figure known has no "unknown" key (generated workloads are unchanged).
  EXPECT_FALSE(nlohmann::json::parse(Report{}.to_json()).contains("unknown"));
}

TEST(ReportUnknown, RoundTripsThroughJson) {
  const Report r = Report::from_json(trace_report().to_json());
  EXPECT_TRUE(std::isnan(r.tokens_per_s));
  EXPECT_TRUE(std::isnan(r.memory.peak_bytes_per_gpu));
  EXPECT_EQ(r.tflops_per_gpu, 400.0);
  EXPECT_EQ(r.unknown_reason("memory.peak_bytes_per_gpu"), "the trace has no memory events");
  EXPECT_EQ(r.unknown_reason("mfu"), "");
  EXPECT_EQ(r.to_json(), trace_report().to_json());
}

TEST(ReportUnknown, TextSaysUnknownNeverZero) {
  const std::string text = trace_report().to_text();
  testing::expect_contains(
      text, {"Throughput         unknown (the trace has no batch or sequence size)",
             "Memory per GPU     unknown (the trace has no memory events)", "400.0 TFLOP/s per GPU = 40.0 % MFU"});
  EXPECT_EQ(text.find("tokens/s"), std::string::npos) << text;
  EXPECT_EQ(text.find("0.00 GB"), std::string::npos) << text;
}

}  // namespace
}  // namespace clustersim
