// The cluster schema (node, fabric, power and cost blocks): one declaration per key drives their
// reader, their writer and their rows of docs/specs.md.
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

bool in_power_or_cost(const SpecField& f) {
  return f.path.starts_with("power.") || f.path.starts_with("cost.");
}

// The blocks a training run reads (sim/training_run): TrainingRunBlocks checks them.
bool in_training_run(const SpecField& f) {
  return f.path.starts_with("reliability.") || f.path.starts_with("storage.");
}

// Left out, the blocks take the schema's defaults, which are the structs' initializers.
TEST(ClusterSchema, DefaultsAreTheStructsInitializers) {
  const ClusterSpec s = parse(minimal_spec());
  EXPECT_EQ(s.power, PowerSpec{});
  EXPECT_EQ(s.cost, CostSpec{});
  const nlohmann::json written = nlohmann::json::parse(cluster_spec_to_json(s));
  int checked = 0;
  for (const SpecField& f : cluster_schema()) {
    if (!in_power_or_cost(f)) continue;    // NodeAndFabricDefaults
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
    if (!in_power_or_cost(f)) continue;  // NodeAndFabricRanges
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
    if (!in_power_or_cost(f)) continue;
    j[nlohmann::json::json_pointer(pointer(f.path))] = value;
    value += 1.0;  // 1.5, 2.5, ...: inside every range (pue <= 10 is the first)
  }
  const ClusterSpec s = parse(j);
  const nlohmann::json written = nlohmann::json::parse(cluster_spec_to_json(s));
  for (const SpecField& f : cluster_schema()) {
    if (!in_power_or_cost(f)) continue;
    const nlohmann::json::json_pointer p(pointer(f.path));
    EXPECT_EQ(written[p], j[p]) << f.path;
  }
  EXPECT_EQ(parse_cluster_spec(cluster_spec_to_json(s), "c.json"), s);
}

// Left out, the node's and the fabric's keys take the schema's defaults, and the writer writes them:
// the declared default is the struct's initializer. Keys whose default is derived or conditional say so
// in default_doc and are checked by DerivedDefaultsAreListed.
TEST(ClusterSchema, NodeAndFabricDefaults) {
  const nlohmann::json bare = nlohmann::json::parse(R"({
    "name": "c", "gpu": "h100-sxm5-80gb", "nodes": 2, "node": {"scale_up": {"bandwidth_GBps": 450}}
  })");
  const ClusterSpec s = parse(bare);
  const nlohmann::json written = nlohmann::json::parse(cluster_spec_to_json(s));
  int checked = 0;
  for (const SpecField& f : cluster_schema()) {
    if (in_power_or_cost(f) || in_training_run(f) || f.default_json.empty() || !f.default_doc.empty()) continue;
    const nlohmann::json::json_pointer p(pointer(f.path));
    if (f.path == "fabric.devices") {  // graph fabrics only
      EXPECT_FALSE(written.contains(p));
      continue;
    }
    ASSERT_TRUE(written.contains(p)) << f.path;
    EXPECT_EQ(written[p], nlohmann::json::parse(f.default_json)) << f.path;
    ++checked;
  }
  // node: gpus 8, scale_up.type nvswitch, nics 8, nic 400 Gb/s, PCIe 64 GB/s, 0 PCIe switches; fabric:
  // fat_tree, 2 tiers, radix 64, oversubscription 1, 0.6 us, no SHARP, routing auto, 1 plane.
  EXPECT_EQ(checked, 14);
  EXPECT_EQ(s.node, (NodeSpec{8, ScaleUpSpec{"nvswitch", "nvlink4", 450.0, 0.7, 0}, 8, 400.0, 64.0, 0}));
}

// Each key whose default the docs call derived is filled in from another one and listed in the
// spec's derived defaults (the report's provenance.derived_defaults) at its JSON pointer: the H100's
// NVLink generation, and the transport of an InfiniBand fabric.
TEST(ClusterSchema, DerivedDefaultsAreListed) {
  nlohmann::json spec = minimal_spec();
  spec["fabric"] = {{"type", "fat_tree"}};
  const ClusterSpec s = parse(spec);
  std::set<std::string> derived;
  for (const DerivedDefault& d : s.derived_defaults.items)
    derived.insert(d.key);
  int checked = 0;
  for (const SpecField& f : cluster_schema()) {
    if (f.default_doc.find("(derived)") == std::string_view::npos) continue;
    EXPECT_EQ(derived.count(pointer(f.path)), 1U) << f.path;
    ++checked;
  }
  EXPECT_EQ(checked, 2);  // node.scale_up.generation, fabric.transport
  EXPECT_EQ(s.node.scale_up.generation, "nvlink4");
  EXPECT_EQ(s.fabric.transport_in_effect(), "infiniband");
  // Given, they are not derived.
  nlohmann::json given = minimal_spec();
  given["node"]["scale_up"]["generation"] = "nvlink4";
  given["fabric"] = {{"transport", "infiniband"}};
  for (const DerivedDefault& d : parse(given).derived_defaults.items) {
    EXPECT_NE(d.key, "/node/scale_up/generation");
    EXPECT_NE(d.key, "/fabric/transport");
  }
}

// The declared ranges of the node's and the fabric's numbers are the reader's, as for power and cost
// (keys of one fabric type only and keys with checks against other keys aside).
TEST(ClusterSchema, NodeAndFabricRanges) {
  const std::set<std::string> typed = {"fabric.link_bandwidth_Gbps"};
  int checked = 0;
  for (const SpecField& f : cluster_schema()) {
    if (in_power_or_cost(f) || in_training_run(f) || f.type != FieldType::number ||
        typed.count(std::string(f.path)) != 0)
      continue;
    const nlohmann::json::json_pointer p(pointer(f.path));
    nlohmann::json low = minimal_spec();
    low[p] = f.min_exclusive ? f.min_number : f.min_number - 0.5;
    EXPECT_EQ(testing::spec_error_of([&] { parse(low); }).json_path(), pointer(f.path)) << f.path;
    nlohmann::json at_min = minimal_spec();
    at_min[p] = f.min_number;
    EXPECT_NO_THROW(parse(at_min)) << f.path;
    if (std::isfinite(f.max_number)) {
      nlohmann::json high = minimal_spec();
      high[p] = f.max_number * 2;
      EXPECT_EQ(testing::spec_error_of([&] { parse(high); }).json_path(), pointer(f.path)) << f.path;
    }
    ++checked;
  }
  // scale_up bandwidth and latency, NIC and PCIe bandwidth, oversubscription, link latency
  EXPECT_EQ(checked, 6);
  // An integer past int's range is refused at its path (it would wrap), below its minimum too.
  nlohmann::json radix = minimal_spec();
  radix["fabric"] = {{"switch_radix", 4294967296LL}};
  EXPECT_EQ(testing::spec_error_of([&] { parse(radix); }).message(),
            "expected an integer <= 2147483647, got 4294967296");
  radix["fabric"] = {{"switch_radix", 1}};
  EXPECT_EQ(testing::spec_error_of([&] { parse(radix); }).message(), "expected an integer >= 2, got 1");
}

// Issue 23: the reliability and storage blocks. Every number is refused below its minimum and above
// its maximum at its own JSON path (negative failure rates among them), and a spec giving every key
// reads back equal from what the writer writes; a bare spec writes neither block.
TEST(ClusterSchema, TrainingRunBlocks) {
  int checked = 0;
  nlohmann::json all = minimal_spec();
  double value = 0.5;
  for (const SpecField& f : cluster_schema()) {
    if (!in_training_run(f) || f.type != FieldType::number) continue;
    const nlohmann::json::json_pointer p(pointer(f.path));
    nlohmann::json low = minimal_spec();
    low[p] = f.min_number - 0.5;
    EXPECT_EQ(testing::spec_error_of([&] { parse(low); }).json_path(), pointer(f.path)) << f.path;
    nlohmann::json high = minimal_spec();
    high[p] = f.max_number * 2;
    EXPECT_EQ(testing::spec_error_of([&] { parse(high); }).json_path(), pointer(f.path)) << f.path;
    all[p] = value;
    value += 0.25;  // 0.5 .. 4.75: inside every range (straggler_cv <= 10)
    ++checked;
  }
  // reliability: 10 rates, 5 restart phases, straggler_cv; storage: 3 bandwidths
  EXPECT_EQ(checked, 19);
  all["reliability"]["spare_nodes"] = 3;
  all["storage"]["kind"] = "local_nvme_async";
  all["storage"]["asynchronous"] = true;
  const ClusterSpec s = parse(all);
  EXPECT_EQ(s.reliability.spare_nodes, 3);
  EXPECT_EQ(parse_cluster_spec(cluster_spec_to_json(s), "c.json"), s);
  const nlohmann::json bare = nlohmann::json::parse(cluster_spec_to_json(parse(minimal_spec())));
  EXPECT_FALSE(bare.contains("reliability"));
  EXPECT_FALSE(bare.contains("storage"));
}

TEST(ClusterSchema, DocsRowsAreTheGeneratedOnes) {
  std::ifstream in(std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/specs.md");
  ASSERT_TRUE(in) << "docs/specs.md";
  std::string line;
  std::string rows;
  while (std::getline(in, line))
    for (const char* block : {"| `node.", "| `fabric.", "| `power.", "| `cost.", "| `reliability.", "| `storage."})
      if (line.rfind(block, 0) == 0) rows += line + "\n";
  const std::string generated = spec_fields_markdown(cluster_schema());
  const std::string header = "| key | type, unit | default | meaning |\n| --- | --- | --- | --- |\n";
  ASSERT_EQ(generated.substr(0, header.size()), header);
  EXPECT_EQ(rows, generated.substr(header.size()))
      << "regenerate the rows: build/bin/clustersim schema cluster --markdown";
}

}  // namespace
}  // namespace clustersim
