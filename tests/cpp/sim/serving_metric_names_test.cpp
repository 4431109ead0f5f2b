// The serving metrics' one list (sim/validation/serving_metric_names.hpp) and how the serving validation
// reads each from a run's summary (sim/api/serving_validation.cpp): every listed name has its value, each
// a different field, and a name outside the list is refused with the list.
#include "sim/validation/serving_metric_names.hpp"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "sim/api/serving_validation.hpp"
#include "sim/core/error.hpp"

namespace clustersim {
namespace {

TEST(ServingMetricNames, EveryNameReadsItsOwnFieldOfTheSummary) {
  ServingSummary s;
  s.output_tokens_per_s = 1.0;
  s.ttft = {2.0, 3.0, 4.0, 5.0, 99.0};  // mean, p50, p90, p99, max
  s.tbt_mean = {6.0, 7.0, 8.0, 9.0, 99.0};
  s.tbt_p50_s = 10.0;
  s.tbt_p99_s = 11.0;
  s.e2e = {98.0, 12.0, 13.0, 14.0, 99.0};
  const std::vector<std::pair<std::string, double>> expected{
      {"output_tokens_per_s", 1.0}, {"ttft_s", 2.0},     {"itl_s", 6.0},      {"ttft_p50_s", 3.0}, {"ttft_p90_s", 4.0},
      {"ttft_p99_s", 5.0},          {"tpot_p50_s", 7.0}, {"tpot_p90_s", 8.0}, {"tpot_p99_s", 9.0}, {"itl_p50_s", 10.0},
      {"itl_p99_s", 11.0},          {"e2e_p50_s", 12.0}, {"e2e_p90_s", 13.0}, {"e2e_p99_s", 14.0}};
  ASSERT_EQ(serving_metric_names().size(), expected.size());
  std::set<double> seen;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(serving_metric_names()[i], expected[i].first);
    EXPECT_DOUBLE_EQ(serving_metric(s, expected[i].first), expected[i].second) << expected[i].first;
    seen.insert(serving_metric(s, expected[i].first));
  }
  EXPECT_EQ(seen.size(), expected.size());  // no two names read the same field
  EXPECT_EQ(serving_compared_metrics(), serving_metric_names());
  // serve's error bars bound the three means only.
  EXPECT_EQ(serving_validation_metrics(), (std::vector<std::string>{"output_tokens_per_s", "ttft_s", "itl_s"}));
}

TEST(ServingMetricNames, UnknownNameIsRefusedWithTheList) {
  try {
    serving_metric(ServingSummary{}, "e2e_s");
    FAIL() << "e2e_s accepted";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("ttft_p99_s"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace clustersim
