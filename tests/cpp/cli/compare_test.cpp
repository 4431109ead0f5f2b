// clustersim compare end to end: two cluster designs, one workload, one table (and its JSON).
#include <initializer_list>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"

namespace clustersim {
namespace {

using testing::expect_refused;
using testing::run_cli;
using testing::write_temp;

// Two 2-node H100 designs: NDR InfiniBand fat-tree, and 400GbE spine-leaf at 2:1.
std::string design(const std::string& name, const std::string& fabric, const std::string& extra = "") {
  return write_temp(name + ".json", R"({"name": ")" + name + R"(", "gpu": "h100-sxm5-80gb", "nodes": 2,
    "node": {"gpus": 8, "scale_up": {"type": "nvswitch", "generation": "nvlink4"}, "nics": 8, "nic_bandwidth_Gbps": 400},
    "fabric": )" + fabric + extra + "}");
}

// `compare` of the preset `workload` on each of the preset `clusters`, each sized by `sizing` (--gpus N or
// --budget-usd X), at analytical fidelity, as JSON.
testing::CliResult compare_sized(const std::string& sizing, const std::string& workload,
                                 std::initializer_list<std::string> clusters) {
  std::string args = "compare " + sizing + " --workload " + workload + " --fidelity analytical --json";
  for (const std::string& c : clusters)
    args += " --cluster " + c;
  return run_cli(args);
}

const std::string kWorkload =
    " --workload gpt3-1.3b --set workload.training.global_batch=16 --set workload.training.micro_batch=1 "
    "--fidelity analytical";

TEST(CliCompare, JsonHasEveryDesignWithItsTrainingRunAndParetoMark) {
  const std::string ib = design("ib", R"({"type": "fat_tree", "switch_radix": 64})");
  const std::string eth = design("roce", R"({"type": "spine_leaf", "switch_radix": 64, "oversubscription": 2})");
  const auto r = run_cli("compare --cluster " + ib + " --cluster " + eth + kWorkload + " --tokens 2B --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["tokens"].get<double>(), 2e9);
  ASSERT_EQ(j["designs"].size(), 2u);
  int pareto = 0;
  for (const auto& d : j["designs"]) {
    const double tokens_per_s = d["tokens_per_s"];
    EXPECT_NEAR(d["train_time_s"].get<double>(), 2e9 / tokens_per_s, 1e-6 * 2e9 / tokens_per_s);
    const double steps = 2e9 / (16.0 * 2048.0);
    EXPECT_NEAR(d["train_cost_usd"].get<double>(), steps * d["report"]["cost"]["usd_per_step"].get<double>(),
                1e-6 * d["train_cost_usd"].get<double>());
    EXPECT_GT(d["capex_usd"].get<double>(), 16 * 30000.0);
    EXPECT_GT(d["energy_per_token_j"].get<double>(), 0.0);
    EXPECT_TRUE(d["fits"].get<bool>());
    pareto += d["pareto"].get<bool>() ? 1 : 0;
    // The run with failures, checkpoints and restarts: the report's time_to_train; it takes at least the
    // failure-free time, and its days' percentiles are ordered.
    const auto& ttt = d["report"]["time_to_train"];
    EXPECT_EQ(d["goodput"].get<double>(), ttt["goodput"].get<double>());
    EXPECT_GT(d["goodput"].get<double>(), 0.0);
    EXPECT_LE(d["goodput"].get<double>(), 1.0);
    EXPECT_GE(d["run_time_s"].get<double>(), d["train_time_s"].get<double>() * (1 - 1e-12));
    EXPECT_LE(d["train_days_p10"].get<double>(), d["train_days_p50"].get<double>());
    EXPECT_LE(d["train_days_p50"].get<double>(), d["train_days_p90"].get<double>());
  }
  EXPECT_GE(pareto, 1);
  // The front is taken on the runs with failures: a design is Pareto exactly when no other is at least as
  // fast and as cheap there and better in one.
  for (const auto& d : j["designs"]) {
    bool dominated = false;
    for (const auto& o : j["designs"])
      if (o["design"] != d["design"] && o["run_time_s"] <= d["run_time_s"] && o["run_cost_usd"] <= d["run_cost_usd"] &&
          (o["run_time_s"] < d["run_time_s"] || o["run_cost_usd"] < d["run_cost_usd"]))
        dominated = true;
    EXPECT_EQ(d["pareto"].get<bool>(), !dominated) << d["design"];
  }
  EXPECT_EQ(j["designs"][0]["design"], "ib");
}

// The purchase report (--html): one self-contained page (no script, no external resource), the same
// designs and Pareto marks as the JSON, a chart point and a table row per design, a failed design's
// reason, written whole, and the same bytes twice.
TEST(CliCompare, HtmlReportIsSelfContainedAndAgreesWithTheJson) {
  const std::string ib = design("ib", R"({"type": "fat_tree", "switch_radix": 64})");
  const std::string eth = design("roce", R"({"type": "spine_leaf", "switch_radix": 64, "oversubscription": 2})");
  const std::string page = testing::temp_path("compare_report.html");
  const std::string args = "compare --cluster " + ib + " --cluster " + eth + kWorkload + " --tokens 2B --json";
  const auto r = run_cli(args + " --html " + page);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const std::string html = testing::read_file(page);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  EXPECT_LT(html.size(), 5u << 20);
  for (const char* external : {"<script", "src=", "href=", "http://", "https://", "@import", "url("})
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  auto count = [&](const std::string& s) {
    std::size_t n = 0;
    for (std::size_t at = html.find(s); at != std::string::npos; at = html.find(s, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count("<circle class=\"point"), 2u);  // the time-vs-cost chart: one point per design
  std::size_t pareto = 0;
  for (const auto& d : j["designs"]) {
    EXPECT_NE(html.find("<tr><td>" + d["design"].get<std::string>() + "</td>"), std::string::npos) << d["design"];
    pareto += d["pareto"].get<bool>() ? 1 : 0;
  }
  EXPECT_EQ(count("<circle class=\"point pareto\""), pareto);
  EXPECT_NE(html.find("<table id=\"time-to-train\">"), std::string::npos);
  for (const char* section : {"Designs side by side", "Step time", "Time and cost to train", "Cost per hour", "Power",
                              "Bottleneck links", "Assumptions and sources"})
    EXPECT_NE(html.find(std::string("<h2>") + section), std::string::npos) << section;
  // Deterministic: the same comparison writes the same bytes.
  ASSERT_EQ(run_cli(args + " --html " + page).status, 0);
  EXPECT_EQ(testing::read_file(page), html);
  // The report is refused with --serving, and when it would overwrite an input.
  expect_refused("compare --cluster " + ib + " --serving llama3-8b-h100 --html " + page);
  expect_refused("compare --cluster " + ib + kWorkload + " --html " + ib, {"HTML report"});
}

// --gpus: every design sized to the count by its own rules, the workload's dp derived from it; a design
// that cannot reach it is a row with the reason (exit 1) and the others still compare.
TEST(CliCompare, GpusSizesEveryDesignAndSaysWhichCannot) {
  const auto r = compare_sized("--gpus 1024", "gpt3-175b", {"dgx-h100-superpod", "hgx-h100-roce", "dgx-h100"});
  EXPECT_EQ(r.status, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["designs"].size(), 3u);
  for (int i = 0; i < 2; ++i) {
    const auto& d = j["designs"][i];
    ASSERT_FALSE(d.contains("error")) << d;
    EXPECT_EQ(d["gpus"], 1024);
    EXPECT_EQ(d["report"]["run"]["parallelism"]["dp"],
              16);  // 1024 / (tp 8 x pp 8): the preset's dp 24 left to the cluster
  }
  EXPECT_NE(j["designs"][2]["error"].get<std::string>().find("single_node"), std::string::npos);
  EXPECT_NE(r.err.find("hgx-h100-roce sized to 1024 GPUs: nodes 64 -> 128, fabric.spines 7 -> 21"), std::string::npos)
      << r.err;
  expect_refused("compare --gpus 0 --workload gpt3-1.3b --cluster dgx-h100-superpod");
  expect_refused("compare --gpus many --workload gpt3-1.3b --cluster dgx-h100-superpod");
}

// --budget-usd: each design at the most GPUs its capital cost allows, in whole model replicas whose
// data-parallel size divides the step's micro-batches: gpt3-1.3b (global batch 4096, micro-batch 2: 2048
// micro-batches, no model parallelism) on nodes of 8 GPUs: sizes 8, 16, 32, ..., 2048 GPUs. The chosen
// size fits the budget and the next one (twice as many GPUs) does not.
TEST(CliCompare, BudgetSizesEveryDesignToTheMostGpusItAffords) {
  const auto r = compare_sized("--budget-usd 20M", "gpt3-1.3b", {"dgx-h100-superpod", "dgx-b200-superpod"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& d : j["designs"]) {
    const int gpus = d["gpus"];
    EXPECT_LE(d["capex_usd"].get<double>(), 20e6) << d["design"];
    EXPECT_EQ(2048 % gpus, 0) << gpus;
    const auto next =
        compare_sized("--gpus " + std::to_string(2 * gpus), "gpt3-1.3b", {d["design"].get<std::string>()});
    ASSERT_EQ(next.status, 0) << next.err;
    EXPECT_GT(nlohmann::json::parse(next.out)["designs"][0]["capex_usd"].get<double>(), 20e6) << d["design"];
  }
  EXPECT_NE(r.err.find("dgx-h100-superpod sized to a budget of 20M USD: capex "), std::string::npos) << r.err;
  expect_refused("compare --budget-usd 0 --workload gpt3-1.3b --cluster dgx-h100-superpod");
  expect_refused("compare --budget-usd 1M --gpus 64 --workload gpt3-1.3b --cluster dgx-h100-superpod");
}

// --jobs N: the designs run N at once, each in its own child process, and land at their own index: the
// JSON and the table are the serial run's byte for byte (three designs, one repeated, so that the order
// and the "#2" numbering are both exercised). A bad count is refused (exit 2) naming --jobs.
TEST(CliCompare, JobsRunTheDesignsInParallelWithTheSerialRunsOutput) {
  const std::string ib = design("ib", R"({"type": "fat_tree", "switch_radix": 64})");
  const std::string eth = design("roce", R"({"type": "spine_leaf", "switch_radix": 64, "oversubscription": 2})");
  const std::string designs = "compare --cluster " + ib + " --cluster " + eth + " --cluster " + ib + kWorkload;
  const auto serial = run_cli(designs + " --tokens 2B --json --jobs 1");
  ASSERT_EQ(serial.status, 0) << serial.err;
  ASSERT_EQ(nlohmann::json::parse(serial.out)["designs"].size(), 3u);
  for (const char* jobs : {"2", "3", "8"}) {
    const auto parallel = run_cli(designs + " --tokens 2B --json --jobs " + jobs);
    ASSERT_EQ(parallel.status, 0) << parallel.err;
    EXPECT_EQ(parallel.out, serial.out) << "--jobs " << jobs;
  }
  const auto table_serial = run_cli(designs + " --jobs 1");
  const auto table_parallel = run_cli(designs + " --jobs 2");
  ASSERT_EQ(table_serial.status, 0) << table_serial.err;
  EXPECT_EQ(table_parallel.out, table_serial.out);
  for (const char* bad : {"0", "-1", "1.5", "many", "1025", ""})
    expect_refused(designs + " --jobs " + (std::string(bad).empty() ? "''" : bad), {"--jobs"});
  expect_refused("compare --cluster " + ib + " --serving llama3-8b-h100 --jobs 2", {"--jobs"});
}

TEST(CliCompare, TablePrintsOneRowPerDesign) {
  const std::string ib = design("ib", R"({"type": "fat_tree", "switch_radix": 64})");
  const auto r = run_cli("compare --cluster " + ib + " --cluster " + ib + kWorkload);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("$/M tok"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ib #2"), std::string::npos) << r.out;  // the same design twice is told apart
  EXPECT_NE(r.out.find("Pareto"), std::string::npos) << r.out;
}

TEST(CliCompare, BadPricesAndPueAreRefusedWithTheirJsonPath) {
  const std::string bad = design("bad", R"({"type": "fat_tree"}, "cost": {"prices": {"switch_usd_per_port": -1}})");
  expect_refused("compare --cluster " + bad + kWorkload,
                 {"/cost/prices/switch_usd_per_port: expected a number between 0 and 10000000, got -1"});
  const std::string ib = design("ib", R"({"type": "fat_tree"})");
  expect_refused("compare --cluster " + ib + kWorkload + " --set cluster.power.pue=0.8",
                 {"/power/pue: expected a number between 1 and 10, got 0.8"});
  expect_refused("compare --cluster " + ib + kWorkload + " --tokens lots", {"--tokens"});
}

// compare --serving: each design's row is its own `serve` run and `serve --find-max-rate` search, the
// Pareto marks are exactly the designs no other beats on both the cost per output token at the maximum
// rate and the TTFT p90, and a design the deployment does not fit on is a row with the reason (exit 1).
TEST(CliCompare, ServingRowsAreTheServeRunsAndTheirCapacity) {
  const std::string small = write_temp("half_node.json", R"({"name": "half-node", "gpu": "h100-sxm5-80gb", "nodes": 1,
    "node": {"gpus": 4, "scale_up": {"type": "nvswitch", "generation": "nvlink4"}}, "fabric": {"type": "single_node"}})");
  const std::string serving = " --serving llama3-70b-h100 --set traffic.duration_s=20";
  const auto r =
      run_cli("compare --cluster dgx-h100 --cluster dgx-h200-superpod --cluster " + small + serving + " --json");
  EXPECT_EQ(r.status, 1) << r.err;  // the half node cannot hold 2 replicas of tp 4
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["designs"].size(), 3u);
  const auto& bad = j["designs"][2];
  EXPECT_EQ(bad["design"], "half-node");
  EXPECT_NE(bad["error"].get<std::string>().find("need 8 GPUs"), std::string::npos) << bad;
  for (int i = 0; i < 2; ++i) {
    const auto& d = j["designs"][i];
    const std::string cluster = i == 0 ? "dgx-h100" : "dgx-h200-superpod";
    const auto run = run_cli("serve --cluster " + cluster + serving + " --json");
    ASSERT_EQ(run.status, 0) << run.err;
    const auto s = nlohmann::json::parse(run.out);
    EXPECT_EQ(d["ttft_p90_s"].get<double>(), s["latency"]["ttft_s"]["p90"].get<double>());
    EXPECT_NEAR(d["usd_per_hour"].get<double>(), s["cost"]["usd_per_gpu_hour"].get<double>() * 8, 1e-9);
    const auto search = run_cli("serve --cluster " + cluster + serving + " --find-max-rate --json");
    ASSERT_EQ(search.status, 0) << search.err;
    const auto m = nlohmann::json::parse(search.out);
    EXPECT_EQ(d["max_rate_rps"].get<double>(), m["max_rate_rps"].get<double>());
    EXPECT_EQ(d["usd_per_million_output_tokens_at_max"].get<double>(),
              m["report"]["cost"]["usd_per_million_output_tokens"].get<double>());
  }
  auto dominates = [](const nlohmann::json& a, const nlohmann::json& b) {
    const double ca = a["usd_per_million_output_tokens_at_max"], cb = b["usd_per_million_output_tokens_at_max"];
    const double ta = a["ttft_p90_s"], tb = b["ttft_p90_s"];
    return ca <= cb && ta <= tb && (ca < cb || ta < tb);
  };
  const auto& h100 = j["designs"][0];
  const auto& h200 = j["designs"][1];
  EXPECT_EQ(h100["pareto"].get<bool>(), !dominates(h200, h100));
  EXPECT_EQ(h200["pareto"].get<bool>(), !dominates(h100, h200));
  EXPECT_TRUE(h100["pareto"].get<bool>() || h200["pareto"].get<bool>());
}

// Issue 22: a 70B training run compared across an AMD MI300X cluster and four NVIDIA presets, each sized
// to 576 GPUs (8 NVL72 racks; 72 nodes of 8) with a global batch of 576 (dp 18 x micro-batch 1 x 32
// steps of accumulation fits every design). Every design runs; the AMD one on its xGMI mesh with the
// RCCL profile, its generation listed as derived from the GPU.
TEST(CliCompare, Llama70bAcrossAnAmdClusterAndFourNvidiaPresets) {
  const char* designs[] = {"amd-mi300x-roce", "dgx-h100-superpod", "dgx-b200-superpod", "gb200-nvl72", "hgx-b200-roce"};
  std::string args =
      "compare --workload llama3.1-70b --gpus 576 --set workload.training.global_batch=576 "
      "--fidelity analytical --json";
  for (const char* d : designs)
    args += std::string(" --cluster ") + d;
  const auto r = run_cli(args);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["designs"].size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    const auto& d = j["designs"][i];
    EXPECT_EQ(d["design"], designs[i]);
    ASSERT_FALSE(d.contains("error")) << d["error"];
    EXPECT_EQ(d["gpus"].get<int>(), 576) << designs[i];
    EXPECT_TRUE(d["fits"].get<bool>()) << designs[i];
    EXPECT_GT(d["step_time_s"].get<double>(), 0.0) << designs[i];
  }
  const auto& amd = j["designs"][0]["report"]["provenance"];
  EXPECT_NE(amd["network"].get<std::string>().find("rccl-mi300x"), std::string::npos) << amd["network"];
  bool derived = false;
  for (const auto& item : amd["derived_defaults"])
    derived = derived || (item["key"] == "/node/scale_up/generation" && item["value"] == "xgmi3");
  EXPECT_TRUE(derived) << amd["derived_defaults"];
}

}  // namespace
}  // namespace clustersim
