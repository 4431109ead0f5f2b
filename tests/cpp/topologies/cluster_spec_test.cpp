// Cluster spec parsing: every bad value is refused with the exact JSON pointer of the value; good
// specs survive a round trip through JSON unchanged.
#include "topologies/cluster_spec.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../spec_error_of.hpp"
#include "sim/core/error.hpp"
#include "topologies/cluster.hpp"

namespace clustersim {
namespace {

nlohmann::json base_spec() {
  return nlohmann::json::parse(R"({
    "name": "test",
    "gpu": "h100-sxm5-80gb",
    "nodes": 4,
    "node": {"gpus": 8, "scale_up": {"type": "nvswitch", "bandwidth_GBps": 450, "latency_us": 0.7},
             "nics": 8, "nic_bandwidth_Gbps": 400},
    "fabric": {"type": "fat_tree", "tiers": 2, "switch_radix": 64, "oversubscription": 1.0,
               "rail_optimized": true, "link_latency_us": 0.6, "technology": "infiniband"},
    "power": {"pue": 1.3},
    "cost": {"electricity_usd_per_kwh": 0.10, "amortization_years": 4}
  })");
}

struct BadSpec {
  const char* label;
  const char* pointer;     // where to change the base spec
  const char* value;       // JSON text of the new value, or nullptr to remove the key
  const char* error_path;  // expected SpecError::json_path()
  const char* fragment;    // expected part of the message
  bool at_build = false;   // the error is found when building the cluster, not when parsing
};

void PrintTo(const BadSpec& b, std::ostream* os) {
  *os << b.label;
}

class BadSpecTest : public ::testing::TestWithParam<BadSpec> {};

TEST_P(BadSpecTest, IsRefusedAtItsJsonPointer) {
  const BadSpec& b = GetParam();
  nlohmann::json doc = base_spec();
  const nlohmann::json::json_pointer ptr(b.pointer);
  if (b.value == nullptr)
    doc[ptr.parent_pointer()].erase(ptr.back());
  else
    doc[ptr] = nlohmann::json::parse(b.value);
  try {
    const ClusterSpec spec = parse_cluster_spec(doc.dump(), "bad.json");
    ASSERT_TRUE(b.at_build) << "parsed without error: " << doc.dump();
    Cluster::build(spec);
    FAIL() << "built without error: " << doc.dump();
  } catch (const SpecError& e) {
    EXPECT_EQ(e.json_path(), b.error_path) << e.what();
    EXPECT_EQ(e.file(), "bad.json");
    EXPECT_NE(e.message().find(b.fragment), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    ClusterSpec, BadSpecTest,
    ::testing::Values(
        BadSpec{"nodes_zero", "/nodes", "0", "/nodes", "expected an integer >= 1, got 0"},
        BadSpec{"nodes_wrong_type", "/nodes", R"("32")", "/nodes", "got the string \"32\""},
        BadSpec{"nodes_fractional", "/nodes", "2.5", "/nodes", "expected an integer"},
        BadSpec{"negative_scale_up_bandwidth", "/node/scale_up/bandwidth_GBps", "-450", "/node/scale_up/bandwidth_GBps",
                "expected a number between 0.001 and 100000, got -450"},
        BadSpec{"zero_nic_bandwidth", "/node/nic_bandwidth_Gbps", "0", "/node/nic_bandwidth_Gbps",
                "expected a number between 0.001 and 1000000, got 0"},
        BadSpec{"negative_latency", "/fabric/link_latency_us", "-1", "/fabric/link_latency_us",
                "expected a number between 0 and 1000000, got -1"},
        BadSpec{"typo_did_you_mean", "/fabric/oversubscripton", "2", "/fabric/oversubscripton",
                "unknown key 'oversubscripton' (did you mean 'oversubscription'?)"},
        BadSpec{"top_level_typo", "/fabirc", "{}", "/fabirc", "(did you mean 'fabric'?)"},
        BadSpec{"unknown_fabric_type", "/fabric/type", R"("fat_tre")", "/fabric/type",
                "expected one of fat_tree, rail_optimized, spine_leaf, dragonfly, torus, single_node, graph, "
                "got \"fat_tre\""},
        BadSpec{"four_tiers", "/fabric/tiers", "4", "/fabric/tiers", "expected 2 or 3 tiers for a fat-tree, got 4"},
        BadSpec{"spine_leaf_three_tiers", "/fabric", R"({"type": "spine_leaf", "tiers": 3})", "/fabric/tiers",
                "a spine_leaf fabric has 2 tiers, got 3"},
        BadSpec{"rail_type_not_rail", "/fabric", R"({"type": "rail_optimized", "rail_optimized": false})",
                "/fabric/rail_optimized", "always rail-optimized, got false"},
        BadSpec{"torus_dimension_zero", "/fabric", R"({"type": "torus", "dims": [4, 0, 2]})", "/fabric/dims/1",
                "expected a torus dimension between 1 and 65535, got 0"},
        BadSpec{"torus_dimension_fraction", "/fabric", R"({"type": "torus", "dims": [4, 2.5]})", "/fabric/dims/1",
                "expected an integer >= 1, got the number 2.5"},
        BadSpec{"torus_without_dims", "/fabric", R"({"type": "torus"})", "/fabric/dims", "required key is missing"},
        BadSpec{"torus_dims_wrong_product", "/fabric", R"({"type": "torus", "dims": [4, 4]})", "/fabric/dims",
                "expected the product of dims (4 x 4 = 16) to equal the GPU count nodes x node.gpus = 4 x 8 = 32",
                true},
        BadSpec{"dims_on_a_fat_tree", "/fabric/dims", "[4, 4]", "/fabric/dims",
                "only fabric type torus takes dims, this fabric is fat_tree"},
        BadSpec{"planes_on_a_torus", "/fabric", R"({"type": "torus", "dims": [32], "planes": 2})", "/fabric/planes",
                "fabric type torus has no planes"},
        BadSpec{"dragonfly_without_groups", "/fabric", R"({"type": "dragonfly"})", "/fabric/groups",
                "required key is missing"},
        BadSpec{"dragonfly_too_many_groups", "/fabric",
                R"({"type": "dragonfly", "groups": 10, "routers_per_group": 2, "global_links_per_router": 2})",
                "/fabric/groups", "expected at most routers_per_group x global_links_per_router + 1 = 5 groups", true},
        BadSpec{"graph_link_zero_bandwidth", "/fabric",
                R"({"type": "graph", "links": [{"src": "node0/nic0", "dst": "node1/nic0", "bandwidth_Gbps": 0}]})",
                "/fabric/links/0/bandwidth_Gbps", "expected a number between 0.001 and 1000000, got 0"},
        BadSpec{"graph_link_negative_bandwidth", "/fabric",
                R"({"type": "graph", "links": [{"src": "node0/nic0", "dst": "node1/nic0"},
                                               {"src": "node1/nic0", "dst": "node2/nic0", "bandwidth_Gbps": -400}]})",
                "/fabric/links/1/bandwidth_Gbps", "expected a number between 0.001 and 1000000, got -400"},
        BadSpec{"graph_unknown_device", "/fabric",
                R"({"type": "graph", "links": [{"src": "node0/nic0", "dst": "sw9"}]})", "/fabric/links/0/dst",
                "unknown device \"sw9\"", true},
        BadSpec{"graph_link_to_itself", "/fabric",
                R"({"type": "graph", "links": [{"src": "node0/nic0", "dst": "node0/nic0"}]})", "/fabric/links/0/dst",
                "expected a device other than the source"},
        BadSpec{"graph_disconnected", "/fabric",
                R"({"type": "graph", "devices": [{"name": "sw"}],
                    "links": [{"src": "node0/nic0", "dst": "sw"}, {"src": "node1/nic0", "dst": "sw"},
                              {"src": "node2/nic0", "dst": "sw"}]})",
                // NIC 0 of node 1 hangs off its GPU 0 only: GPU 9 is the first GPU that GPU 0 cannot reach.
                "/fabric", "the built cluster is not connected: GPU 0 (node0/gpu0) cannot reach GPU 9 (node1/gpu1)",
                true},
        BadSpec{"gpus_not_dividing_the_nvswitch_domain", "/node/scale_up/domain_gpus", "12", "/node/gpus",
                "expected node.gpus to divide scale_up.domain_gpus (12: an NVLink domain spans whole nodes), got 8",
                true},
        BadSpec{"nodes_not_filling_the_nvswitch_domain", "/node/scale_up/domain_gpus", "24", "/nodes",
                "expected a multiple of 3 (an NVLink domain of 24 GPUs spans 3 nodes of 8 GPUs), got 4", true},
        BadSpec{"nvswitch_domain_too_large_for_its_generation", "/node/scale_up",
                R"({"type": "nvswitch", "generation": "nvlink3", "domain_gpus": 32})", "/node/scale_up/domain_gpus",
                "an nvlink3 NVSwitch domain holds at most 16 GPUs (A100), got 32", true},
        BadSpec{"pcie_generation_on_nvswitch", "/node/scale_up", R"({"type": "nvswitch", "generation": "pcie4"})",
                "/node/scale_up/generation", "scale_up type nvswitch needs an NVLink generation, got \"pcie4\""},
        BadSpec{"nvlink_mesh_without_pcie", "/node/scale_up", R"({"type": "nvlink_mesh", "bandwidth_GBps": 150})",
                "/node/pcie_switches", "nvlink_mesh leaves GPU pairs without NVLink (GPU 0 and GPU 5)", true},
        BadSpec{"domain_on_a_mesh", "/node/scale_up",
                R"({"type": "nvlink_mesh", "bandwidth_GBps": 150, "domain_gpus": 16})", "/node/scale_up/domain_gpus",
                "only scale_up type nvswitch has NVLink domains across nodes"},
        BadSpec{"radix_fractional", "/fabric/switch_radix", "64.5", "/fabric/switch_radix", "expected an integer"},
        BadSpec{"radix_one", "/fabric/switch_radix", "1", "/fabric/switch_radix", "expected an integer >= 2"},
        BadSpec{"oversubscription_below_one", "/fabric/oversubscription", "0.5", "/fabric/oversubscription",
                "expected a number >= 1"},
        BadSpec{"rail_not_bool", "/fabric/rail_optimized", R"("yes")", "/fabric/rail_optimized",
                "expected true or false"},
        BadSpec{"technology", "/fabric/technology", R"("roce")", "/fabric/technology",
                "expected one of infiniband, ethernet"},
        BadSpec{"routing", "/fabric/routing", R"("random")", "/fabric/routing",
                "expected one of auto, adaptive, d_mod_k, ecmp, spray"},
        BadSpec{"scale_up_type", "/node/scale_up/type", R"("nvlink")", "/node/scale_up/type",
                "expected one of nvswitch, nvlink_mesh, nvlink_pairs, xgmi_mesh, pcie, none"},
        BadSpec{"pue_below_one", "/power/pue", "0.9", "/power/pue", "expected a number between 1 and 10, got 0.9"},
        BadSpec{"amortization_zero", "/cost/amortization_years", "0", "/cost/amortization_years",
                "expected a number > 0"},
        BadSpec{"negative_price", "/cost/electricity_usd_per_kwh", "-0.1", "/cost/electricity_usd_per_kwh",
                "expected a number between 0 and 1000, got -0.1"},
        BadSpec{"missing_gpu", "/gpu", nullptr, "/gpu", "required key is missing"},
        BadSpec{"gpu_number", "/gpu", "42", "/gpu", "inline GPU object, got the number 42"},
        // (A missing bandwidth_GBps is filled from the GPU's generation: the H100 SXM implies NVLink 4.
        // A GPU that implies nothing still needs it: derived_defaults_test.cpp.)
        BadSpec{"missing_node", "/node", nullptr, "/node", "required key is missing"},
        BadSpec{"single_node_with_two_nodes", "/fabric", R"({"type": "single_node"})", "/nodes",
                "single_node requires nodes = 1, got 4"},
        BadSpec{"fabric_not_object", "/fabric", "[1, 2]", "/fabric", "expected an object, got an array"},
        // 4 rail-optimized nodes of 8 NICs at radix 6: d = 3, 8 * ceil(4 / 3) = 16 leaves > 6 spine ports.
        // Radix 7: still d = 3. Radix 8: d = 4, 8 * 1 = 8 leaves <= 8.
        BadSpec{"radix_too_small_for_nics", "/fabric/switch_radix", "6", "/fabric/switch_radix",
                "radix 6 too small for 32 NICs with 2 tiers (needs >= 8, or fabric.tiers = 3)", true},
        BadSpec{"nics_zero_multi_node", "/node/nics", "0", "/node/nics", "needs nics >= 1", true}),
    [](const ::testing::TestParamInfo<BadSpec>& param_info) { return std::string(param_info.param.label); });

// Builds `doc` and returns the SpecError it raises (nullopt if none).
std::optional<SpecError> build_error(const nlohmann::json& doc) {
  try {
    Cluster::build(parse_cluster_spec(doc.dump(), "radix.json"));
  } catch (const SpecError& e) {
    return e;
  }
  return std::nullopt;
}

TEST(ClusterSpecValidation, RadixTooSmallNamesTheRadixNeeded) {
  // 101 rail-optimized nodes at radix 40: needs 42 (worked out in the table above).
  nlohmann::json doc = base_spec();
  doc["nodes"] = 101;
  doc["fabric"]["switch_radix"] = 40;
  const auto e = build_error(doc);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->json_path(), "/fabric/switch_radix");
  EXPECT_EQ(e->message(), "radix 40 too small for 808 NICs with 2 tiers (needs >= 42, or fabric.tiers = 3)");

  // The same 101 nodes in 3 tiers at radix 40: d = 20, 6 groups of 20 nodes (the last of 1) = 48 rail
  // leaves, pods of 16 leaves: 3 pods <= 40. Radix 4 in 3 tiers: pods of 2 leaves cannot hold 8
  // rails (E = floor(2 / 8) * 8 = 0); radix 16 is the first with E = 8 and 101 / 8 -> 13 groups =
  // 13 pods <= 16.
  doc["fabric"]["tiers"] = 3;
  EXPECT_FALSE(build_error(doc).has_value());
  doc["fabric"]["switch_radix"] = 4;
  const auto e3 = build_error(doc);
  ASSERT_TRUE(e3.has_value());
  EXPECT_EQ(e3->json_path(), "/fabric/switch_radix");
  EXPECT_EQ(e3->message(), "radix 4 too small for 808 NICs with 3 tiers (needs >= 16)");

  // 2:1 on 2-port switches: u = floor(2 / 3) = 0 uplinks. The smallest radix that holds one node's 8
  // rail-optimized NICs at 2:1 is 8 (u = 2, d = 4, 8 leaves <= 8 spine ports; radix 7 needs 8 leaves).
  doc = base_spec();
  doc["nodes"] = 1;
  doc["fabric"]["switch_radix"] = 2;
  doc["fabric"]["oversubscription"] = 2;
  const auto e2 = build_error(doc);
  ASSERT_TRUE(e2.has_value());
  EXPECT_EQ(e2->json_path(), "/fabric/switch_radix");
  EXPECT_NE(e2->message().find("too small for oversubscription 2"), std::string::npos) << e2->what();
  EXPECT_NE(e2->message().find("needs >= 8"), std::string::npos) << e2->what();
}

TEST(ClusterSpecValidation, MalformedJsonGivesLineAndColumn) {
  // Line 3 is `  "nodes": ,`: the stray comma is its 12th character.
  const std::string text = "{\n  \"name\": \"x\",\n  \"nodes\": ,\n  \"gpu\": \"b200\"\n}";
  const SpecError e = testing::spec_error_of([&] { parse_cluster_spec(text, "broken.json"); });
  EXPECT_EQ(e.file(), "broken.json");
  EXPECT_EQ(e.json_path(), "");
  EXPECT_NE(e.message().find("line 3, column 12"), std::string::npos) << e.what();
}

TEST(ClusterSpecValidation, BadOverridePathIsRefused) {
  // `nodes` is a number: nothing can be set inside it.
  {
    const SpecError e = testing::spec_error_of([&] { load_cluster_spec("dgx-h100-superpod", {{"nodes.count", "4"}}); });
    EXPECT_EQ(e.json_path(), "/nodes");
    EXPECT_EQ(e.file(), "--set nodes.count=4");
    EXPECT_NE(e.message().find("cannot set a key inside the number 32"), std::string::npos) << e.what();
  }
  // A misspelt key lands in the document and is refused as unknown, with a suggestion.
  {
    const SpecError e = testing::spec_error_of([&] {
      load_cluster_spec("dgx-h100-superpod", {{"fabric.switch_radx", "32"}});
    });
    EXPECT_EQ(e.json_path(), "/fabric/switch_radx");
    EXPECT_NE(e.message().find("did you mean 'switch_radix'?"), std::string::npos) << e.what();
  }
  // A bad value given by --set is reported at its path.
  {
    const SpecError e = testing::spec_error_of([&] { load_cluster_spec("dgx-h100-superpod", {{"power.pue", "0.5"}}); });
    EXPECT_EQ(e.json_path(), "/power/pue");
  }
}

TEST(ClusterSpecValidation, UnknownPresetListsTheKnownOnes) {
  const SpecError e = testing::spec_error_of([&] { load_cluster_spec("dgx-h100-superpad"); });
  EXPECT_NE(e.message().find("dgx-a100-superpod, dgx-b200-superpod, dgx-h100, dgx-h100-superpod"), std::string::npos)
      << e.what();
}

TEST(ClusterSpecParsing, OverridesApplyBeforeValidation) {
  const ClusterSpec spec = load_cluster_spec(
      "dgx-h100-superpod", {{"nodes", "64"}, {"fabric.oversubscription", "2"}, {"fabric.rail_optimized", "false"}});
  EXPECT_EQ(spec.nodes, 64);
  EXPECT_EQ(spec.gpu_count(), 512);
  EXPECT_DOUBLE_EQ(spec.fabric.oversubscription, 2.0);
  EXPECT_FALSE(spec.fabric.rail_optimized);
  EXPECT_EQ(spec.source_file, "topologies/presets/dgx-h100-superpod.json");
}

TEST(ClusterSpecParsing, MinimalSpecGetsTheDocumentedDefaults) {
  const ClusterSpec spec =
      parse_cluster_spec(R"({"gpu": "b200", "node": {"scale_up": {"bandwidth_GBps": 900}}})", "min.json");
  EXPECT_EQ(spec.name, "");
  EXPECT_EQ(spec.gpu_id, "b200");
  EXPECT_EQ(spec.gpu_inline_json, "");
  EXPECT_EQ(spec.nodes, 1);
  EXPECT_EQ(spec.node.gpus, 8);
  EXPECT_EQ(spec.node.scale_up.type, "nvswitch");
  EXPECT_DOUBLE_EQ(spec.node.scale_up.bandwidth_GBps, 900.0);
  // The B200 implies NVLink 5 (with NVLS) and its figures where the spec gives none (issue 17).
  EXPECT_EQ(spec.node.scale_up.generation, "nvlink5");
  EXPECT_DOUBLE_EQ(spec.node.scale_up.latency_us, 0.7);
  EXPECT_EQ(spec.node.nics, 8);
  EXPECT_DOUBLE_EQ(spec.node.nic_bandwidth_Gbps, 400.0);
  EXPECT_DOUBLE_EQ(spec.node.pcie_bandwidth_GBps, 64.0);
  EXPECT_EQ(spec.fabric.type, "fat_tree");
  EXPECT_EQ(spec.fabric.tiers, 2);
  EXPECT_EQ(spec.fabric.switch_radix, 64);
  EXPECT_DOUBLE_EQ(spec.fabric.oversubscription, 1.0);
  EXPECT_FALSE(spec.fabric.rail_optimized);
  EXPECT_DOUBLE_EQ(spec.fabric.link_latency_us, 0.6);
  EXPECT_EQ(spec.fabric.technology, "infiniband");
  EXPECT_DOUBLE_EQ(spec.power.pue, 1.3);
  EXPECT_DOUBLE_EQ(spec.cost.electricity_usd_per_kwh, 0.10);
  EXPECT_DOUBLE_EQ(spec.cost.amortization_years, 4.0);
  EXPECT_EQ(spec.source_file, "min.json");
}

TEST(ClusterSpecParsing, InlineGpuObjectIsKeptAsJson) {
  nlohmann::json doc = base_spec();
  doc["gpu"] = nlohmann::json::parse(R"({"base": "h100-sxm5-80gb", "hbm_bandwidth_GBps": 4000})");
  const ClusterSpec spec = parse_cluster_spec(doc.dump(), "inline.json");
  EXPECT_EQ(spec.gpu_id, "");
  EXPECT_EQ(nlohmann::json::parse(spec.gpu_inline_json), doc["gpu"]);
  EXPECT_EQ(ClusterSpec::gpu_json_path, "/gpu");
}

TEST(ClusterSpecRoundTrip, SpecToJsonToSpecIsTheIdentity) {
  // Every key away from its default, and an inline GPU.
  const std::string text = R"({
    "name": "odd", "description": "round trip",
    "gpu": {"base": "a100-sxm4-80gb", "sm_count": 100},
    "nodes": 3,
    "node": {"gpus": 4, "scale_up": {"type": "pcie", "bandwidth_GBps": 31.5, "latency_us": 1.25},
             "nics": 2, "nic_bandwidth_Gbps": 100, "pcie_bandwidth_GBps": 16},
    "fabric": {"type": "fat_tree", "tiers": 2, "switch_radix": 12, "oversubscription": 1.5,
               "rail_optimized": true, "link_latency_us": 0.35, "technology": "ethernet"},
    "power": {"pue": 1.55},
    "cost": {"electricity_usd_per_kwh": 0.071, "amortization_years": 5.5}
  })";
  const ClusterSpec a = parse_cluster_spec(text, "x.json");
  const std::string json = cluster_spec_to_json(a);
  const ClusterSpec b = parse_cluster_spec(json, "x.json");
  EXPECT_EQ(a, b) << json;
  EXPECT_EQ(b.node.scale_up.type, "pcie");
  EXPECT_DOUBLE_EQ(b.node.scale_up.bandwidth_GBps, 31.5);
  EXPECT_DOUBLE_EQ(b.cost.electricity_usd_per_kwh, 0.071);
  EXPECT_EQ(b.description, "round trip");

  // All keys are written, defaults included: 8 top-level keys, 6 in node, 2 in scale_up (type and
  // latency; bandwidth_GBps is written when set), 10 in fabric (type-specific keys only when used).
  const ClusterSpec minimal =
      parse_cluster_spec(R"({"gpu": "l4", "node": {"scale_up": {"bandwidth_GBps": 64}}})", "m.json");
  const nlohmann::json out = nlohmann::json::parse(cluster_spec_to_json(minimal));
  EXPECT_EQ(out.size(), 8u);
  EXPECT_EQ(out["node"].size(), 6u);
  EXPECT_EQ(out["node"]["scale_up"].size(), 3u);
  EXPECT_EQ(out["fabric"].size(), 10u);
  EXPECT_EQ(out["fabric"]["routing"], "auto");
  EXPECT_EQ(out["fabric"]["switch_radix"], 64);
  EXPECT_EQ(parse_cluster_spec(out.dump(), "m.json"), minimal);
}

TEST(ClusterSpecRoundTrip, ExtendedKeysRoundTrip) {
  // One spec per fabric family, every extension key away from its default.
  const char* texts[] = {
      R"({"gpu": "b200", "nodes": 36,
          "node": {"gpus": 4, "scale_up": {"type": "nvswitch", "generation": "nvlink5", "domain_gpus": 72},
                   "nics": 4, "pcie_switches": 2},
          "fabric": {"type": "rail_optimized", "tiers": 3, "switch_radix": 32, "planes": 2,
                     "nodes_per_rack": 18}})",
      R"({"gpu": "h100-sxm5-80gb", "nodes": 8, "node": {"scale_up": {"bandwidth_GBps": 450}},
          "fabric": {"type": "spine_leaf", "switch_radix": 24, "oversubscription": 2, "spines": 4,
                     "spine_radix": 128}})",
      R"({"gpu": "h100-sxm5-80gb", "nodes": 16, "node": {"gpus": 4, "scale_up": {"type": "none"}, "nics": 0},
          "fabric": {"type": "torus", "dims": [4, 4, 4], "link_bandwidth_Gbps": 800}})",
      R"({"gpu": "h100-sxm5-80gb", "nodes": 16, "node": {"gpus": 8, "scale_up": {"bandwidth_GBps": 450}},
          "fabric": {"type": "dragonfly", "groups": 4, "routers_per_group": 4, "global_links_per_router": 2,
                     "switch_radix": 16}})",
      R"({"gpu": "v100-sxm2-32gb", "nodes": 2,
          "node": {"gpus": 8, "scale_up": {"type": "nvlink_mesh", "generation": "nvlink2"}, "nics": 4,
                   "pcie_switches": 4},
          "fabric": {"type": "graph", "devices": [{"name": "sw", "kind": "leaf_switch", "forwards": true}],
                     "links": [{"src": "node0/nic0", "dst": "sw", "bandwidth_Gbps": 100, "latency_us": 0.3,
                                "technology": "ethernet", "duplex": false}]}})",
  };
  for (const char* text : texts) {
    const ClusterSpec a = parse_cluster_spec(text, "x.json");
    const std::string json = cluster_spec_to_json(a);
    EXPECT_EQ(a, parse_cluster_spec(json, "x.json")) << json;
  }
  // Figures default from the generation: NVLink 5 is 900 GB/s per direction per GPU.
  const ClusterSpec nvl = parse_cluster_spec(texts[0], "x.json");
  EXPECT_DOUBLE_EQ(nvl.node.scale_up.bandwidth_GBps, 900.0);
  EXPECT_EQ(nvl.domain_gpus(), 72);
  EXPECT_EQ(nvl.nodes_per_domain(), 18);
  EXPECT_EQ(nvl.nodes_per_rack(), 18);
  EXPECT_EQ(parse_cluster_spec(texts[1], "x.json").fabric.technology, "ethernet");        // spine_leaf default
  EXPECT_EQ(parse_cluster_spec(texts[2], "x.json").fabric.technology, "nvlink");          // torus default
  EXPECT_EQ(parse_cluster_spec(texts[4], "x.json").node.scale_up.bandwidth_GBps, 150.0);  // NVLink 2
  const ClusterSpec graph = parse_cluster_spec(texts[4], "x.json");
  ASSERT_EQ(graph.fabric.links.size(), 1u);
  EXPECT_FALSE(graph.fabric.links[0].duplex);
  EXPECT_EQ(graph.fabric.links[0].technology, "ethernet");
}

TEST(ClusterSpecRoundTrip, EveryPresetRoundTrips) {
  const auto names = cluster_preset_names();
  ASSERT_EQ(names,
            (std::vector<std::string>{"amd-mi300x-roce",   "amd-mi325x-roce",   "amd-mi355x-roce",  "aws-p5",
                                      "aws-p5e",           "aws-p5en",          "azure-nd-h100-v5", "azure-nd-h200-v5",
                                      "dgx-a100-superpod", "dgx-b200-superpod", "dgx-h100",         "dgx-h100-superpod",
                                      "dgx-h200-superpod", "gb200-nvl72",       "gb300-nvl72",      "gcp-a3-mega",
                                      "gcp-a3-ultra",      "hgx-b200-roce",     "hgx-h100-roce",    "l4-pcie-server",
                                      "oci-bm-gpu-h100-8", "torus-3d"}));
  for (const auto& name : names) {
    const ClusterSpec a = load_cluster_spec(name);
    EXPECT_EQ(a.name, name);
    EXPECT_FALSE(a.description.empty()) << name << ": presets state where their figures come from";
    const ClusterSpec b = parse_cluster_spec(cluster_spec_to_json(a), a.source_file);
    EXPECT_EQ(a, b) << name;
  }
}

TEST(ClusterSpec, SharpNeedsInfiniband) {
  const SpecError e = testing::spec_error_of([&] {
    parse_cluster_spec(R"({"gpu": "h100-sxm5-80gb", "nodes": 2, "node": {"scale_up": {"bandwidth_GBps": 450}},
                           "fabric": {"technology": "ethernet", "sharp": true}})",
                       "c.json");
  });
  EXPECT_EQ(e.json_path(), "/fabric/sharp");
}

}  // namespace
}  // namespace clustersim
