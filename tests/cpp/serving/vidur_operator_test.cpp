// The iteration model's layer kernels (sim/serving/replica_kernels.cpp) against Vidur's operator
// tables: calibration/data/vidur/compute/{a100,h100}/Llama-2-{7b,70b}-hf/mlp.csv (microsoft/vidur,
// MIT; per-operator CUDA-event times of one Llama-2 layer in fp16, 259 token counts from 1 to 4096
// at tp 1, 2, 4, 8: 1,044 rows per file). A row's layer time is the sum of its operators (QKV,
// rope, attention output, the norms, MLP up, activation, MLP down, and the residual add twice; the
// embedding apart, attention not in the table); the model's, the same kernels (its KV-cache write
// apart) timed by the calibrated kernel model at the row's tokens and tp.
// Measured on this commit (median |error| of the layer, all rows / rows of <= 256 tokens):
//   A100 7B 5.6 % / 7.7 %; A100 70B 5.2 % / 5.6 %; H100 7B 3.1 % / 5.3 %; H100 70B 3.9 % / 6.6 %.
// The 7B tables are among the calibration profiles' fit data (calibration/profiles), the 70B tables
// held out of every fit. Small-M GEMMs alone (m <= 256, the decode regime), median signed error
// (model / measured - 1) by rows: m <= 8 +6..+9 % (the model a little slow), 9..64 +1..+8 %,
// 65..128 -13..+4 %, 129..256 -4..-9 %: no bias across the range, so the kernel model is kept as it is.
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "serving_test_support.hpp"
#include "sim/hardware/calibration_profile.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/kernel_accuracy.hpp"
#include "sim/hardware/kernel_measurement.hpp"
#include "sim/hardware/kernel_model.hpp"
#include "sim/serving/replica_kernels.hpp"
#include "sim/serving/replica_layout.hpp"

namespace clustersim {
namespace {

using testing::llama2;

struct Row {
  double tokens = 0.0;
  int tp = 0;
  double measured_s = 0.0;
};

// One layer per CSV row (the measurements of a row share their source, "file:row N").
std::vector<Row> layer_rows(const MeasurementSet& set) {
  std::map<std::string, Row> rows;
  std::vector<std::string> order;
  for (const KernelMeasurement& k : set.kernels) {
    if (k.operation == "emb") continue;
    auto [it, fresh] = rows.try_emplace(k.source);
    if (fresh) order.push_back(k.source);
    Row& r = it->second;
    r.tp = k.tp;
    if (k.operation == "attn_pre_proj") r.tokens = k.m;
    r.measured_s += (k.operation == "add" ? 2.0 : 1.0) * k.time_s;
  }
  std::vector<Row> out;
  for (const auto& s : order)
    out.push_back(rows[s]);
  return out;
}

double model_layer_s(const GpuSpec& gpu, const ModelSpec& m, const Row& row) {
  ReplicaConfig r;
  r.model = m;
  r.tp = row.tp;
  r.compute_precision = Precision::fp16;
  r.weight_dtype = ServingDtype::fp16;
  const ReplicaLayout layout = replica_layout(r);
  const ReplicaKernels kernels(r, layout, gpu);
  std::array<ComputeOp, kMaxLayerKernels> ops{};
  const std::size_t n = kernels.layer_kernels(row.tokens, ops.data());
  double t = 0.0;
  for (std::size_t i = 0; i < n; ++i)
    if (std::string_view(ops[i].name) != "serve.kv_cache_write") t += kernel_time(gpu, ops[i]).time_s;
  return t;
}

struct Case {
  const char* gpu_dir;
  const char* gpu_id;
  bool seventy;
};

class VidurLayer : public ::testing::TestWithParam<Case> {};

// Tolerances: median |error| <= 7 % over every row, <= 9 % over the rows of <= 256 tokens (decode
// batches), and the model's layers neither all fast nor all slow (median signed error within 5 %).
TEST_P(VidurLayer, MedianErrorOfTheLayerTime) {
  const Case& c = GetParam();
  const GpuSpec gpu = testing::calibrated_gpu(c.gpu_id);
  const std::string file = std::string(CLUSTERSIM_DATA_DIR) + "/vidur/compute/" + c.gpu_dir +
                           (c.seventy ? "/Llama-2-70b-hf/mlp.csv" : "/Llama-2-7b-hf/mlp.csv");
  const std::vector<Row> rows = layer_rows(read_measurements(file));
  ASSERT_EQ(rows.size(), 1044u);
  std::vector<double> signed_errors, all, small;
  for (const Row& row : rows) {
    const double e = model_layer_s(gpu, llama2(c.seventy), row) / row.measured_s - 1.0;
    signed_errors.push_back(e);
    all.push_back(std::abs(e));
    if (row.tokens <= 256) small.push_back(std::abs(e));
  }
  RecordProperty("median_abs_error", std::to_string(quantile(all, 0.5)));
  RecordProperty("median_abs_error_small_batches", std::to_string(quantile(small, 0.5)));
  EXPECT_LE(quantile(all, 0.5), 0.07);
  EXPECT_LE(quantile(small, 0.5), 0.09);
  EXPECT_LE(std::abs(quantile(signed_errors, 0.5)), 0.05);
}

INSTANTIATE_TEST_SUITE_P(Llama2, VidurLayer,
                         ::testing::Values(Case{"a100", "a100-sxm4-80gb", false}, Case{"a100", "a100-sxm4-80gb", true},
                                           Case{"h100", "h100-sxm5-80gb", false}, Case{"h100", "h100-sxm5-80gb", true}),
                         [](const ::testing::TestParamInfo<Case>& param) {
                           return std::string(param.param.gpu_dir) + (param.param.seventy ? "_70b" : "_7b");
                         });

}  // namespace
}  // namespace clustersim
