// Defaults derived from the hardware: a spec that leaves out what its GPU or transport implies gets it
// filled in, and the spec lists every value so filled (key, value, why). Never a silent default that
// turns off a capability the hardware has (issue 17: an H100 SXM NVSwitch without `generation` got no
// NVLS).
#include <algorithm>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../spec_error_of.hpp"
#include "sim/core/error.hpp"
#include "topologies/cluster_spec.hpp"

namespace clustersim {
namespace {

nlohmann::json spec_with(const nlohmann::json& gpu, const nlohmann::json& scale_up) {
  nlohmann::json doc = nlohmann::json::parse(R"({
    "name": "t", "nodes": 2,
    "node": {"gpus": 8, "nics": 8, "nic_bandwidth_Gbps": 400},
    "fabric": {"type": "fat_tree", "tiers": 2, "switch_radix": 64, "technology": "infiniband", "transport": "infiniband",
               "routing": "adaptive"}
  })");
  doc["gpu"] = gpu;
  doc["node"]["scale_up"] = scale_up;
  return doc;
}

const DerivedDefault* find_derived(const ClusterSpec& spec, const std::string& key) {
  const auto& items = spec.derived_defaults.items;
  const auto it = std::find_if(items.begin(), items.end(), [&](const DerivedDefault& d) { return d.key == key; });
  return it == items.end() ? nullptr : &*it;
}

TEST(DerivedDefaults, AnH100SxmNvswitchIsNvlink4WithItsFiguresAndSaysSo) {
  // The issue's spec: {"type": "nvswitch", "bandwidth_GBps": 450} with an H100 SXM.
  const ClusterSpec spec =
      parse_cluster_spec(spec_with("h100-sxm5-80gb", {{"type", "nvswitch"}, {"bandwidth_GBps", 450}}).dump(), "t.json");
  EXPECT_EQ(spec.node.scale_up.generation, "nvlink4");
  EXPECT_DOUBLE_EQ(spec.node.scale_up.bandwidth_GBps, 450.0);  // given
  EXPECT_DOUBLE_EQ(spec.node.scale_up.latency_us, 0.7);        // NVLink 4's (assumed) figure
  const DerivedDefault* g = find_derived(spec, "/node/scale_up/generation");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->value, "\"nvlink4\"");
  EXPECT_NE(g->why.find("h100-sxm5-80gb carries nvlink4"), std::string::npos) << g->why;
  EXPECT_NE(g->why.find("NVLS"), std::string::npos) << g->why;
  EXPECT_EQ(find_derived(spec, "/node/scale_up/bandwidth_GBps"), nullptr);  // the spec gave it
  const DerivedDefault* l = find_derived(spec, "/node/scale_up/latency_us");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->value, "0.7");
  // The same cluster as the spec that says it all: the derivation is provenance, not a difference.
  const ClusterSpec explicit_spec = parse_cluster_spec(
      spec_with("h100-sxm5-80gb",
                {{"type", "nvswitch"}, {"generation", "nvlink4"}, {"bandwidth_GBps", 450}, {"latency_us", 0.7}})
          .dump(),
      "t.json");
  EXPECT_TRUE(explicit_spec.derived_defaults.items.empty());
  EXPECT_EQ(spec, explicit_spec);
}

TEST(DerivedDefaults, EachGpuImpliesItsGeneration) {
  struct Case {
    nlohmann::json gpu;
    const char* generation;
    double bandwidth_GBps;
  };
  const Case cases[] = {
      {"a100-sxm4-80gb", "nvlink3", 300.0},
      {"h200-sxm-141gb", "nvlink4", 450.0},
      {"b200", "nvlink5", 900.0},
      {"gb200", "nvlink5", 900.0},
      {"b300", "nvlink5", 900.0},
      {"gb300", "nvlink5", 900.0},
      {"v100-sxm2-32gb", "nvlink2", 150.0},
      {{{"base", "h100-sxm5-80gb"}, {"name", "derated H100"}}, "nvlink4", 450.0},  // an inline GPU's base
  };
  for (const Case& c : cases) {
    const ClusterSpec spec = parse_cluster_spec(spec_with(c.gpu, {{"type", "nvswitch"}}).dump(), "t.json");
    EXPECT_EQ(spec.node.scale_up.generation, c.generation) << c.gpu.dump();
    EXPECT_DOUBLE_EQ(spec.node.scale_up.bandwidth_GBps, c.bandwidth_GBps) << c.gpu.dump();
    const DerivedDefault* b = find_derived(spec, "/node/scale_up/bandwidth_GBps");
    ASSERT_NE(b, nullptr) << c.gpu.dump();
    EXPECT_EQ(nlohmann::json::parse(b->value).get<double>(), c.bandwidth_GBps);
  }
  // PCIe GPUs on a PCIe scale-up: the GPU's PCIe generation.
  const ClusterSpec l4 = parse_cluster_spec(spec_with("l4", {{"type", "pcie"}}).dump(), "t.json");
  EXPECT_EQ(l4.node.scale_up.generation, "pcie4");
  EXPECT_DOUBLE_EQ(l4.node.scale_up.bandwidth_GBps, 32.0);
}

TEST(DerivedDefaults, AGivenGenerationIsNotOverriddenAndNotListed) {
  // A what-if (an H100 on an NVLink 3 switch) is the user's choice: kept, nothing derived.
  const ClusterSpec spec = parse_cluster_spec(
      spec_with("h100-sxm5-80gb", {{"type", "nvswitch"}, {"generation", "nvlink3"}}).dump(), "t.json");
  EXPECT_EQ(spec.node.scale_up.generation, "nvlink3");
  EXPECT_EQ(find_derived(spec, "/node/scale_up/generation"), nullptr);
  EXPECT_DOUBLE_EQ(spec.node.scale_up.bandwidth_GBps, 300.0);  // NVLink 3's, listed as derived
  EXPECT_NE(find_derived(spec, "/node/scale_up/bandwidth_GBps"), nullptr);
}

TEST(DerivedDefaults, AnUnknownGpuImpliesNothingAndTheSpecSaysSo) {
  // An inline GPU without a catalogue base: no generation can be derived; the reader says so (NVLS
  // stays off) and still needs the bandwidth.
  const nlohmann::json gpu = {
      {"name", "custom"}, {"vector_fp32_tflops", 50}, {"sm_count", 100}, {"hbm_bandwidth_GBps", 3000}};
  const SpecError e = testing::spec_error_of([&] {
    parse_cluster_spec(spec_with(gpu, {{"type", "nvswitch"}}).dump(), "t.json");
  });
  EXPECT_EQ(e.json_path(), "/node/scale_up/bandwidth_GBps");
  const ClusterSpec spec =
      parse_cluster_spec(spec_with(gpu, {{"type", "nvswitch"}, {"bandwidth_GBps", 400}}).dump(), "t.json");
  EXPECT_EQ(spec.node.scale_up.generation, "");
  const DerivedDefault* g = find_derived(spec, "/node/scale_up/generation");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->value, "null");
  EXPECT_NE(g->why.find("no NVLS"), std::string::npos) << g->why;
}

TEST(DerivedDefaults, TheTransportImpliesTheTechnologyAndTheRouting) {
  nlohmann::json doc = spec_with("h100-sxm5-80gb", {{"type", "nvswitch"}});
  doc["fabric"] = {{"type", "fat_tree"}, {"transport", "efa"}};
  const ClusterSpec efa = parse_cluster_spec(doc.dump(), "t.json");
  EXPECT_EQ(efa.fabric.technology, "ethernet");
  EXPECT_EQ(efa.fabric.routing_in_effect(), "spray");
  ASSERT_NE(find_derived(efa, "/fabric/technology"), nullptr);
  EXPECT_EQ(find_derived(efa, "/fabric/routing")->value, "\"spray\"");

  doc["fabric"] = {{"type", "spine_leaf"}, {"switch_radix", 64}};  // Ethernet: RoCE with ECMP unless said
  const ClusterSpec roce = parse_cluster_spec(doc.dump(), "t.json");
  EXPECT_EQ(roce.fabric.transport_in_effect(), "roce");
  EXPECT_EQ(roce.fabric.routing_in_effect(), "ecmp");
  EXPECT_EQ(find_derived(roce, "/fabric/transport")->value, "\"roce\"");
  EXPECT_EQ(find_derived(roce, "/fabric/routing")->value, "\"ecmp\"");

  doc["fabric"] = {{"type", "spine_leaf"}, {"switch_radix", 64}, {"transport", "spectrum_x"}};
  EXPECT_EQ(parse_cluster_spec(doc.dump(), "t.json").fabric.routing_in_effect(), "adaptive");

  // A derived spec survives the round trip through JSON.
  EXPECT_EQ(parse_cluster_spec(cluster_spec_to_json(efa), "t.json"), efa);
}

TEST(DerivedDefaults, ATransportOnTheWrongTechnologyIsRefused) {
  nlohmann::json doc = spec_with("h100-sxm5-80gb", {{"type", "nvswitch"}});
  doc["fabric"]["transport"] = "efa";  // the fabric says infiniband
  SpecError e = testing::spec_error_of([&] { parse_cluster_spec(doc.dump(), "t.json"); });
  EXPECT_EQ(e.file(), "t.json");
  EXPECT_EQ(e.json_path(), "/fabric/transport");
  EXPECT_NE(std::string(e.what()).find("transport efa runs on ethernet, this fabric's technology is infiniband"),
            std::string::npos)
      << e.what();
  doc["fabric"]["transport"] = "omnipath";
  e = testing::spec_error_of([&] { parse_cluster_spec(doc.dump(), "t.json"); });
  EXPECT_EQ(e.json_path(), "/fabric/transport");
  EXPECT_NE(std::string(e.what()).find("infiniband, roce, spectrum_x, efa, efa_v3, tcpxo"), std::string::npos)
      << e.what();
}

TEST(DerivedDefaults, AnAmdInstinctGpuImpliesTheXgmiMeshGenerationAndListsIt) {
  // MI300X / MI325X: xgmi3, 7 x 64 GB/s; MI355X: xgmi4, 7 x 76.8 GB/s (topologies/scale_up_generation.cpp).
  const std::pair<const char*, std::pair<const char*, double>> cases[] = {
      {"mi300x", {"xgmi3", 448.0}}, {"mi325x", {"xgmi3", 448.0}}, {"mi355x", {"xgmi4", 537.6}}};
  for (const auto& [gpu, expected] : cases) {
    const ClusterSpec spec = parse_cluster_spec(spec_with(gpu, {{"type", "xgmi_mesh"}}).dump(), "t.json");
    EXPECT_EQ(spec.node.scale_up.generation, expected.first) << gpu;
    EXPECT_DOUBLE_EQ(spec.node.scale_up.bandwidth_GBps, expected.second) << gpu;
    const DerivedDefault* g = find_derived(spec, "/node/scale_up/generation");
    ASSERT_NE(g, nullptr) << gpu;
    EXPECT_NE(g->why.find(std::string(gpu) + " carries " + expected.first), std::string::npos) << g->why;
    EXPECT_NE(g->why.find("7 Infinity Fabric links"), std::string::npos) << g->why;
    const DerivedDefault* b = find_derived(spec, "/node/scale_up/bandwidth_GBps");
    ASSERT_NE(b, nullptr) << gpu;
    EXPECT_NE(b->why.find("data sheet"), std::string::npos) << b->why;
  }
}

TEST(DerivedDefaults, AnAmdInstinctGpuImpliesTheXgmiMeshWhenTheTypeIsLeftOut) {
  // No scale_up.type: an MI300X platform is the Infinity Fabric mesh (and xgmi3), listed as derived; an
  // H100 keeps the default, nvswitch, which is no derivation.
  const ClusterSpec amd = parse_cluster_spec(spec_with("mi300x", nlohmann::json::object()).dump(), "t.json");
  EXPECT_EQ(amd.node.scale_up.type, "xgmi_mesh");
  EXPECT_EQ(amd.node.scale_up.generation, "xgmi3");
  const DerivedDefault* t = find_derived(amd, "/node/scale_up/type");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->value, "\"xgmi_mesh\"");
  EXPECT_NE(t->why.find("mi300x joins the 8 GPUs of its platform by 7 Infinity Fabric links"), std::string::npos)
      << t->why;
  EXPECT_EQ(parse_cluster_spec(cluster_spec_to_json(amd), "t.json"), amd);
  const ClusterSpec h100 = parse_cluster_spec(spec_with("h100-sxm5-80gb", {{"bandwidth_GBps", 450}}).dump(), "t.json");
  EXPECT_EQ(h100.node.scale_up.type, "nvswitch");
  EXPECT_EQ(find_derived(h100, "/node/scale_up/type"), nullptr);
}

}  // namespace
}  // namespace clustersim
