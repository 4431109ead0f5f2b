// The cluster schema (power and cost blocks): one declaration per key drives their reader, their
// writer and their rows of docs/specs.md.
#include "topologies/cluster_schema.hpp"

#include <cmath>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../dotted_path.hpp"
#include "../spec_error_of.hpp"
#include "sim/core/error.hpp"
#include "topologies/cluster_spec.hpp"

namespace clustersim {
namespace {

nlohmann::json minimal_spec() {
  return nlohmann::json::parse(R"({
    "name": "c", "gpu": "h100-sxm5-80gb", "nodes": 2,
    "node": {"gpus": 8, "scale_up": {"type": "nvswitch", "bandwidth_GBps": 450}, "nics": 8}
  })");
}

using testing::pointer;

ClusterSpec parse(const nlohmann::json& j) {
  return parse_cluster_spec(j.dump(), "c.json");
}

// Left out, the blocks take the schema's defaults, which are the structs' initializers.
TEST(ClusterSchema, DefaultsAreTheStructsInitializers) {
  const ClusterSpec s = parse(minimal_spec());
  EXPECT_EQ(s.power, PowerSpec{});
  EXPECT_EQ(s.cost, CostSpec{});
  const nlohmann::json written = nlohmann::json::parse(cluster_spec_to_json(s));
  int checked = 0;
  for (const SpecField& f : cluster_schema()) {
    if (f.default_json.empty()) continue;  // catalogue values: not given, not written
    const nlohmann::json::json_pointer p(pointer(f.path));
    if (!written.contains(p)) continue;  // operations and other capex: written when > 0
    EXPECT_EQ(written[p], nlohmann::json::parse(f.default_json)) << f.path;
    ++checked;
  }
  EXPECT_EQ(checked, 3);  // pue 1.3, electricity 0.10, amortization 4
  EXPECT_FALSE(written["power"].contains("gpu_tensor_w"));
  EXPECT_FALSE(written["cost"].contains("prices"));
}

// Every declared range is the reader's: one past the lower bound (at it, for "> 0") and past the upper
// bound are refused at the key's path; the bounds themselves are accepted.
TEST(ClusterSchema, RangesAreEnforcedAtTheKeysPath) {
  int checked = 0;
  for (const SpecField& f : cluster_schema()) {
    ASSERT_EQ(f.type, FieldType::number) << f.path;
    nlohmann::json low = minimal_spec();
    low[nlohmann::json::json_pointer(pointer(f.path))] = f.min_exclusive ? f.min_number : f.min_number - 0.5;
    EXPECT_EQ(testing::spec_error_of([&] { parse(low); }).json_path(), pointer(f.path)) << f.path;
    nlohmann::json at_min = minimal_spec();
    if (!f.min_exclusive) {
      at_min[nlohmann::json::json_pointer(pointer(f.path))] = f.min_number;
      EXPECT_NO_THROW(parse(at_min)) << f.path;
    }
    if (std::isfinite(f.max_number)) {
      nlohmann::json high = minimal_spec();
      high[nlohmann::json::json_pointer(pointer(f.path))] = f.max_number * 2;
      EXPECT_EQ(testing::spec_error_of([&] { parse(high); }).json_path(), pointer(f.path)) << f.path;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 21);  // power: pue + 10 device powers; cost: 4 figures + 6 prices
}

// A spec giving every key writes every key back, with its value.
TEST(ClusterSchema, WriterWritesEveryGivenKey) {
  nlohmann::json j = minimal_spec();
  double value = 1.5;
  for (const SpecField& f : cluster_schema()) {
    j[nlohmann::json::json_pointer(pointer(f.path))] = value;
    value += 1.0;  // 1.5, 2.5, ...: inside every range (pue <= 10 is the first)
  }
  const ClusterSpec s = parse(j);
  const nlohmann::json written = nlohmann::json::parse(cluster_spec_to_json(s));
  for (const SpecField& f : cluster_schema()) {
    const nlohmann::json::json_pointer p(pointer(f.path));
    EXPECT_EQ(written[p], j[p]) << f.path;
  }
  EXPECT_EQ(parse_cluster_spec(cluster_spec_to_json(s), "c.json"), s);
}

TEST(ClusterSchema, DocsRowsAreTheGeneratedOnes) {
  std::ifstream in(std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/specs.md");
  ASSERT_TRUE(in) << "docs/specs.md";
  std::string line;
  std::string rows;
  while (std::getline(in, line))
    if (line.rfind("| `power.", 0) == 0 || line.rfind("| `cost.", 0) == 0) rows += line + "\n";
  const std::string generated = cluster_schema_markdown();
  const std::string header = "| key | type, unit | default | meaning |\n| --- | --- | --- | --- |\n";
  ASSERT_EQ(generated.substr(0, header.size()), header);
  EXPECT_EQ(rows, generated.substr(header.size()))
      << "regenerate the rows: build/bin/clustersim schema cluster --markdown";
}

}  // namespace
}  // namespace clustersim
