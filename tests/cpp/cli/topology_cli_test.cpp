// End to end through the CLI: `clustersim topology info` prints every preset's counts, bisection and
// diameter (or JSON), `clustersim topology export` writes SimGrid, DOT and JSON; bad input exits 2
// naming the file and the JSON path.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"

namespace clustersim {
namespace {

using namespace testing;  // cli_support.hpp: expect_refused, read_file, run_cli, write_temp

TEST(CliTopology, InfoPrintsTheTableOfEveryPreset) {
  const auto presets = run_cli("presets --json");
  ASSERT_EQ(presets.status, 0) << presets.err;
  const auto names = nlohmann::json::parse(presets.out)["clusters"];
  ASSERT_GE(names.size(), 7u);
  for (const auto& name : names) {
    const auto r = run_cli("topology info " + name.get<std::string>());
    EXPECT_EQ(r.status, 0) << name << ": " << r.err;
    EXPECT_EQ(r.out.rfind(name.get<std::string>() + ": ", 0), 0u) << r.out;
    for (const char* row : {"device", "ports of", "bisection", "diameter", "average route", "route lengths"})
      EXPECT_NE(r.out.find(row), std::string::npos) << name << " lacks '" << row << "':\n" << r.out;
  }
  // dgx-h100-superpod: 256 NICs / 2 x 50 GB/s; diameter 6 (GPU, NIC, leaf, spine, leaf, NIC, GPU).
  const auto r = run_cli("topology info dgx-h100-superpod");
  EXPECT_NE(r.out.find("dgx-h100-superpod: 32 nodes, 256 GPUs, racks: 8, fabric: fat_tree, rail-optimized, 2 tiers"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("6.4 TB/s, closed form (fat_tree)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("6 hops"), std::string::npos) << r.out;
}

TEST(CliTopology, InfoJsonWithOverrides) {
  const auto r =
      run_cli("topology info dgx-h100-superpod --json --set nodes=64 --set cluster.fabric.oversubscription=3");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);  // --json: the only thing on stdout
  EXPECT_EQ(j["gpus"], 512);
  // 3:1 at radix 64: u = 16, d = 48; 64 nodes -> 2 leaves per rail (48 + 16 nodes): 512 NIC ports
  // over 16 leaves x 16 uplinks = 256, so 2:1 over the whole leaf tier.
  EXPECT_EQ(j["oversubscription"][0]["tier"], "leaf_switch");
  EXPECT_DOUBLE_EQ(j["oversubscription"][0]["ratio"].get<double>(), 2.0);
  EXPECT_EQ(j["diameter_hops"], 6);
}

TEST(CliTopology, ExportsEveryFormat) {
  const auto xml = run_cli("topology export dgx-h100-superpod --set nodes=2 --format simgrid");
  ASSERT_EQ(xml.status, 0) << xml.err;
  EXPECT_EQ(xml.out.rfind("<?xml version='1.0'?>", 0), 0u);
  EXPECT_NE(xml.out.find("<host id=\"node1/gpu7\""), std::string::npos);
  const auto dot = run_cli("topology export dgx-h100 --format dot");
  ASSERT_EQ(dot.status, 0) << dot.err;
  EXPECT_EQ(dot.out.rfind("digraph \"dgx-h100\" {", 0), 0u);
  const std::string out = ::testing::TempDir() + "clustersim_topology.json";
  const auto json = run_cli("topology export torus-3d --format json --out " + out);
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_TRUE(json.out.empty()) << json.out;
  const auto j = nlohmann::json::parse(read_file(out));
  EXPECT_EQ(j["devices"].size(), 64u);
  EXPECT_EQ(j["links"].size(), 384u);
  EXPECT_EQ(j["spec"]["fabric"]["dims"], nlohmann::json::parse("[4, 4, 4]"));
}

TEST(CliTopology, BadInputExitsTwo) {
  const std::string torus = write_temp("bad_torus.json", R"({
    "name": "bad", "gpu": "h100-sxm5-80gb", "nodes": 16,
    "node": {"gpus": 4, "scale_up": {"type": "none"}, "nics": 0},
    "fabric": {"type": "torus", "dims": [4, 0, 4]}
  })");
  auto r = expect_refused("topology info " + torus,
                          {torus + ": /fabric/dims/1: expected a torus dimension between 1 and 65535, got 0"});
  EXPECT_TRUE(r.out.empty());

  expect_refused("topology info dgx-a100-superpod --set nodes=256 --set fabric.tiers=2",
                 {"/fabric/switch_radix: radix 40 too small for 2048 NICs with 2 tiers"});

  expect_refused("topology export dgx-h100 --format svg", {"unknown format 'svg' (formats: simgrid, dot, json)"});

  expect_refused("topology info", {"missing the cluster"});

  expect_refused("topology draw dgx-h100", {"unknown subcommand 'draw' (expected info or export)"});

  expect_refused("topology info dgx-h100 --set parallelism.tp=2", {"topology commands take cluster keys only"});
}

}  // namespace
}  // namespace clustersim
