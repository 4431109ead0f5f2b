// clustersim calibrate: fits a profile from measurement files, refuses malformed ones with exit status 2
// and the path of the bad field, and reports the compiled-in profiles' held-out error.
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"

namespace clustersim {
namespace {

using namespace testing;  // cli_support.hpp: expect_refused, read_file, run_cli, temp_path, write_temp

// GEMM times of an A100 at about 70 % of 312 TFLOP/s, plus copies: enough for a small fit.
std::string gemm_measurements() {
  nlohmann::json list = nlohmann::json::array();
  for (int m : {512, 1024, 2048, 4096, 8192}) {
    for (int n : {1024, 4096, 8192}) {
      const double flops = 2.0 * m * n * 4096;
      list.push_back({{"kernel", "gemm"},
                      {"dtype", "bf16"},
                      {"m", m},
                      {"n", n},
                      {"k", 4096},
                      {"time_s", 4e-6 + flops / (0.7 * 312e12)},
                      {"repetitions", 20}});
    }
  }
  for (double bytes : {1e8, 1e9, 4e9})
    list.push_back({{"kernel", "elementwise"},
                    {"role", "copy"},
                    {"bytes", bytes},
                    {"time_s", 2e-6 + bytes / (0.8 * 2039e9)},
                    {"repetitions", 20}});
  const nlohmann::json doc{{"format", "clustersim-measurements/1"},
                           {"benchmark", "test"},
                           {"device", {{"name", "NVIDIA A100-SXM4-80GB"}, {"driver", "550.54.15"}}},
                           {"measurements", list}};
  return doc.dump(1);
}

TEST(CalibrateCli, FitsAProfileFromMeasurementFiles) {
  const std::string in = write_temp("gemms.json", gemm_measurements());
  const std::string out = temp_path("profile.json");
  const auto r = run_cli("calibrate " + in + " --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("calibrate a100-sxm4-80gb: 18 kernel measurements"), std::string::npos) << r.out;
  const nlohmann::json p = nlohmann::json::parse(read_file(out));
  EXPECT_EQ(p["gpu"], "a100-sxm4-80gb");  // from the device name
  EXPECT_EQ(p["fitted_on"][0], in);
  // The data run at 70 % of peak with no quantization loss; the model adds tile and wave quantization
  // over 108 SMs (up to 3x for 512 x 1024), so the fitted efficiency of a full wave is higher.
  const double e = p["parameters"]["gemm_max_efficiency"]["value"].get<double>();
  EXPECT_GT(e, 0.7);
  EXPECT_LT(e, 0.95);
  EXPECT_EQ(p["parameters"]["gemm_max_efficiency"]["residual"]["measurements"], 15);
  EXPECT_EQ(p["parameters"]["gemm_max_efficiency"]["domain"][0]["m"], nlohmann::json::array({512, 8192}));
  EXPECT_TRUE(p["parameters"].contains("memory_efficiency"));
}

TEST(CalibrateCli, RefusesAMalformedMeasurementFileWithThePath) {
  std::string text = gemm_measurements();
  text.replace(text.find("\"time_s\""), 8, "\"time_us\"");
  const std::string in = write_temp("bad.json", text);
  expect_refused("calibrate " + in, {in, "/measurements/0/time_s"});

  const std::string csv = write_temp("mlp.csv",
                                     "time_stats.add.median,n_head,n_kv_head,n_embd,n_expanded_embd,use_gated_mlp,"
                                     "num_tokens,num_tensor_parallel_workers\n0.05,32,32,4096,11008,True,4096,1\n"
                                     "0.05,32,32,4096,11008,True,-3,1\n");
  expect_refused("calibrate --gpu a100-sxm4-80gb " + csv, {"row 2/column num_tokens"});

  expect_refused("calibrate --data /nonexistent no/such/file.csv", {"no/such/file.csv"});
}

// calibrate --from-trace refuses, with exit status 2, a trace without kernels (naming the file and the
// step), a trace that cannot be of its workload (three GEMMs for a GPT step of hundreds of ops), and a
// trace without its workload.
TEST(CalibrateCli, FromTraceRefusesTracesThatCannotBeFitted) {
  const std::string workload =
      std::string(CLUSTERSIM_SOURCE_DIR) + "/workloads/traces/synthetic/gpt-tp2-dp4.workload.json";
  const std::string empty = write_temp("no_kernels.json", R"({"traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 10}]})");
  expect_refused("calibrate --from-trace " + empty + " --workload " + workload + " --cluster dgx-h100",
                 {empty + ": /traceEvents: no GPU kernel events", "ProfilerStep#3"});

  std::string events;
  for (int i = 0; i < 3; ++i)
    events += std::string(i ? "," : "") + R"({"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16", "pid": 0,
      "tid": 7, "ts": )" +
              std::to_string(10 * i) + R"(, "dur": 5, "args": {"stream": 7}})";
  const std::string three = write_temp("three_gemms.json", "{\"traceEvents\": [" + events + "]}");
  expect_refused("calibrate --from-trace " + three + " --workload " + workload + " --cluster dgx-h100",
                 {three + ": /traceEvents: the trace has 3 compute kernels", "not of this workload"});

  expect_refused("calibrate --from-trace " + three + " --cluster dgx-h100", {"one --workload"});
}

// calibrate-network --check: the shipped network profile against its nccl-tests tables; --profile
// keeps one. Its summary line meets issue 5's target (median |error| <= 10 % from 1 MiB).
TEST(CalibrateCli, ChecksOneNetworkProfileAgainstItsTables) {
  const std::filesystem::path data(CLUSTERSIM_DATA_DIR);
  const std::string source(CLUSTERSIM_SOURCE_DIR);
  const auto r = run_cli("calibrate-network --check --fidelity analytical --profile nccl-h100 --datasets " + source +
                         "/calibration/network/datasets.json --data-dir " + data.string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("profile nccl-h100:"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("profile nccl-a100"), std::string::npos) << r.out;
  const std::size_t all = r.out.find("\n  all ");
  ASSERT_NE(all, std::string::npos) << r.out;
  // "  all   tables rows  median-of-medians%  pooled-median%  pooled-p90%"
  std::istringstream line(r.out.substr(all + 1));
  std::string role, median;
  int tables = 0, rows = 0;
  line >> role >> tables >> rows >> median;
  // vidur x 3, h200 x 2, and the held-out p5 (EFA), ND H200 v5 and ND H100 v5 (NVLS), OCI
  // BM.GPU.H100.8 (RoCE, 2 nodes), Nebius H200 (InfiniBand, 2 nodes), GCP A3 Ultra (RoCE) and A3 Mega
  // (GPUDirect-TCPXO) tables
  EXPECT_EQ(tables, 12);
  EXPECT_LE(std::stod(median), 10.0) << r.out;
  // Per system: each machine measured gets its line (the p5 pair, the ND H200 v5 and H100 v5 and
  // the OCI pair among them).
  const std::size_t per_system = r.out.find("per system");
  ASSERT_NE(per_system, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  aws-p5 ", per_system), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  azure-nd-h200-v5 ", per_system), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  azure-nd-h100-v5 ", per_system), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  gcp-a3-ultra ", per_system), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  gcp-a3-mega ", per_system), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  oci-bm-gpu-h100-8 ", per_system), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  nebius-h200-ib ", per_system), std::string::npos) << r.out;
}

TEST(CalibrateCli, ReportsTheHeldOutErrorOfTheShippedProfiles) {
  const std::filesystem::path data(CLUSTERSIM_DATA_DIR);
  const auto r = run_cli("calibrate --report --json --data " + data.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 3u);
  for (const auto& p : j) {
    if (p["profile"] == "h200-sxm-141gb") {
      // Fitted to the project's own H200 sweep; held out: that sweep's 42 fp8 GEMMs, 15.7 % median (the
      // measured GPU throttled its fp8 GEMMs, Azure's, whose table the fp8 efficiency is fitted to, did
      // not: docs/validation.md).
      const auto& fp8 = p["held_out_gemm_tflops"]["all"];
      EXPECT_EQ(fp8["count"].get<int>(), 42);
      EXPECT_NEAR(fp8["median_abs_error"].get<double>(), 0.157, 0.005);
      continue;
    }
    const auto& all = p["held_out_kernel_time"]["all"];
    EXPECT_GE(all["count"].get<int>(), 10440) << p["profile"];
    EXPECT_LE(all["median_abs_error"].get<double>(), 0.10) << p["profile"];
    EXPECT_LE(all["p90_abs_error"].get<double>(), 0.25) << p["profile"];
    EXPECT_TRUE(p.contains("tp_split_kernel_time"));
    // Issue 16 item 1: the published per-shape GEMM tables held out of the fit (A100: Azure's
    // cuBLASLt fp16 table and mamf-finder, 3.8 %; H100: DeepGEMM's fp8 tables, mamf-finder and the
    // measured fp16 8192^3, 6.5 %) within 8 % median.
    const auto& tables = p["held_out_gemm_tflops"]["all"];
    EXPECT_GE(tables["count"].get<int>(), 9) << p["profile"];
    EXPECT_LE(tables["median_abs_error"].get<double>(), 0.08) << p["profile"];
  }
  const auto text = run_cli("calibrate --report --gpu h100-sxm5-80gb --data " + data.string());
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("held out, kernel time |error|"), std::string::npos);
  EXPECT_NE(text.out.find("published GEMM tables"), std::string::npos);
  expect_refused("calibrate --report --gpu v100-sxm2-32gb --data " + data.string(),
                 {"no calibration profile for 'v100-sxm2-32gb'"});
}

}  // namespace
}  // namespace clustersim
