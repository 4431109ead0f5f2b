// The report's schema (sim/report/report_schema.hpp): derived from the writer, so every key a report
// writes is declared, in the writer's order, with its JSON type; the Python package builds its
// dataclasses and DataFrame columns from it.
#include "sim/report/report_schema.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/report/report.hpp"

namespace clustersim {
namespace {

using Json = nlohmann::ordered_json;  // keys in the order written

const Json& sections() {
  static const Json s = Json::parse(report_schema_json()).at("sections");
  return s;
}

std::vector<std::string> keys(const std::string& path) {
  std::vector<std::string> out;
  for (const Json& f : sections().at(path))
    out.push_back(f.at("key").get<std::string>());
  return out;
}

const Json& field(const std::string& path, const std::string& key) {
  for (const Json& f : sections().at(path))
    if (f.at("key") == key) return f;
  throw std::runtime_error("no " + key + " in " + path);
}

TEST(ReportSchema, TablesListTheirColumnsInTheWritersOrder) {
  EXPECT_EQ(keys("communication"), (std::vector<std::string>{"group", "collective", "algorithm", "bytes", "count",
                                                             "time_s", "exposed_s", "protocol"}));
  EXPECT_EQ(keys("links"),
            (std::vector<std::string>{"id", "kind", "bytes", "bandwidth_Bps", "utilization", "busy_s", "users"}));
  EXPECT_EQ(keys("links.users"), (std::vector<std::string>{"group", "bytes"}));
  EXPECT_EQ(keys("power.by_device"),
            (std::vector<std::string>{"device", "count", "avg_w", "energy_per_step_j", "basis"}));
  EXPECT_EQ(keys("cost.bill_of_materials"),
            (std::vector<std::string>{"item", "count", "unit_usd", "total_usd", "source"}));
  EXPECT_EQ(keys("run.parallelism"), (std::vector<std::string>{"tp", "pp", "dp", "cp", "ep"}));
  EXPECT_EQ(field("", "communication").at("type"), "table");
  EXPECT_EQ(field("power", "by_device").at("type"), "table");
  EXPECT_EQ(field("run", "parallelism").at("type"), "object");
}

TEST(ReportSchema, TypesAndDefaultsAreTheStructs) {
  // RunInfo: int tp = 1, std::int64_t global_batch = 0, double parameters = 0, std::string gpu.
  EXPECT_EQ(field("run.parallelism", "tp").at("type"), "integer");
  EXPECT_EQ(field("run.parallelism", "tp").at("default"), 1);
  EXPECT_EQ(field("run", "global_batch").at("type"), "integer");
  EXPECT_EQ(field("run", "parameters").at("type"), "number");
  EXPECT_EQ(field("run", "gpu").at("type"), "string");
  // PowerStats: double pue = 1.0; bool clock_cap_modelled = true. MemoryStats: bool fits = true.
  EXPECT_EQ(field("power", "pue").at("default"), 1.0);
  EXPECT_EQ(field("power", "clock_cap_modelled").at("type"), "boolean");
  EXPECT_EQ(field("power", "clock_cap_modelled").at("default"), true);
  EXPECT_EQ(field("memory", "fits").at("default"), true);
  EXPECT_EQ(field("provenance", "extrapolated").at("type"), "array");
  EXPECT_EQ(field("provenance", "derived_defaults").at("type"), "table");
  EXPECT_EQ(field("memory", "weights_bytes").at("type"), "number");
  EXPECT_EQ(field("memory", "weights_bytes").at("default"), 0.0);
}

// Every key of a report with every section is declared under its path, in the same order, and
// nothing else is: the schema is the writer's.
void expect_declared(const Json& o, const std::string& path) {
  ASSERT_TRUE(sections().contains(path)) << path;
  std::vector<std::string> written;
  for (const auto& [key, value] : o.items()) {
    written.push_back(key);
    const std::string sub = path.empty() ? key : path + "." + key;
    if (value.is_object() && !value.empty() && key != "datasets") expect_declared(value, sub);
    if (value.is_array() && !value.empty() && value.front().is_object()) expect_declared(value.front(), sub);
  }
  EXPECT_EQ(written, keys(path)) << path;
}

TEST(ReportSchema, DeclaresEveryKeyOfAWrittenReport) {
  Report r;
  r.step_time_s = 1.5;
  r.step_time_interval = StepTimeInterval{};
  r.step_time_interval->datasets = {{"megatron-h100-2024", 12}};
  r.communication.push_back({"dp", "all_reduce", "ring", "Simple", 2e9, 1, 0.1, 0.05});
  r.links.push_back({"a->b", "nvlink", 1e9, 450e9, 0.5, 0.7, {{"dp", 1e9}}});
  r.power = PowerStats{};
  r.power->by_device.push_back({"gpu", 16, 11200, 16800, "catalogue"});
  r.power->gpu_classes.emplace_back().name = "stage0";
  r.cost = CostStats{};
  r.cost->bill_of_materials.push_back({"gpu_server", 2, 300000, 600000, "price list"});
  r.time_to_train = TimeToTrainStats{};
  r.time_to_train->causes.emplace_back().cause = "gpu";
  r.provenance.derived_defaults.push_back({"/node/scale_up/generation", "\"nvlink4\"", "h100 carries NVLink 4"});
  expect_declared(Json::parse(r.to_json()), "");
}

}  // namespace
}  // namespace clustersim
