// Error bars (sim/validation/error_bars.hpp): the feature distance, the interval's hand-worked
// quantiles, its widening far from the validation data, leave-one-out coverage (a row's own residual
// is never its neighbour) and the coverage of the shipped residuals per dataset.
#include "sim/validation/error_bars.hpp"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../spec_error_of.hpp"
#include "sim/api/serving_validation.hpp"
#include "sim/cost/design_comparison.hpp"
#include "sim/validation/error_summary.hpp"
#include "sim/validation/validation_metric.hpp"

namespace clustersim {
namespace {

using testing::spec_error_of;

PredictionFeatures features(std::string gpu, std::string precision, std::string sharding, int gpus) {
  PredictionFeatures f;
  f.gpu = gpu;
  f.generation = gpu_generation(gpu);
  f.precision = std::move(precision);
  f.sharding = std::move(sharding);
  f.gpus = gpus;
  return f;
}

ResidualRow row(std::string dataset, std::string id, PredictionFeatures f, double step_time_error) {
  return {std::move(dataset), std::move(id), "", std::move(f), step_time_error};
}

TEST(PredictionFeatures, GenerationFromTheCatalogueId) {
  EXPECT_EQ(gpu_generation("a100-sxm4-40gb"), "ampere");
  EXPECT_EQ(gpu_generation("h100-sxm5-80gb"), "hopper");
  EXPECT_EQ(gpu_generation("h200-sxm-141gb"), "hopper");
  EXPECT_EQ(gpu_generation("b200"), "blackwell");
  EXPECT_EQ(gpu_generation("my-asic"), "my-asic");  // unknown: its own generation
}

TEST(ErrorBars, DistanceIsTheDocumentedWeightedSum) {
  const auto a = features("a100-sxm4-80gb", "fp16", "megatron", 64);
  EXPECT_DOUBLE_EQ(feature_distance(a, a), 0.0);
  // fp16 vs bf16: 0.25; 64 -> 256 GPUs: two doublings x 0.25.
  EXPECT_DOUBLE_EQ(feature_distance(a, features("a100-sxm4-40gb", "bf16", "megatron", 256)), 0.25 + 0.5);
  // generation 1 + precision (16-bit vs fp8) 1 + sharding 1 + 64 -> 1024 GPUs: 4 doublings x 0.25.
  EXPECT_DOUBLE_EQ(feature_distance(a, features("h100-sxm5-80gb", "fp8", "fsdp", 1024)), 1.0 + 1.0 + 1.0 + 1.0);
  EXPECT_DOUBLE_EQ(feature_distance(features("h100-sxm5-80gb", "fp8", "fsdp", 1024), a), 4.0);  // symmetric
  // The model's kind and attention: 1 each (dense vs moe, mha vs mla).
  auto moe = a;
  moe.model = "moe";
  EXPECT_DOUBLE_EQ(feature_distance(a, moe), 1.0);
  auto mla = moe;
  mla.attention = "mla";
  EXPECT_DOUBLE_EQ(feature_distance(a, mla), 2.0);
  EXPECT_DOUBLE_EQ(feature_distance(mla, moe), 1.0);
}

TEST(PredictionFeatures, ModelKindAndAttentionFromTheModelsShape) {
  ModelSpec m;  // a dense multi-head (grouped-query) model
  PredictionFeatures f;
  set_model_features(f, m);
  EXPECT_EQ(f.model, "dense");
  EXPECT_EQ(f.attention, "mha");
  m.moe.experts = 256;
  m.attention_type = "mla";
  set_model_features(f, m);
  EXPECT_EQ(f.model, "moe");
  EXPECT_EQ(f.attention, "mla");
  // Training rows take them by the same rule.
  WorkloadSpec w;
  w.model = m;
  const PredictionFeatures t = prediction_features("h200-sxm-141gb", w, 8);
  EXPECT_EQ(t.model, "moe");
  EXPECT_EQ(t.attention, "mla");
}

// 21 rows at distance 0 whose ln(measured / predicted) are -0.10, -0.09, ..., +0.10: the 5th
// percentile sits at position 0.05 x 20 = 1 (-0.09), the median at -0.00, the 95th at 19 (+0.09).
ResidualTable evenly_spread_table(const PredictionFeatures& f) {
  ResidualTable t;
  for (int i = 0; i <= 20; ++i) {
    const double l = -0.10 + 0.01 * i;                                        // ln(t_meas / t_pred)
    t.rows.push_back(row("even", std::to_string(i), f, std::exp(-l) - 1.0));  // e = t_pred / t_meas - 1
  }
  return t;
}

TEST(ErrorBars, IntervalIsTheNeighboursPercentilesAroundThePrediction) {
  const auto f = features("a100-sxm4-80gb", "bf16", "megatron", 64);
  const ResidualTable t = evenly_spread_table(f);
  const auto i = step_time_interval(f, 2.0, t);
  ASSERT_TRUE(i);
  EXPECT_EQ(i->rows, 21);  // 20 nearest, and the 21st as near as the 20th (ties kept)
  EXPECT_DOUBLE_EQ(i->mean_distance, 0.0);
  EXPECT_DOUBLE_EQ(i->widening, 1.0);
  // [2 exp(-0.09 - 0.037), 2 exp(0.09 + 0.037)]: percentiles plus the 3.7 % floor (the measured
  // repeatability, error_bars.cpp; 0.01 before it was measured).
  EXPECT_NEAR(i->lo, 2.0 * std::exp(-0.127), 1e-12);
  EXPECT_NEAR(i->hi, 2.0 * std::exp(0.127), 1e-12);
  ASSERT_EQ(i->datasets.size(), 1u);
  EXPECT_EQ(i->datasets[0].dataset, "even");
  EXPECT_EQ(i->datasets[0].rows, 21);
  // A measurement 5 % slower than predicted (l = ln 1.05 = 0.049) is inside; 15 % is not.
  EXPECT_LT(2.0 * 1.05, i->hi);
  EXPECT_GT(2.0 * 1.15, i->hi);
}

TEST(ErrorBars, IntervalWidensOnDataFarFromTheFit) {
  const auto near = features("a100-sxm4-80gb", "bf16", "megatron", 64);
  const ResidualTable t = evenly_spread_table(near);
  // Another generation (distance 1): the percentiles' spread counts twice (w = 1 + 1).
  const auto far = step_time_interval(features("h100-sxm5-80gb", "bf16", "megatron", 64), 2.0, t);
  ASSERT_TRUE(far);
  EXPECT_DOUBLE_EQ(far->mean_distance, 1.0);
  EXPECT_DOUBLE_EQ(far->widening, 2.0);
  EXPECT_NEAR(far->lo, 2.0 * std::exp(-0.09 * 2 - 0.037), 1e-12);
  EXPECT_NEAR(far->hi, 2.0 * std::exp(0.09 * 2 + 0.037), 1e-12);
  // Farther still (generation, precision, sharding, 16x the GPUs): w = 5.
  const auto farther = step_time_interval(features("b200", "fp8", "fsdp", 1024), 2.0, t);
  ASSERT_TRUE(farther);
  EXPECT_DOUBLE_EQ(farther->widening, 5.0);
  EXPECT_GT(farther->hi - farther->lo, far->hi - far->lo);
}

// An MoE / MLA serving prediction among dense rows (the evenly spread table as throughput rows, then one
// MLA row 51 % too fast, as serving-trtllm-mla): the dense rows are 2 away (model and attention differ),
// so the interval's spread counts 3 times rather than once; a dense prediction never sees the MLA row.
TEST(ErrorBars, AnMlaPredictionsIntervalWidensAmongDenseRows) {
  const auto dense = features("h200-sxm-141gb", "fp8", "serving", 8);
  ResidualTable t = evenly_spread_table(dense);
  for (auto& r : t.rows)
    r.metric = "output_tokens_per_s";
  auto mla = dense;
  mla.model = "moe";
  mla.attention = "mla";
  // Without an MLA row: every neighbour at 2, w = 3; percentiles -0.09, 0, +0.09 as in the dense case.
  const auto dense_i = metric_interval(dense, "output_tokens_per_s", 1000.0, t);
  const auto alone = metric_interval(mla, "output_tokens_per_s", 1000.0, t);
  ASSERT_TRUE(dense_i && alone);
  EXPECT_DOUBLE_EQ(dense_i->widening, 1.0);
  EXPECT_DOUBLE_EQ(alone->mean_distance, 2.0);
  EXPECT_DOUBLE_EQ(alone->widening, 3.0);
  EXPECT_NEAR(alone->lo, 1000.0 * std::exp(-0.09 * 3 - 0.037), 1e-9);
  EXPECT_NEAR(alone->hi, 1000.0 * std::exp(0.09 * 3 + 0.037), 1e-9);
  // 1000 exp(+-0.127) = [880.7, 1135.4] for the dense prediction; [735.6, 1359.4] for the MLA one.
  EXPECT_NEAR(dense_i->lo, 1000.0 * std::exp(-0.127), 1e-9);
  EXPECT_GT(alone->hi - alone->lo, 2.0 * (dense_i->hi - dense_i->lo));

  // With the MLA row (predicted 1.511 x measured: l = -ln 1.511 = -0.4128): the MLA prediction's
  // neighbours are it (0) and the 21 dense rows (2, ties kept): k = 22, D = 42 / 22, w = 1 + 42 / 22.
  ResidualRow r = row("serving-trtllm-mla", "mla-0001", mla, 0.511);
  r.metric = "output_tokens_per_s";
  t.rows.push_back(r);
  const auto with = metric_interval(mla, "output_tokens_per_s", 1000.0, t);
  ASSERT_TRUE(with);
  EXPECT_EQ(with->rows, 22);
  const double w = 1.0 + 42.0 / 22.0;
  EXPECT_DOUBLE_EQ(with->widening, w);
  // The 22 ln ratios sorted: -0.4128, -0.10, -0.09, ..., +0.10. Percentile p at position p x 21
  // (linear): q5 at 1.05 -> -0.10 + 0.05 x 0.01 = -0.0995; q50 at 10.5 -> -0.005 (between -0.01 and 0);
  // q95 at 19.95 -> 0.08 + 0.95 x 0.01 = 0.0895.
  const double q5 = -0.0995, q50 = -0.005, q95 = 0.0895;
  EXPECT_NEAR(with->lo, 1000.0 * std::exp(q50 - (q50 - q5) * w - 0.037), 1e-6);
  EXPECT_NEAR(with->hi, 1000.0 * std::exp(q50 + (q95 - q50) * w + 0.037), 1e-6);
  // A dense prediction's interval is unchanged: the MLA row is 2 away, 21 rows are at 0.
  const auto dense_after = metric_interval(dense, "output_tokens_per_s", 1000.0, t);
  ASSERT_TRUE(dense_after);
  EXPECT_EQ(dense_after->rows, 21);
  EXPECT_DOUBLE_EQ(dense_after->lo, dense_i->lo);
  EXPECT_DOUBLE_EQ(dense_after->hi, dense_i->hi);
}

TEST(ErrorBars, ShippedResidualsGiveWiderIntervalsAwayFromTheValidatedRuns) {
  const ResidualTable t = shipped_residuals();
  ASSERT_GT(t.rows.size(), 1000u);
  // Among vTrain's A100 runs (fp16, Megatron, 64 GPUs) against a B200 fp8 FSDP run on 8,192 GPUs,
  // which no validation row resembles.
  const auto among = step_time_interval(features("a100-sxm4-80gb", "fp16", "megatron", 64), 1.0, t);
  const auto away = step_time_interval(features("b200", "fp8", "fsdp", 8192), 1.0, t);
  ASSERT_TRUE(among && away);
  EXPECT_LT(among->mean_distance, 0.1);
  EXPECT_GT(away->mean_distance, 1.5);
  EXPECT_GT(away->hi - away->lo, 1.5 * (among->hi - among->lo));
}

TEST(ErrorBars, LeaveOneOutNeverUsesTheRowItself) {
  // One row predicted exactly (a), one 50 % too fast (b: e = -1/3, measured 1.5 x predicted).
  const auto f = features("h100-sxm5-80gb", "bf16", "megatron", 8);
  ResidualTable t;
  t.rows = {row("a", "0", f, 0.0), row("b", "1", f, 1.0 / 1.5 - 1.0)};
  // With its own residual a row's interval always holds it (here: the 3.7 % floor around l = 0).
  ResidualTable alone;
  alone.rows = {t.rows[0]};
  const auto own = step_time_interval(f, 1.0, alone);
  ASSERT_TRUE(own);
  EXPECT_NEAR(own->lo, std::exp(-0.037), 1e-12);
  EXPECT_NEAR(own->hi, std::exp(0.037), 1e-12);
  // Excluding row 0, its neighbour is row 1 only: ln 1.5 +- 3.7 %.
  ResidualExclusion exclude;
  exclude.row = &t.rows[0];
  const auto without = step_time_interval(f, 1.0, t, exclude);
  ASSERT_TRUE(without);
  EXPECT_EQ(without->rows, 1);
  EXPECT_NEAR(without->lo, 1.5 * std::exp(-0.037), 1e-12);
  EXPECT_NEAR(without->hi, 1.5 * std::exp(0.037), 1e-12);
  // So leave-one-out covers neither row: each sees only the other.
  const auto coverage = leave_one_out_coverage(t);
  ASSERT_EQ(coverage.size(), 2u);
  EXPECT_EQ(coverage[0].dataset, "a");
  EXPECT_EQ(coverage[0].rows, 1u);
  EXPECT_EQ(coverage[0].covered, 0u);
  EXPECT_EQ(coverage[1].covered, 0u);
  // Leaving the whole dataset out, a's rows see only b's.
  const auto by_dataset = leave_one_out_coverage(t, true);
  EXPECT_EQ(by_dataset[0].rows, 1u);
  EXPECT_EQ(by_dataset[0].covered, 0u);
}

TEST(ErrorBars, ShippedResidualsCoverAtLeast80PercentOfEveryDatasetLeaveOneOut) {
  const ResidualTable t = shipped_residuals();
  const auto coverage = leave_one_out_coverage(t);
  ASSERT_GE(coverage.size(), 10u);
  for (const auto& c : coverage) {
    EXPECT_GE(c.coverage, 0.80) << c.dataset << ": " << c.covered << " of " << c.rows;
    EXPECT_GT(c.median_width, 0.0) << c.dataset;
  }
}

// The error parse_residuals reports for file r.json of one b200 fp8 row, its keys after the row's
// dataset, id, gpu, generation and precision being `fields`.
SpecError one_row_error(const std::string& fields) {
  const std::string text = R"({"generated_by": "x", "fidelity": "flow", "rows": [{"dataset": "d", "id": "1", )"
                           R"("gpu": "b200", "generation": "blackwell", "precision": "fp8", )" +
                           fields + "}]}";
  return spec_error_of([&] { parse_residuals(text, "r.json"); });
}

TEST(ErrorBars, ResidualFileRoundTripsAndBadRowsNameTheirPath) {
  const auto f = features("a100-sxm4-80gb", "fp16", "megatron", 64);
  ResidualTable t;
  t.generated_by = "test";
  t.fidelity = "analytical";
  t.rows = {row("d", "0001", f, -0.125), row("d", "0002", f, 0.25)};
  const ResidualTable back = parse_residuals(residuals_to_json(t), "r.json");
  ASSERT_EQ(back.rows.size(), 2u);
  EXPECT_EQ(back.rows[1].id, "0002");
  EXPECT_EQ(back.rows[1].features.generation, "ampere");
  EXPECT_DOUBLE_EQ(back.rows[0].step_time_error, -0.125);
  EXPECT_EQ(back.rows[0].features.model, "dense");
  EXPECT_EQ(back.rows[0].features.attention, "mha");
  // The model's features round-trip, and a file without them (or with another kind) names the key.
  auto mla = f;
  mla.model = "moe";
  mla.attention = "mla";
  ResidualTable m;
  m.rows = {row("d", "0003", mla, 0.5)};
  const ResidualTable m_back = parse_residuals(residuals_to_json(m), "r.json");
  EXPECT_EQ(m_back.rows[0].features.model, "moe");
  EXPECT_EQ(m_back.rows[0].features.attention, "mla");
  const SpecError missing = one_row_error(R"("sharding": "fsdp", "gpus": 8, "step_time_error": 0.1)");
  EXPECT_EQ(missing.json_path(), "/rows/0/model");
  const SpecError kind = one_row_error(
      R"("sharding": "fsdp", "gpus": 8, "model": "dense", "attention": "linear", "step_time_error": 0.1)");
  EXPECT_EQ(kind.json_path(), "/rows/0/attention");
  EXPECT_NE(kind.message().find("mla"), std::string::npos) << kind.message();

  const SpecError e =
      one_row_error(R"("sharding": "zero", "gpus": 8, "model": "dense", "attention": "mha", "step_time_error": 0.1)");
  EXPECT_EQ(e.file(), "r.json");
  EXPECT_EQ(e.json_path(), "/rows/0/sharding");
  EXPECT_NE(e.message().find("fsdp"), std::string::npos) << e.message();
  // An error of -1 or less would mean a zero or negative predicted time.
  const SpecError neg =
      one_row_error(R"("sharding": "fsdp", "gpus": 8, "model": "dense", "attention": "mha", "step_time_error": -1)");
  EXPECT_EQ(neg.json_path(), "/rows/0/step_time_error");
}

TEST(ErrorBars, ServingMetricRowsRoundTripAndAreOnlyTheirOwnMetricsNeighbours) {
  const auto f = features("h100-sxm5-80gb", "fp8", "serving", 2);
  ResidualTable t = evenly_spread_table(f);             // 21 step-time rows
  ResidualRow ttft = row("serving-x", "0001", f, 0.5);  // TTFT predicted 1.5 x the measured
  ttft.metric = "ttft_s";
  t.rows.push_back(ttft);
  // The TTFT interval: its one neighbour, ln(measured / predicted) = -ln 1.5, +- the 3.7 % floor.
  const auto i = metric_interval(f, "ttft_s", 3.0, t);
  ASSERT_TRUE(i);
  EXPECT_EQ(i->rows, 1);
  EXPECT_NEAR(i->lo, 3.0 / 1.5 * std::exp(-0.037), 1e-12);
  EXPECT_NEAR(i->hi, 3.0 / 1.5 * std::exp(0.037), 1e-12);
  // The step time never sees it (21 rows, as without it); a metric without rows has no interval.
  EXPECT_EQ(step_time_interval(f, 2.0, t)->rows, 21);
  EXPECT_FALSE(metric_interval(f, "itl_s", 0.01, t));
  // The file names a serving row's metric and calls its error "error"; training rows are unchanged.
  t.generated_by = "test";
  t.fidelity = "analytical";
  const std::string json = residuals_to_json(t);
  EXPECT_NE(
      json.find(R"("sharding":"serving","gpus":2,"model":"dense","attention":"mha","metric":"ttft_s","error":0.5})"),
      std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("gpus":2,"model":"dense","attention":"mha","step_time_error":)"), std::string::npos);
  const ResidualTable back = parse_residuals(json, "r.json");
  ASSERT_EQ(back.rows.size(), 22u);
  EXPECT_EQ(back.rows[0].metric, "step_time_s");
  EXPECT_EQ(back.rows[21].metric, "ttft_s");
  EXPECT_DOUBLE_EQ(back.rows[21].step_time_error, 0.5);
  const SpecError e = one_row_error(
      R"("sharding": "serving", "gpus": 8, "model": "dense", "attention": "mha", "metric": "e2e_s", "error": 0.1)");
  EXPECT_EQ(e.json_path(), "/rows/0/metric");
}

// The serving rows of the shipped residuals (`clustersim validate all`): serving-trtllm-inflight's 60
// throughputs and serving-nim-latency's 8 operating points x 3 metrics (dense, multi-head attention), and
// serving-trtllm-mla's one DeepSeek-R1 throughput (moe, mla). Leave one out, the interval from the other
// rows of the same metric contains the published value: measured 2026-11-28, 57 of
// serving-trtllm-inflight's 60 (95.0 %) and 22 of serving-nim-latency's 24 (91.7 %; docs/validation.md,
// "Error bars"), pinned as floors.
TEST(ErrorBars, ShippedServingResidualsCoverThePublishedRows) {
  const ResidualTable t = shipped_residuals();
  std::size_t inflight = 0, nim = 0, mla = 0;
  for (const auto& r : t.rows) {
    inflight += r.dataset == "serving-trtllm-inflight" ? 1 : 0;
    nim += r.dataset == "serving-nim-latency" ? 1 : 0;
    mla += r.dataset == "serving-trtllm-mla" ? 1 : 0;
    if (r.dataset.starts_with("serving-")) {
      const bool deepseek = r.dataset == "serving-trtllm-mla";
      // DeepSeek-R1: experts over ep 8, attention data-parallel over the 8 GPUs; the others tp only.
      EXPECT_EQ(r.features.sharding, deepseek ? "serving-ep" : "serving") << r.id;
      EXPECT_NE(r.metric, "step_time_s") << r.id;
      EXPECT_EQ(r.features.model, deepseek ? "moe" : "dense") << r.id;
      EXPECT_EQ(r.features.attention, deepseek ? "mla" : "mha") << r.id;
    }
  }
  EXPECT_EQ(inflight, 60u);
  EXPECT_EQ(nim, 24u);
  EXPECT_EQ(mla, 1u);
  for (const auto& c : leave_one_out_coverage(t)) {
    if (c.dataset == "serving-trtllm-inflight") {
      EXPECT_GE(c.covered, 57u) << c.coverage;
    }
    if (c.dataset == "serving-nim-latency") {
      EXPECT_GE(c.covered, 22u) << c.coverage;
    }
  }
}

// The shipped serving-trtllm-mla row is what `validate all --residuals` writes for it: the features
// serving_features takes from its spec (DeepSeek-V3's shape: 256 routed experts, attention_type mla; ep 8
// and data-parallel attention over tp 8) and its error, to the file's 6 decimals.
TEST(ErrorBars, ShippedMlaRowIsWhatTheValidationWrites) {
  const std::vector<ResidualRow> rows = serving_residual_rows(run_serving_validation("serving-trtllm-mla"));
  ASSERT_EQ(rows.size(), 1u);
  const ResidualRow& r = rows[0];
  EXPECT_EQ(r.features.model, "moe");
  EXPECT_EQ(r.features.attention, "mla");
  EXPECT_EQ(r.features.sharding, "serving-ep");
  EXPECT_EQ(r.features.precision, "fp8");
  EXPECT_EQ(r.features.generation, "hopper");
  EXPECT_EQ(r.features.gpus, 8);
  EXPECT_EQ(r.metric, "output_tokens_per_s");
  const ResidualTable shipped = shipped_residuals();
  const ResidualRow* in_file = nullptr;
  for (const auto& x : shipped.rows)
    if (x.dataset == "serving-trtllm-mla") in_file = &x;
  ASSERT_NE(in_file, nullptr);
  EXPECT_EQ(in_file->id, r.id);
  EXPECT_EQ(in_file->features.sharding, r.features.sharding);
  EXPECT_NEAR(in_file->step_time_error, r.step_time_error, 1e-6);
}

TEST(ErrorBars, ThroughputErrorsBecomeStepTimeErrors) {
  // 25 % too many TFLOP/s predicted = the step predicted in 1 / 1.25 of the measured time: -20 %.
  EXPECT_DOUBLE_EQ(step_time_error(*find_validation_metric("tflops_per_gpu"), 0.25), -0.2);
  EXPECT_DOUBLE_EQ(step_time_error(*find_validation_metric("iteration_time_ms"), 0.25), 0.25);
  EXPECT_DOUBLE_EQ(step_time_error(*find_validation_metric("iteration_time_s"), -0.1), -0.1);
}

Report report_with_interval(double step_s, double lo_s, double hi_s) {
  Report r;
  r.step_time_s = step_s;
  r.tokens_per_s = 1000.0 / step_s;  // 1000 tokens per step
  r.step_time_interval = StepTimeInterval{};
  r.step_time_interval->lo = lo_s;
  r.step_time_interval->hi = hi_s;
  return r;
}

TEST(ErrorBars, CompareSaysWhichDesignsAreWithinTheModelsErrorOfEachOther) {
  // 1e6 tokens = 1000 steps. a: 1.0 s [0.9, 1.2]; b: 1.1 s [1.0, 1.3] overlaps a; c: 2.0 s [1.8, 2.4] neither.
  std::vector<DesignRow> rows(3);
  rows[0].design = "a";
  rows[0].report = report_with_interval(1.0, 0.9, 1.2);
  rows[1].design = "b";
  rows[1].report = report_with_interval(1.1, 1.0, 1.3);
  rows[2].design = "c";
  rows[2].report = report_with_interval(2.0, 1.8, 2.4);
  const DesignComparison c = compare_designs("w", 1e6, rows);
  EXPECT_NEAR(*c.rows[0].train_time_lo_s, 900.0, 1e-9);
  EXPECT_NEAR(*c.rows[0].train_time_hi_s, 1200.0, 1e-9);
  EXPECT_EQ(c.rows[0].within_error_of, std::vector<std::string>{"b"});
  EXPECT_EQ(c.rows[1].within_error_of, std::vector<std::string>{"a"});
  EXPECT_TRUE(c.rows[2].within_error_of.empty());
  EXPECT_NE(comparison_to_text(c).find("a and b"), std::string::npos) << comparison_to_text(c);
  EXPECT_NE(comparison_to_json(c).find("\"within_error_of\""), std::string::npos);
}

TEST(ErrorBars, ReportJsonCarriesTheIntervalAndItsBasis) {
  Report r = report_with_interval(1.0, 0.8, 1.3);
  r.step_time_interval->rows = 20;
  r.step_time_interval->datasets = {{"vtrain-multi", 15}, {"megatron-a100-2021", 5}};
  r.step_time_interval->mean_distance = 0.3;
  r.step_time_interval->rule = "rule";
  const Report back = Report::from_json(r.to_json());
  ASSERT_TRUE(back.step_time_interval);
  EXPECT_DOUBLE_EQ(back.step_time_interval->lo, 0.8);
  EXPECT_DOUBLE_EQ(back.step_time_interval->hi, 1.3);
  ASSERT_EQ(back.step_time_interval->datasets.size(), 2u);
  EXPECT_EQ(back.step_time_interval->datasets[0].dataset, "vtrain-multi");
  EXPECT_EQ(back.step_time_interval->datasets[0].rows, 15);
  EXPECT_NE(r.to_json().find("\"step_time_interval_s\""), std::string::npos);
}

}  // namespace
}  // namespace clustersim
