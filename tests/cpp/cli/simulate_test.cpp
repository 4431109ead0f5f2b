// End to end through the CLI: a data-parallel training step on a DGX H100 cluster.
#include <cmath>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"

namespace clustersim {
namespace {

using testing::run_cli;

// 2 DGX H100 nodes (16 GPUs), GPT-3 1.3B, 64 sequences per step: 4 per rank.
const std::string kSmallRun =
    "simulate --cluster dgx-h100-superpod --set cluster.nodes=2 --workload gpt3-1.3b "
    "--set workload.training.global_batch=64 --set workload.training.micro_batch=2";

nlohmann::json simulate_json(const std::string& args) {
  const auto r = run_cli(args + " --json");
  EXPECT_EQ(r.status, 0) << r.err;
  return nlohmann::json::parse(r.out);  // --json: the report is the only thing on stdout
}

TEST(CliSimulate, ReportHasTheStableKeys) {
  const auto j = simulate_json(kSmallRun);
  for (const char* key : {"step_time_s", "tokens_per_s", "tflops_per_gpu", "mfu", "breakdown", "communication", "links",
                          "memory", "power", "cost", "provenance"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_TRUE(j["memory"].contains("peak_bytes_per_gpu"));
  EXPECT_TRUE(j["memory"].contains("fits"));
  EXPECT_EQ(j["provenance"]["fidelity"], "flow");
  EXPECT_EQ(j["communication"][0]["group"], "dp");
  EXPECT_EQ(j["communication"][0]["collective"], "all_reduce");
  // The algorithm the selector chose, named in the report: the preset's switches reduce (SHARP), and
  // NVLS + SHARP (about 480 GB/s of bus bandwidth) beats the ring and the tree (about 350) for the
  // gradients' gigabyte across 2 nodes.
  const std::string algorithm = j["communication"][0]["algorithm"];
  EXPECT_EQ(algorithm, "sharp");
  EXPECT_NE(j["provenance"]["network"].get<std::string>().find("nccl-h100"), std::string::npos);
  // The busiest link says what used it and how long it was busy (never longer than the step).
  const auto& hottest = j["links"][0];
  EXPECT_EQ(hottest["users"][0]["group"], "dp");
  EXPECT_DOUBLE_EQ(hottest["users"][0]["bytes"].get<double>(), hottest["bytes"].get<double>());
  EXPECT_GT(hottest["busy_s"].get<double>(), 0.0);
  EXPECT_LE(hottest["busy_s"].get<double>(), j["step_time_s"].get<double>());
  // Tokens per second follow from the step time: 64 sequences x 2048 tokens.
  EXPECT_NEAR(j["tokens_per_s"].get<double>(), 64.0 * 2048 / j["step_time_s"].get<double>(), 1e-6);
}

// Issue 17: values the spec leaves out and the hardware implies are listed in the report's provenance
// (key, value, why), and the spec without them gets the same answer as the one that gives them.
TEST(CliSimulate, ProvenanceListsTheDerivedDefaults) {
  const std::string run = " --workload gpt3-1.3b --set workload.training.global_batch=16 --fidelity analytical";
  const auto implied = simulate_json(
      "simulate --cluster dgx-h100 --set node.scale_up='{\"type\": \"nvswitch\", \"bandwidth_GBps\": 450}'" + run);
  const auto named = simulate_json("simulate --cluster dgx-h100" + run);
  const auto& derived = implied["provenance"]["derived_defaults"];
  ASSERT_TRUE(derived.is_array());
  bool generation = false;
  for (const auto& d : derived) {
    if (d["key"] != "/node/scale_up/generation") continue;
    generation = true;
    EXPECT_EQ(d["value"], "nvlink4");
    EXPECT_NE(d["why"].get<std::string>().find("NVLS"), std::string::npos);
  }
  EXPECT_TRUE(generation) << derived.dump();
  EXPECT_TRUE(named["provenance"]["derived_defaults"].empty()) << named["provenance"].dump();
  EXPECT_DOUBLE_EQ(implied["step_time_s"].get<double>(), named["step_time_s"].get<double>());
}

// The step of a data-parallel rank lies between its pure compute time (the same per-rank work on
// one GPU, no communication at all) and that plus every collective run back to back, unoverlapped.
TEST(CliSimulate, StepTimeLiesBetweenComputeAndComputePlusCommunication) {
  const auto dp = simulate_json(kSmallRun);
  const auto single = simulate_json(
      "simulate --cluster dgx-h100 --set cluster.node.gpus=1 --set cluster.node.nics=1 --workload gpt3-1.3b "
      "--set workload.training.global_batch=4 --set workload.training.micro_batch=2");
  const double pure_compute = single["step_time_s"].get<double>();
  double communication = 0;
  for (const auto& c : dp["communication"])
    communication += c["time_s"].get<double>();
  const double step = dp["step_time_s"].get<double>();
  EXPECT_GT(communication, 0.0);
  EXPECT_GE(step, pure_compute * (1 - 1e-9));
  EXPECT_LE(step, (pure_compute + communication) * (1 + 1e-9));
  // The rank computes what the single GPU computes, at the clock its step's mean power allows
  // (sim/power/step_clock.hpp): its collectives lower its duty cycle, so its clock is the single
  // GPU's or higher and its compute time the same or up to a few per mille shorter.
  EXPECT_GE(dp["power"]["gemm_clock_MHz"].get<double>(), single["power"]["gemm_clock_MHz"].get<double>());
  EXPECT_LE(dp["breakdown"]["compute_s"].get<double>(), pure_compute * (1 + 1e-9));
  EXPECT_GT(dp["breakdown"]["compute_s"].get<double>(), pure_compute * 0.99);
  // The breakdown adds up to the step.
  const auto& b = dp["breakdown"];
  EXPECT_NEAR(b["compute_s"].get<double>() + b["exposed_communication_s"].get<double>() +
                  b["pipeline_bubble_s"].get<double>() + b["host_wait_s"].get<double>(),
              step, 1e-9 * step);
}

TEST(CliSimulate, SameInputsGiveTheSameBytes) {
  const auto a = run_cli(kSmallRun + " --json");
  const auto b = run_cli(kSmallRun + " --json");
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

// `run` gives the same report, byte for byte, with `flag` and without it; the report ("" on a failure).
std::string same_report_with_and_without(const std::string& run, const std::string& flag) {
  const auto without = run_cli(run);
  const auto with = run_cli(run + " " + flag);
  EXPECT_EQ(without.status, 0) << without.err;
  EXPECT_EQ(with.status, 0) << with.err;
  EXPECT_EQ(without.out, with.out);
  return without.status == 0 && with.status == 0 ? with.out : std::string();
}

// The 405B-class step of the scaling bench (bench/data: tp 8, pp 16 interleaved, dp 8) on 1,024 GPUs
// of a 3-tier fat-tree under D-mod-K at flow fidelity: one SimGrid flow per class of identical
// transfers (the default) gives the exhaustive replay's report (--exhaustive) byte for byte. There
// every member of a class crosses every link class of its class route, which makes it exact
// (sim/replay/traffic_classes.hpp); the bench compares larger sizes (docs/performance.md).
TEST(CliSimulate, FlowClassesOfIdenticalTransfersGiveTheExhaustiveReport) {
  const std::string run = std::string("simulate --cluster dgx-h100-superpod --set cluster.nodes=128 ") +
                          "--set cluster.fabric.tiers=3 --set cluster.fabric.switch_radix=128 " +
                          "--set cluster.fabric.routing=d_mod_k --workload " CLUSTERSIM_SOURCE_DIR
                          "/bench/data/llama3-405b-class.json --set workload.parallelism.dp=8 " +
                          "--set workload.training.global_batch=128 --fidelity flow --json";
  const std::string report = same_report_with_and_without(run, "--exhaustive");
  ASSERT_FALSE(report.empty());
  EXPECT_NEAR(nlohmann::json::parse(report)["step_time_s"].get<double>(), 7.1822, 1e-4);  // the bench's
}

// The 405B-class step of the scaling bench on `gpus` GPUs (dp = gpus / 128) of the preset's fabric at
// 3 tiers of radix 128, under the preset's adaptive routing, at flow fidelity.
std::string adaptive_flow_step(int gpus) {
  return "simulate --cluster dgx-h100-superpod --set cluster.nodes=" + std::to_string(gpus / 8) +
         " --set cluster.fabric.tiers=3 --set cluster.fabric.switch_radix=128 --workload " CLUSTERSIM_SOURCE_DIR
         "/bench/data/llama3-405b-class.json --set workload.parallelism.dp=" +
         std::to_string(gpus / 128) + " --set workload.training.global_batch=" + std::to_string(gpus / 8) +
         " --fidelity flow --json";
}

// Under adaptive routing the flow replay takes the classes too, checked at every start, each attempt
// in a child process seeded with the analytical clock replays' variants (sim/replay/replay_engine.hpp):
// the exhaustive replay's report (--exhaustive), byte for byte, at 1,024 GPUs (tp 8, pp 16, dp 8).
TEST(CliSimulate, FlowClassesUnderAdaptiveRoutingGiveTheExhaustiveReport) {
  const std::string report = same_report_with_and_without(adaptive_flow_step(1024), "--exhaustive");
  ASSERT_FALSE(report.empty());
  EXPECT_NEAR(nlohmann::json::parse(report)["step_time_s"].get<double>(), 7.1822, 1e-4);  // the bench's
}

// --adaptive-classes: one simulated transfer per class of identical transfers under the preset's
// adaptive routing (an approximation, docs/performance.md). GPT-3 175B on 1,024 GPUs (tp 8, pp 8,
// dp 16, the preset's 2-tier fabric) is one where it keeps the whole report, byte for byte (measured:
// bench_scale.py --cases gpt3, session 16).
TEST(CliSimulate, AdaptiveClassesKeepTheReportOfGpt3On1024Gpus) {
  const std::string run =
      "simulate --cluster dgx-h100-superpod --set cluster.nodes=128 --workload gpt3-175b "
      "--set workload.parallelism.dp=16 --fidelity analytical --json";
  same_report_with_and_without(run, "--adaptive-classes");
}

// On an xGMI mesh node the closed form stands for the backend's replay and times the bytes that backend
// moves (NetworkBackend::delivered_bytes): whole bytes at flow fidelity, as SimGrid moves them. The
// collective plans are lent from the analytical clock replays to the flow replay only where they were
// planned for the same backend, so every link of a flow report carries whole bytes (with the plans of
// the analytical replays, the TP all-reduces put 17,451,293,081.6 bytes on each xGMI link).
TEST(CliSimulate, FlowOnAnXgmiMeshCountsTheWholeBytesSimGridMoves) {
  const auto r = run_cli(
      "simulate --cluster amd-mi300x-roce --set cluster.nodes=2 --workload llama3.1-8b "
      "--set workload.parallelism.tp=8 --set workload.parallelism.cp=1 --set workload.parallelism.dp=2 "
      "--set workload.training.global_batch=16 --fidelity flow --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto links = nlohmann::json::parse(r.out)["links"];
  ASSERT_FALSE(links.empty());
  for (const auto& link : links)
    EXPECT_EQ(link["bytes"].get<double>(), std::floor(link["bytes"].get<double>())) << link.dump();
}

TEST(CliSimulate, OutFileHoldsTheSameReport) {
  const std::string path = testing::temp_path("report.json");
  const auto r = run_cli(kSmallRun + " --json --out " + path);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(testing::read_file(path), r.out);
}

TEST(CliSimulate, TextSummaryExplainsTheNumbers) {
  const auto r = run_cli(kSmallRun);
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* s : {"Step time", "tokens/s", "MFU", "exposed communication", "Memory per GPU", "all_reduce"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  }
}

TEST(CliSimulate, TheReportNamesTheStackAndWhereItsProfileComesFrom) {
  // Not named: the default stack, and the report says it is the default.
  const auto d = simulate_json(kSmallRun);
  EXPECT_EQ(d["run"]["stack"], "megatron-core");
  const std::string why = d["provenance"]["stack"];
  EXPECT_NE(why.find("Megatron-Core with Transformer Engine"), std::string::npos) << why;
  EXPECT_NE(why.find("the default"), std::string::npos) << why;
  EXPECT_NE(why.find("workloads/stacks/megatron-core.json"), std::string::npos) << why;
  // Named: the older stack, slower on the same step (unfused attention, dropout, 80 us of host time
  // per op, the gradient all-reduce after the backward).
  const auto old = simulate_json(kSmallRun + " --set workload.training.stack=megatron-deepspeed");
  EXPECT_EQ(old["run"]["stack"], "megatron-deepspeed");
  EXPECT_EQ(old["provenance"]["stack"].get<std::string>().find("the default"), std::string::npos);
  EXPECT_GT(old["step_time_s"].get<double>(), d["step_time_s"].get<double>());
  EXPECT_GT(old["breakdown"]["host_wait_s"].get<double>(), 0.0);
  const auto r = run_cli(kSmallRun + " --set workload.training.stack=megatron-deepspeed");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("stack megatron-deepspeed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Software stack     megatron-deepspeed (Megatron-DeepSpeed; training.stack)"), std::string::npos)
      << r.out;
}

// The 2026 model presets (issue 22) each simulate on a shipped cluster preset, with their parameter
// count (the report's run.parameters) within 1 % of the published one, and fit in memory.
TEST(CliSimulate, ModelPresetsOfTodaySimulateOnShippedClusters) {
  struct Case {
    const char* workload;
    const char* cluster;
    double published_parameters;
  };
  for (const Case& c : {
           Case{"llama3.1-8b", "dgx-h100-superpod", 8.03e9},   // Llama 3.1 model card
           Case{"llama3.1-70b", "dgx-h100-superpod", 70.6e9},  // HF safetensors metadata
           // TP 8 x PP 9 x DP 4 on 288 GPUs; 64 sequences instead of 2,048 keep the test short
           Case{"llama3.1-405b", "gb200-nvl72 --set workload.training.global_batch=64", 405.9e9},
           Case{"mixtral-8x7b", "dgx-h100-superpod", 46.7e9},  // Jiang et al. 2024
           Case{"mixtral-8x22b", "dgx-h100-superpod --set workload.training.global_batch=128",
                141e9},                                       // Mistral AI 2024
           Case{"qwen2.5-72b", "dgx-h100-superpod", 72.7e9},  // Qwen2.5 technical report
       }) {
    SCOPED_TRACE(c.workload);
    const auto j = simulate_json(std::string("simulate --fidelity analytical --cluster ") + c.cluster + " --workload " +
                                 c.workload);
    EXPECT_NEAR(j["run"]["parameters"].get<double>() / c.published_parameters, 1.0, 0.01);
    EXPECT_GT(j["step_time_s"].get<double>(), 0.0);
    EXPECT_TRUE(j["memory"]["fits"].get<bool>()) << j["memory"].dump();
  }
}

// DeepSeek-V3 on the report's 2,048 GPUs (256 DGX H100 nodes; PP 16, EP 64 carved out of DP 128): 671B
// parameters (arXiv:2412.19437) within 1 %, the model flops of its MLA and dense first layers, memory
// that fits, and the MoE's ops in the timeline of the step (the expert-parallel all-to-alls named with
// DeepEP's algorithm). 1,024 sequences (8 micro-batches per rank) keep the test short.
TEST(CliSimulate, DeepSeekV3SimulatesOnTwoThousandGpus) {
  const std::string run =
      "simulate --fidelity analytical --cluster dgx-h100-superpod --set cluster.nodes=256 --workload deepseek-v3 "
      "--set workload.training.global_batch=1024 --algorithm ep=deepep";
  const auto j = simulate_json(run);
  EXPECT_EQ(j["run"]["gpus"].get<int>(), 2048);
  EXPECT_NEAR(j["run"]["parameters"].get<double>() / 671e9, 1.0, 0.01);
  EXPECT_GT(j["step_time_s"].get<double>(), 0.0);
  EXPECT_TRUE(j["memory"]["fits"].get<bool>()) << j["memory"].dump();
  bool ep_deepep = false;
  for (const auto& c : j["communication"])
    if (c["group"] == "ep" && c["algorithm"] == "deepep") ep_deepep = true;
  EXPECT_TRUE(ep_deepep) << j["communication"].dump();
}

// Node-limited routing (model.moe.max_nodes_per_token, the preset's M = 4 of DeepSeek-V3): DeepEP's
// dispatch crosses RDMA once per node a token reaches, 3.629 nodes of 8 with M = 4 against 5.295
// unlimited (workloads/expert_routing.cpp), so the RDMA-bound all-to-alls, and the step, are shorter.
// Limited to 1 node of 32 experts, top-40 cannot be routed: exit 2 naming the file and the key.
TEST(CliSimulate, DeepSeekV3NodeLimitedRoutingShortensTheDeepEpStep) {
  const std::string run =
      "simulate --fidelity analytical --cluster dgx-h100-superpod --set cluster.nodes=256 --workload deepseek-v3 "
      "--set workload.training.global_batch=1024 --algorithm ep=deepep";
  const double limited = simulate_json(run)["step_time_s"].get<double>();
  const double unlimited =
      simulate_json(run + " --set workload.model.moe.max_nodes_per_token=0")["step_time_s"].get<double>();
  EXPECT_LT(limited, unlimited * 0.95);
  const auto r = run_cli(run + " --set workload.model.moe.max_nodes_per_token=1 --set workload.model.moe.top_k=40");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("deepseek-v3.json: /model/moe/max_nodes_per_token"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("fewer than top_k 40"), std::string::npos) << r.err;
}

// A GPU whose kernel-model figures are assumptions is flagged in the report: JSON provenance and text.
TEST(CliSimulate, AnUncalibratedGpuIsFlaggedInTheReport) {
  const std::string run =
      "simulate --fidelity analytical --cluster dgx-h100 --set cluster.gpu=mi300x "
      "--workload gpt3-1.3b --set workload.training.global_batch=16";
  const auto j = simulate_json(run);
  const std::string calibration = j["provenance"]["calibration"];
  EXPECT_NE(calibration.find("UNCALIBRATED"), std::string::npos) << calibration;
  const auto text = run_cli(run);
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("UNCALIBRATED"), std::string::npos) << text.out;
  // The calibrated H100 is not.
  const auto h100 = simulate_json(
      "simulate --fidelity analytical --cluster dgx-h100 --workload gpt3-1.3b "
      "--set workload.training.global_batch=16");
  EXPECT_EQ(h100["provenance"]["calibration"].get<std::string>().find("UNCALIBRATED"), std::string::npos);
}

TEST(CliSimulate, PresetsAreListed) {
  const auto r = run_cli("presets --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NE(std::find(j["clusters"].begin(), j["clusters"].end(), "dgx-h100-superpod"), j["clusters"].end());
  EXPECT_NE(std::find(j["workloads"].begin(), j["workloads"].end(), "gpt3-1.3b"), j["workloads"].end());
  EXPECT_NE(std::find(j["gpus"].begin(), j["gpus"].end(), "h100-sxm5-80gb"), j["gpus"].end());
  for (const char* p : {"ideal", "nccl-a100", "nccl-h100", "nccl-b200", "rccl-mi300x", "rccl-mi355x"}) {
    EXPECT_NE(std::find(j["network_profiles"].begin(), j["network_profiles"].end(), p), j["network_profiles"].end());
  }
  for (const char* c : {"amd-mi300x-roce", "amd-mi325x-roce", "amd-mi355x-roce"})
    EXPECT_NE(std::find(j["clusters"].begin(), j["clusters"].end(), c), j["clusters"].end()) << c;
}

}  // namespace
}  // namespace clustersim

namespace clustersim {
namespace {

// Issue 23: --train-tokens adds the time_to_train section. 2 DGX H100 nodes, GPT-3 1.3B, 64 x 2,048
// tokens per step: 1e9 tokens are ceil(1e9 / 131,072) = 7,630 steps; the days and their parts are
// consistent with the step (the run is at least its failure-free time, goodput in (0, 1]), the same
// seed gives the same section, and the text summary says it.
TEST(CliSimulate, TrainTokensAddTheTimeToTrainSection) {
  const std::string run = kSmallRun + " --fidelity analytical --train-tokens 1B --runs 200";
  const auto j = simulate_json(run);
  ASSERT_TRUE(j.contains("time_to_train"));
  const auto& t = j["time_to_train"];
  EXPECT_DOUBLE_EQ(t["tokens"].get<double>(), 1e9);
  EXPECT_DOUBLE_EQ(t["steps"].get<double>(), 7630.0);
  EXPECT_DOUBLE_EQ(t["failure_free_days"].get<double>(), 7630.0 * t["effective_step_time_s"].get<double>() / 86400.0);
  EXPECT_GE(t["days_p10"].get<double>(), t["failure_free_days"].get<double>());
  EXPECT_LE(t["days_p10"].get<double>(), t["days_p50"].get<double>());
  EXPECT_LE(t["days_p50"].get<double>(), t["days_p90"].get<double>());
  EXPECT_GT(t["goodput"].get<double>(), 0.0);
  EXPECT_LE(t["goodput"].get<double>(), 1.0);
  EXPECT_EQ(t["runs"], 200);
  EXPECT_EQ(t["checkpoint_interval_basis"], "young_daly");
  // 1.3e9 parameters x 14 bytes (bf16 weights + fp32 master weights and Adam moments).
  EXPECT_NEAR(t["checkpoint_bytes"].get<double>() / (14.0 * j["run"]["parameters"].get<double>()), 1.0, 1e-12);
  EXPECT_EQ(simulate_json(run)["time_to_train"].dump(), t.dump());  // same seed, same bytes
  EXPECT_FALSE(simulate_json(kSmallRun + " --fidelity analytical").contains("time_to_train"));
  const auto text = run_cli(run);
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("Time to train"), std::string::npos);
}

}  // namespace
}  // namespace clustersim
