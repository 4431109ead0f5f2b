// The iteration model against TensorRT-LLM's published static-batch figures
// (calibration/data/published/serving_throughput.json, the records with batching "static"): a batch of
// B prompts of ISL tokens runs as one context iteration, then OSL - 1 generation iterations of the
// whole batch; throughput = B x OSL / their time; the first-token latency at batch 1 is the context
// iteration's time.
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "serving_test_support.hpp"
#include "sim/hardware/calibration_profile.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/kernel_accuracy.hpp"
#include "sim/serving/iteration_model.hpp"
#include "topologies/cluster_spec.hpp"

namespace clustersim {
namespace {

using testing::llama2;

struct Prediction {
  double throughput = 0.0;  // output tokens per second
  double first_token_s = 0.0;
};

Prediction predict(const nlohmann::json& r) {
  const std::string gpu_id = r["gpu_id"];
  const GpuSpec gpu = testing::calibrated_gpu(gpu_id);
  const bool fp8 = gpu_id == "h100-sxm5-80gb";
  ReplicaConfig replica;
  replica.model = llama2(r["model"].get<std::string>().find("70B") != std::string::npos);
  replica.tp = r["tp"];
  replica.weight_dtype = fp8 ? ServingDtype::fp8 : ServingDtype::fp16;
  replica.kv_dtype = fp8 ? ServingDtype::fp8 : ServingDtype::fp16;
  replica.compute_precision = fp8 ? Precision::bf16 : Precision::fp16;
  const int batch = r["batch_size"], isl = r["input_tokens"], osl = r["output_tokens"];
  replica.max_batch_tokens = std::int64_t(batch) * isl;
  const ClusterSpec cluster =
      load_cluster_spec(fp8 ? "dgx-h100" : "dgx-a100-superpod", fp8 ? Overrides{} : Overrides{{"nodes", "1"}});
  const auto model = make_iteration_model(replica, gpu, cluster);
  std::vector<IterationEntry> entries(static_cast<std::size_t>(batch), IterationEntry{isl, 0});
  Prediction p;
  p.first_token_s = model->iteration_time(entries).time_s;
  double total = p.first_token_s;
  for (int step = 1; step < osl; ++step) {
    for (auto& e : entries)
      e = IterationEntry{1, isl + step - 1};
    total += model->iteration_time(entries).time_s;
  }
  p.throughput = double(batch) * osl / total;
  return p;
}

// Measured on this commit (model / published - 1; 2026-11-28, after vLLM's custom all-reduce and the
// calibration changes merged since the first figures), throughput: H100 fp8 Llama-2-7B +3.0 % (B 768,
// 128/128), +5.9 % (B 112, 128/2048), -10.3 % (B 80, 2048/128), -0.4 % (B 48, 2048/2048); Llama-2-70B
// +18.1 % (tp 2, B 1024, 128/128), +99 % (tp 4, B 480, 128/2048), +7.6 % (tp 2, B 96, 2048/128),
// +89.5 % (tp 2, B 64, 2048/2048); A100 fp16 Llama-2-7B -3.1, -3.2, -8.6 %, -2.0 % (tp 2); Llama-2-70B
// tp 4 +1.0 % (128/128), +38.8 % (128/2048), -3.7 % (2048/128): median |error| 5.9 % over 15 rows. The
// model is too fast on Llama-2-70B's long generations (GQA, tensor-parallel). Not explained; a
// candidate (not checked): a decode-attention kernel that reads each KV head once per query head of its
// group (8 for Llama-2-70B) rather than once, as the model assumes.
// First-token latency: H100 -38.8 % (7B, 128 tokens), -5.4 % (7B, 2048), -36.7 % (70B tp 4, 128),
// +3.6 % (70B, 2048); A100 -26.2 %, -1.0 %, -9.2 %, +0.8 %: median |error| 7.3 % over 8; the short
// prompts are too fast: 2.7..9.6 ms of their published times is not in the model's kernels (work per
// request outside them; host_overhead_s is 0 here).
// Tolerances: median |error| <= 10 % for each (the target for saturation throughput), every
// single-GPU throughput row within 20 %.
TEST(PublishedStaticBatch, ThroughputAndFirstTokenLatency) {
  std::ifstream in(std::string(CLUSTERSIM_DATA_DIR) + "/published/serving_throughput.json");
  ASSERT_TRUE(in) << "calibration/data/published/serving_throughput.json";
  const nlohmann::json records = nlohmann::json::parse(in);
  std::vector<double> throughput, latency;
  for (const auto& r : records) {
    if (r["batching"].get<std::string>().rfind("static", 0) != 0) continue;
    const Prediction p = predict(r);
    const std::string id = r["id"];
    if (r.contains("first_token_latency_ms")) {
      latency.push_back(std::abs(p.first_token_s * 1e3 / r["first_token_latency_ms"].get<double>() - 1.0));
      continue;
    }
    const double e = p.throughput / r["output_tokens_per_s_derived"].get<double>() - 1.0;
    throughput.push_back(std::abs(e));
    if (r["tp"] == 1) {
      EXPECT_LT(std::abs(e), 0.20) << id;
    }
  }
  ASSERT_EQ(throughput.size(), 15u);
  ASSERT_EQ(latency.size(), 8u);
  RecordProperty("throughput_median_abs_error", std::to_string(quantile(throughput, 0.5)));
  RecordProperty("first_token_median_abs_error", std::to_string(quantile(latency, 0.5)));
  EXPECT_LE(quantile(throughput, 0.5), 0.10);
  EXPECT_LE(quantile(latency, 0.5), 0.10);
}

}  // namespace
}  // namespace clustersim
