// clustersim schema: the workload schema as JSON and as docs/specs.md's table.
#include <algorithm>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"

namespace clustersim {
namespace {

using testing::expect_refused;
using testing::run_cli;

TEST(CliSchema, WorkloadSchemaAsJsonAndMarkdown) {
  const auto json = run_cli("schema workload");
  ASSERT_EQ(json.status, 0) << json.err;
  const nlohmann::json fields = nlohmann::json::parse(json.out);
  // name, description; model 13, moe 10, mla 5, training 16, parallelism 16; trace 3
  ASSERT_EQ(fields.size(), 65u);
  EXPECT_EQ(fields[0]["path"], "name");
  const auto markdown = run_cli("schema workload --markdown");
  ASSERT_EQ(markdown.status, 0) << markdown.err;
  // A header, a separator and one row per field.
  EXPECT_EQ(std::count(markdown.out.begin(), markdown.out.end(), '\n'), 67);
  EXPECT_NE(markdown.out.find("| `training.micro_batch` *stable* | integer >= 1, sequences | 1 |"), std::string::npos);
}

TEST(CliSchema, ServingSchema) {
  const auto json = run_cli("schema serving");
  ASSERT_EQ(json.status, 0) << json.err;
  const nlohmann::json fields = nlohmann::json::parse(json.out);
  // name, description, model; replica 14 (dp_attention, custom_all_reduce, fp8_block_scales), scheduler 7,
  // prefill_pool 3, speculative 3, slo 2, traffic 12 (think_time_s) + prompt 6 + output 6.
  ASSERT_EQ(fields.size(), 56u);
  const auto markdown = run_cli("schema serving --markdown");
  ASSERT_EQ(markdown.status, 0) << markdown.err;
  EXPECT_NE(markdown.out.find(
                "| `scheduler.name` *stable* | `static` \\| `continuous` \\| `chunked_prefill` \\| `inflight` |"),
            std::string::npos)
      << markdown.out;
}

TEST(CliSchema, UnknownSpecIsAUsageError) {
  expect_refused("schema cluster-of-nothing", {"workload"});
}

}  // namespace
}  // namespace clustersim
