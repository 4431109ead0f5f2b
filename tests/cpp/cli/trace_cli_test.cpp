// End to end through the CLI: the checked-in example traces (native, Chakra, PyTorch profiler)
// replay on a DGX H100 cluster, and a broken trace is refused as bad input.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"

namespace clustersim {
namespace {

using testing::run_cli;
using testing::write_temp;

std::string example(const std::string& name) {
  return std::string(CLUSTERSIM_SOURCE_DIR) + "/workloads/traces/" + name + ".workload.json";
}

// One DGX H100 node with as many GPUs as the trace has ranks.
nlohmann::json simulate(const std::string& workload, int gpus) {
  const auto r = run_cli("simulate --cluster dgx-h100-superpod --set cluster.nodes=1 --set cluster.node.gpus=" +
                         std::to_string(gpus) + " --workload " + workload + " --json");
  EXPECT_EQ(r.status, 0) << r.err;
  if (r.status != 0) return {};
  return nlohmann::json::parse(r.out);
}

TEST(CliTrace, NativeTraceReplays) {
  const auto j = simulate(example("native_dp2"), 2);
  ASSERT_TRUE(j.contains("step_time_s"));
  EXPECT_GT(j["step_time_s"].get<double>(), 0.0);
}

TEST(CliTrace, ChakraTraceReplays) {
  const auto j = simulate(example("chakra_pp2_dp2"), 4);
  ASSERT_TRUE(j.contains("step_time_s"));
  // The first stage's forward (7 ms), the second stage's whole step and the first's backward (14 ms)
  // follow each other through the sends and recvs.
  EXPECT_GT(j["step_time_s"].get<double>(), 0.007 + 0.0074 + 0.014 + 0.014);
}

TEST(CliTrace, PytorchTraceReplays) {
  const auto j = simulate(example("pytorch_dp2_a100"), 2);
  ASSERT_TRUE(j.contains("step_time_s"));
  EXPECT_EQ(j["communication"][0]["group"], "default_pg");
  EXPECT_EQ(j["communication"][0]["count"], 2);
  // At least the measured compute kernels of one rank, back to back (about 15 ms).
  EXPECT_GT(j["step_time_s"].get<double>(), 0.015);
}

TEST(CliTrace, BrokenTraceIsBadInput) {
  const std::string trace = write_temp("broken_trace.json", R"({"format": "clustersim-trace", "version": 1,
    "world_size": 1, "communicators": [], "classes": [{"name": "a", "ranks": [0],
    "ops": [{"kind": "compute", "name": "x", "kernel": "gemm", "deps": [3]}]}]})");
  const std::string workload =
      write_temp("broken_trace.workload.json", R"({"trace": {"format": "clustersim", "path": ")" + trace + "\"}}");
  const auto r = run_cli(
      "simulate --cluster dgx-h100-superpod --set cluster.nodes=1 --set cluster.node.gpus=1 --workload " + workload);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("/classes/0/ops/0/deps/0"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace clustersim
