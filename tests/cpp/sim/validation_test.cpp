// clustersim validate's parts: the error statistics, the mapping of published rows to specs, and how
// rows the simulator refuses and malformed data are reported. Predicted figures are not asserted here
// (they move with the models); accuracy is measured by bench/bench_validation.py.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "../spec_error_of.hpp"
#include "../validation_fixture.hpp"
#include "sim/api/validation_run.hpp"
#include "sim/core/csv_table.hpp"
#include "sim/core/quantile.hpp"
#include "sim/validation/error_summary.hpp"
#include "sim/validation/validation_dataset.hpp"

namespace clustersim {
namespace {

using testing::spec_error_of;

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "clustersim_validation_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

const ValidationCase& case_with_id(const ValidationDataset& d, const std::string& id) {
  for (const auto& c : d.cases)
    if (c.id == id) return c;
  throw std::runtime_error("no case " + id);
}

// A case's parallel layout: its tensor, pipeline and data-parallel sizes and the micro-batches of a step.
void expect_layout(const WorkloadSpec& w, int tp, int pp, int dp, int micro_batches) {
  EXPECT_EQ(w.parallelism.tp, tp);
  EXPECT_EQ(w.parallelism.pp, pp);
  EXPECT_EQ(w.parallelism.dp, dp);
  EXPECT_EQ(w.micro_batches(), micro_batches);
}

TEST(ErrorSummary, HandWorkedList) {
  // |e| sorted: 0.05 0.1 0.1 0.2 0.3. MAPE 0.75/5; median the third; p90 at position 0.9 x 4 = 3.6:
  // 0.2 + 0.6 x (0.3 - 0.2); bias (0.1 - 0.2 + 0.05 + 0.3 - 0.1) / 5.
  const std::vector<double> errors{0.1, -0.2, 0.05, 0.3, -0.1};
  const ErrorSummary s = summarize_errors(errors);
  EXPECT_EQ(s.count, 5u);
  EXPECT_NEAR(s.mape, 0.15, 1e-12);
  EXPECT_NEAR(s.median_abs, 0.1, 1e-12);
  EXPECT_NEAR(s.p90_abs, 0.26, 1e-12);
  EXPECT_NEAR(s.max_abs, 0.3, 1e-12);
  EXPECT_NEAR(s.bias, 0.03, 1e-12);
}

TEST(ErrorSummary, EmptyAndSingle) {
  EXPECT_EQ(summarize_errors({}).count, 0u);
  EXPECT_EQ(summarize_errors({}).mape, 0.0);
  const std::vector<double> one{-0.4};
  const ErrorSummary s = summarize_errors(one);
  EXPECT_NEAR(s.median_abs, 0.4, 1e-12);
  EXPECT_NEAR(s.p90_abs, 0.4, 1e-12);
  EXPECT_NEAR(s.bias, -0.4, 1e-12);
  // Even count: the median is the mean of the two middle values.
  EXPECT_NEAR(quantile({4.0, 1.0, 3.0, 2.0}, 0.5), 2.5, 1e-12);
}

TEST(ValidationSummary, CountsEveryStatusButSummarizesOnlySimulatedRows) {
  std::vector<RowResult> rows(4);
  rows[0].status = RowStatus::simulated;
  rows[0].error = 0.1;
  rows[1].status = RowStatus::simulated;
  rows[1].error = -0.3;
  rows[1].fits = false;
  rows[2].status = RowStatus::unsupported;
  rows[2].error = 5.0;  // ignored
  rows[3].status = RowStatus::failed;
  const ValidationSummary s = summarize(rows);
  EXPECT_EQ(s.rows, 4u);
  EXPECT_EQ(s.simulated, 2u);
  EXPECT_EQ(s.unsupported, 1u);
  EXPECT_EQ(s.failed, 1u);
  EXPECT_EQ(s.not_fitting, 1u);
  EXPECT_NEAR(s.errors.mape, 0.2, 1e-12);
  EXPECT_NEAR(s.errors.max_abs, 0.3, 1e-12);
}

TEST(ValidationDatasets, RegistryNamesTheShippedDatasets) {
  const auto names = validation_dataset_names();
  for (const char* n : {"h100-device", "megatron-a100-2021", "megatron-h100-2024", "vtrain-multi", "vtrain-single",
                        "korthikanti2022-a100", "llmfoundry-a100-40gb", "llmfoundry-a100-80gb", "llmfoundry-h100",
                        "nemo-h100-fp8-2024", "nemo-h100-long-sequence", "torchtitan-h100"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
}

TEST(ValidationDatasets, VtrainMultiRowsMapToGptOnA100Nodes) {
  const ValidationDataset d = load_validation_dataset("vtrain-multi");
  EXPECT_EQ(d.total_rows, 109u);
  ASSERT_EQ(d.cases.size(), 109u);
  EXPECT_STREQ(d.metric->name, "iteration_time_ms");

  // Row 0000: 3.6B, 64 GPUs, global batch 512, micro batch 8, h 3072, 32 heads, 30 layers, s 2048, TP1 DP64 PP1.
  const ValidationCase& c = case_with_id(d, "0000");
  EXPECT_EQ(c.gpus, 64);
  EXPECT_DOUBLE_EQ(c.measured, 3566.5);
  ASSERT_TRUE(c.workload && c.cluster) << c.unsupported;
  const WorkloadSpec& w = *c.workload;
  EXPECT_EQ(w.model.layers, 30);
  EXPECT_EQ(w.model.hidden, 3072);
  EXPECT_EQ(w.model.heads, 32);
  EXPECT_EQ(w.model.ffn_hidden, 4 * 3072);
  EXPECT_EQ(w.model.seq_len, 2048);
  EXPECT_EQ(w.model.vocab, 50304);  // 50257 padded to a multiple of 128 x tp
  EXPECT_TRUE(w.model.tied_embeddings);
  EXPECT_EQ(w.model.activation, "gelu");
  EXPECT_EQ(w.training.global_batch, 512);
  EXPECT_EQ(w.training.micro_batch, 8);
  EXPECT_EQ(w.training.precision, Precision::fp16);
  EXPECT_EQ(w.training.recompute, "full");
  expect_layout(w, 1, 1, 64, 1);
  EXPECT_FALSE(w.parallelism.overlap_grad_reduce);
  EXPECT_EQ(w.parallelism.pipeline_schedule, "1f1b");
  EXPECT_EQ(c.cluster->nodes, 8);
  EXPECT_EQ(c.cluster->node.gpus, 8);
  EXPECT_EQ(c.cluster->node.nics, 4);
  EXPECT_EQ(c.cluster->gpu_id, "a100-sxm4-80gb");

  // Row 0088: 175B on 512 GPUs, micro batch 2, TP4 DP8 PP16: 1536 / (2 x 8) = 96 micro-batches.
  const ValidationCase& big = case_with_id(d, "0088");
  ASSERT_TRUE(big.workload && big.cluster) << big.unsupported;
  EXPECT_EQ(big.workload->model.layers, 96);
  EXPECT_EQ(big.workload->model.hidden, 12288);
  EXPECT_EQ(big.workload->model.vocab, 50688);  // multiple of 512
  expect_layout(*big.workload, 4, 16, 8, 96);
  EXPECT_EQ(big.cluster->nodes, 64);
}

TEST(ValidationDatasets, VtrainSingleRowsUseOneNodeOfTheirGpus) {
  const ValidationDataset d = load_validation_dataset("vtrain-single", 819);
  EXPECT_EQ(d.total_rows, 1440u);
  ASSERT_EQ(d.cases.size(), 819u);  // --limit
  // Row 0818 (vTrain's config_val_single_0818.json): 2 GPUs, batch 16, micro batch 4, 12 layers, PP2.
  const ValidationCase& c = case_with_id(d, "0818");
  ASSERT_TRUE(c.workload && c.cluster) << c.unsupported;
  EXPECT_EQ(c.gpus, 2);
  EXPECT_EQ(c.cluster->nodes, 1);
  EXPECT_EQ(c.cluster->node.gpus, 2);
  EXPECT_LE(c.cluster->node.nics, 2);
  EXPECT_EQ(c.workload->model.layers, 12);
  EXPECT_EQ(c.workload->model.hidden, 1024);
  EXPECT_EQ(c.workload->model.seq_len, 1024);
  expect_layout(*c.workload, 1, 2, 1, 4);
}

TEST(ValidationDatasets, MegatronA100RowsCarryTheirHeadsAndTheRecomputeFlops) {
  const ValidationDataset d = load_validation_dataset("megatron-a100-2021");
  EXPECT_EQ(d.cases.size(), 10u);
  EXPECT_STREQ(d.metric->name, "tflops_per_gpu");
  // e2e-0014: GPT 39B, 512 GPUs, TP8 PP2 DP32, batch 1536; 64 heads from Narayanan et al. Table 1.
  const ValidationCase& c = case_with_id(d, "e2e-0014");
  ASSERT_TRUE(c.workload && c.cluster) << c.unsupported;
  EXPECT_EQ(c.workload->model.layers, 48);
  EXPECT_EQ(c.workload->model.hidden, 8192);
  EXPECT_EQ(c.workload->model.heads, 64);
  EXPECT_EQ(c.workload->model.vocab, 51200);
  expect_layout(*c.workload, 8, 2, 32, 48);
  EXPECT_EQ(c.cluster->nodes, 64);
  EXPECT_DOUBLE_EQ(c.measured, 138.0);
  const double B = 1536, s = 2048, L = 48, h = 8192, V = 51200;
  EXPECT_NEAR(c.flops_per_step / (96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h))), 1.0, 1e-12);
}

TEST(ValidationDatasets, MegatronH100RowsTurnOnSequenceParallelismWithTp) {
  const ValidationDataset d = load_validation_dataset("megatron-h100-2024");
  EXPECT_EQ(d.cases.size(), 9u);
  const ValidationCase& dp_only = case_with_id(d, "e2e-0001");
  ASSERT_TRUE(dp_only.workload && dp_only.cluster) << dp_only.unsupported;
  EXPECT_FALSE(dp_only.workload->parallelism.sequence_parallel);
  EXPECT_EQ(dp_only.cluster->nodes, 6);
  EXPECT_EQ(dp_only.cluster->fabric.tiers, 3);
  EXPECT_EQ(dp_only.workload->model.vocab, 131072);
  EXPECT_EQ(dp_only.workload->training.precision, Precision::bf16);
  const ValidationCase& tp2 = case_with_id(d, "e2e-0002");
  ASSERT_TRUE(tp2.workload) << tp2.unsupported;
  EXPECT_TRUE(tp2.workload->parallelism.sequence_parallel);
  EXPECT_TRUE(tp2.workload->parallelism.tp_comm_overlap);
  EXPECT_EQ(tp2.workload->parallelism.tp, 2);
}

TEST(ValidationDatasets, LlmFoundryRowsAreFsdpOverEveryGpu) {
  const ValidationDataset d = load_validation_dataset("llmfoundry-a100-40gb");
  EXPECT_EQ(d.stack, "llm-foundry");
  EXPECT_EQ(std::string(d.metric->name), "iteration_time_s");
  // e2e-0335: MPT-125m, seq 1024, 8 A100 40GB, gb 1248, mb 52, FULL_SHARD, PURE bf16, 1.0772 s.
  const ValidationCase& c = case_with_id(d, "e2e-0335");
  ASSERT_TRUE(c.workload && c.cluster) << c.unsupported;
  EXPECT_DOUBLE_EQ(c.measured, 1.0772);
  EXPECT_EQ(c.cluster->gpu_id, "a100-sxm4-40gb");
  EXPECT_EQ(c.cluster->nodes, 1);
  EXPECT_EQ(c.workload->parallelism.zero_stage, 3);
  EXPECT_EQ(c.workload->parallelism.dp, 8);
  EXPECT_EQ(c.workload->training.micro_batch, 52);
  EXPECT_EQ(c.workload->training.precision, Precision::bf16);
  EXPECT_EQ(c.workload->model.ffn_hidden, 3072);
  const ValidationDataset h = load_validation_dataset("llmfoundry-h100");
  int fp8 = 0;
  for (const auto& x : h.cases)
    if (x.workload && x.workload->training.precision == Precision::fp8) ++fp8;
  EXPECT_EQ(fp8, 7);  // the table 'H100 80GB FP8'
}

TEST(ValidationDatasets, NemoRowsCarryTheirModelShapeAndSchedule) {
  const ValidationDataset d = load_validation_dataset("nemo-h100-fp8-2024");
  EXPECT_EQ(d.cases.size(), 12u);
  // e2e-0343: Llama 2 70B (GQA, 8 KV heads), tp4 pp4 vp20 on 64 H100 in fp8.
  const ValidationCase& c = case_with_id(d, "e2e-0343");
  ASSERT_TRUE(c.workload && c.cluster) << c.unsupported;
  EXPECT_EQ(c.workload->model.layers, 80);
  EXPECT_EQ(c.workload->model.kv_heads, 8);
  EXPECT_EQ(c.workload->training.precision, Precision::fp8);
  EXPECT_EQ(c.workload->parallelism.virtual_stages, 20);
  EXPECT_TRUE(c.workload->parallelism.sequence_parallel);
  EXPECT_EQ(c.cluster->nodes, 8);
  const ValidationDataset l = load_validation_dataset("nemo-h100-long-sequence");
  const ValidationCase& m = case_with_id(l, "e2e-0365");  // 1M tokens: seq_len_k 1024
  ASSERT_TRUE(m.workload) << m.unsupported;
  EXPECT_EQ(m.workload->model.seq_len, 1048576);
  EXPECT_EQ(m.workload->parallelism.cp, 32);
}

TEST(ValidationDatasets, TorchtitanRowsRunOnTheTablesH100) {
  const ValidationDataset d = load_validation_dataset("torchtitan-h100");
  EXPECT_EQ(d.cases.size(), 11u);  // Tables 1-4; Tables 1 and 3 with their bf16 torch.compile rows
  // tt-0001: Table 1, FSDP, 8 GPUs, global batch 16 x 8192 tokens at 5,762 TPS/GPU = 2.8435 s.
  const ValidationCase& c = case_with_id(d, "tt-0001");
  ASSERT_TRUE(c.workload && c.cluster) << c.unsupported;
  EXPECT_NEAR(c.measured, 16.0 * 8192 / (5762.0 * 8), 1e-4);
  EXPECT_EQ(c.workload->parallelism.zero_stage, 3);
  EXPECT_EQ(c.workload->model.kv_heads, 8);
  EXPECT_EQ(c.workload->training.recompute, "selective");
  EXPECT_FALSE(c.cluster->gpu_inline_json.empty());  // the 96 GB HBM2e variant of the catalogue H100
  // tt-0009: Table 4, FSDP 32 x TP 8 with sequence parallelism, fp8, full recompute.
  const ValidationCase& t = case_with_id(d, "tt-0009");
  ASSERT_TRUE(t.workload) << t.unsupported;
  EXPECT_EQ(t.workload->parallelism.tp, 8);
  EXPECT_TRUE(t.workload->parallelism.sequence_parallel);
  EXPECT_EQ(t.workload->training.precision, Precision::fp8);
  EXPECT_EQ(t.cluster->nodes, 32);
  // tt-0010: Table 1's 'FSDP + torch.compile' row, bf16 compiled: 16 x 8192 / (6,667 x 8) = 2.4575 s.
  const ValidationCase& k = case_with_id(d, "tt-0010");
  ASSERT_TRUE(k.workload) << k.unsupported;
  EXPECT_NEAR(k.measured, 16.0 * 8192 / (6667.0 * 8), 1e-4);
  EXPECT_TRUE(k.workload->training.torch_compile);
  EXPECT_EQ(k.workload->training.precision, Precision::bf16);
}

TEST(ValidationDatasets, RowsTheSpecsRefuseAreUnsupportedNotErrors) {
  // Row 0: 16 heads do not divide hidden 1000 (the workload spec refuses it: no specs at all).
  // Row 1: tp 3 does not divide 16 heads (refused when the simulation resolves the layout).
  // Row 2: a small data-parallel run.
  const std::string csv = write_temp("refused.csv", std::string(testing::kTinyDatasetHeader) +
                                                        "8,2,1000,16,32,1,8,100\n"
                                                        "3,2,1024,16,3,3,1,100\n"
                                                        "8,2,1024,16,32,1,8,100\n");
  const std::string desc = write_temp("refused.json", testing::tiny_dataset_description(csv));
  const ValidationDataset d = load_validation_dataset(desc);
  ASSERT_EQ(d.cases.size(), 3u);
  EXPECT_NE(d.cases[0].unsupported.find("/model/heads"), std::string::npos) << d.cases[0].unsupported;
  EXPECT_FALSE(d.cases[0].workload.has_value());
  EXPECT_TRUE(d.cases[2].unsupported.empty()) << d.cases[2].unsupported;

  ValidationOptions options;
  options.fidelity = "analytical";
  const ValidationResult r = run_validation(d, options);
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(r.rows[0].status, RowStatus::unsupported);
  EXPECT_EQ(r.rows[0].reason, d.cases[0].unsupported);
  EXPECT_EQ(r.rows[1].status, RowStatus::unsupported);
  EXPECT_NE(r.rows[1].reason.find("tp"), std::string::npos) << r.rows[1].reason;
  EXPECT_EQ(r.rows[2].status, RowStatus::simulated) << r.rows[2].reason;
  EXPECT_GT(r.rows[2].predicted, 0.0);
  EXPECT_NEAR(r.rows[2].error, (r.rows[2].predicted - 100.0) / 100.0, 1e-12);
  EXPECT_EQ(r.summary.unsupported, 2u);
  EXPECT_EQ(r.summary.simulated, 1u);
  EXPECT_EQ(r.summary.errors.count, 1u);
}

TEST(ValidationDatasets, MalformedCellNamesTheFileAndCell) {
  const std::string csv = write_temp("malformed.csv", std::string(testing::kTinyDatasetHeader) +
                                                          "8,2,1024,16,32,1,8,100\n"
                                                          "8,2,wide,16,32,1,8,100\n");
  const std::string desc = write_temp("malformed.json", testing::tiny_dataset_description(csv));
  const SpecError e = spec_error_of([&] { load_validation_dataset(desc); });
  EXPECT_EQ(e.file(), csv);
  EXPECT_EQ(e.json_path(), "row 3/column hidden");
}

TEST(ValidationDatasets, MissingMeasurementIsAnError) {
  const std::string csv =
      write_temp("nomeasure.csv", std::string(testing::kTinyDatasetHeader) + "8,2,1024,16,32,1,8,\n");
  const SpecError e = spec_error_of(
      [&] { load_validation_dataset(write_temp("nomeasure.json", testing::tiny_dataset_description(csv))); });
  EXPECT_EQ(e.file(), csv);
  EXPECT_EQ(e.json_path(), "row 2/column time (ms)");
}

TEST(ValidationDatasets, H100DeviceRowsAreOneH100RunningPyTorchEager) {
  const ValidationDataset d = load_validation_dataset("h100-device");
  ASSERT_EQ(d.cases.size(), 12u);
  EXPECT_STREQ(d.metric->name, "iteration_time_ms");
  ASSERT_NE(d.peak_memory, nullptr);
  EXPECT_STREQ(d.peak_memory->name, "allocated");
  EXPECT_STREQ(d.peak_memory_unit->name, "GiB");
  // gpt-2.7b, micro-batch 2 (32 layers, h 2560, 32 heads): 175.2 ms and 47.06 GiB.
  const ValidationCase& c = case_with_id(d, "gpt-2.7b-mb2-gb2");
  EXPECT_EQ(c.gpus, 1);
  EXPECT_DOUBLE_EQ(c.measured, 175.2);
  EXPECT_DOUBLE_EQ(c.measured_peak_bytes, 47.06 * 1073741824.0);
  ASSERT_TRUE(c.workload && c.cluster) << c.unsupported;
  EXPECT_EQ(c.workload->model.layers, 32);
  EXPECT_EQ(c.workload->model.heads, 32);
  EXPECT_EQ(c.workload->model.ffn_hidden, 10240);
  EXPECT_EQ(c.workload->model.vocab, 50304);
  EXPECT_EQ(c.workload->training.micro_batch, 2);
  EXPECT_EQ(c.workload->training.grad_buffer, "per_step");
  EXPECT_EQ(c.workload->training.cross_entropy, "eager");
  EXPECT_EQ(c.workload->training.recompute, "none");
  EXPECT_EQ(c.cluster->gpu_count(), 1);
  EXPECT_EQ(case_with_id(d, "gpt-1.3b-mb8-gb8-full").workload->training.recompute, "full");
  EXPECT_EQ(case_with_id(d, "gpt-1.3b-mb2-gb16").workload->training.global_batch, 16);
}

TEST(ValidationSummary, PeakMemoryErrorsOverTheRowsThatMeasuredIt) {
  std::vector<RowResult> rows(3);
  for (auto& r : rows)
    r.status = RowStatus::simulated;
  rows[0].has_peak_memory = true;
  rows[0].peak_memory_error = 0.02;
  rows[1].has_peak_memory = true;
  rows[1].peak_memory_error = -0.04;
  rows[2].peak_memory_error = 9.0;  // not measured: ignored
  const ValidationSummary s = summarize(rows);
  EXPECT_EQ(s.peak_memory_errors.count, 2u);
  EXPECT_NEAR(s.peak_memory_errors.mape, 0.03, 1e-12);
  EXPECT_NEAR(s.peak_memory_errors.bias, -0.01, 1e-12);
  EXPECT_EQ(summarize({}).peak_memory_errors.count, 0u);
}

TEST(ValidationDatasets, BadPeakMemoryNamesTheJsonPathAndTheAllowedValues) {
  const std::string csv = write_temp("peak.csv",
                                     "gpus,layers,hidden,heads,batch,tp,dp,time (ms),peak\n"
                                     "8,2,1024,16,32,1,8,100,-3\n");
  {
    const std::string desc = write_temp(
        "bad_counts.json", testing::tiny_dataset_description(
                               csv, R"(, "peak_memory": {"field": "peak", "unit": "GiB", "counts": "nvidia"})"));
    const SpecError e = spec_error_of([&] { load_validation_dataset(desc); });
    EXPECT_EQ(e.json_path(), "/peak_memory/counts");
    EXPECT_NE(e.message().find("allocated"), std::string::npos) << e.message();
  }
  {
    const std::string desc = write_temp(
        "bad_unit.json", testing::tiny_dataset_description(
                             csv, R"(, "peak_memory": {"field": "peak", "unit": "GiBs", "counts": "device"})"));
    EXPECT_EQ(spec_error_of([&] { load_validation_dataset(desc); }).json_path(), "/peak_memory/unit");
  }
  {
    const std::string desc = write_temp(
        "neg_peak.json", testing::tiny_dataset_description(
                             csv, R"(, "peak_memory": {"field": "peak", "unit": "GiB", "counts": "device"})"));
    const SpecError e = spec_error_of([&] { load_validation_dataset(desc); });
    EXPECT_EQ(e.file(), csv);
    EXPECT_EQ(e.json_path(), "row 2/column peak");
  }
}

TEST(ValidationDatasets, BadDescriptionsNameTheJsonPath) {
  const std::string csv = write_temp("desc.csv", std::string(testing::kTinyDatasetHeader) + "8,2,1024,16,32,1,8,100\n");
  {
    std::string text = testing::tiny_dataset_description(csv);
    text.replace(text.find("iteration_time_ms"), 17, "joules");
    const std::string desc = write_temp("bad_metric.json", text);
    const SpecError e = spec_error_of([&] { load_validation_dataset(desc); });
    EXPECT_EQ(e.file(), desc);
    EXPECT_EQ(e.json_path(), "/measured/metric");
  }
  {
    const std::string desc =
        write_temp("bad_row_fields.json", testing::tiny_dataset_description(csv, R"(, "row_fields": {"9999": {}})"));
    const SpecError e = spec_error_of([&] { load_validation_dataset(desc); });
    EXPECT_EQ(e.json_path(), "/row_fields/9999");
  }
  {
    std::string text = testing::tiny_dataset_description(csv);
    text.replace(text.find("\"layers\""), 8, "\"depth\"");
    const std::string desc = write_temp("bad_column.json", text);
    const SpecError e = spec_error_of([&] { load_validation_dataset(desc); });
    EXPECT_EQ(e.json_path(), "/fields/model.layers");
  }
  const SpecError missing = spec_error_of([] { load_validation_dataset("/nonexistent/dataset.json"); });
  EXPECT_EQ(missing.file(), "/nonexistent/dataset.json");
  const SpecError unknown = spec_error_of([] { load_validation_dataset("no-such-dataset"); });
  EXPECT_NE(unknown.message().find("vtrain-multi"), std::string::npos);
}

TEST(CsvTable, SplitsCellsAndLocatesRows) {
  EXPECT_EQ(split_csv_line("a,b,\r"), (std::vector<std::string>{"a", "b", ""}));
  const CsvTable t = CsvTable::parse("x,y\n\n\n1,2.5\r\n", "t.csv");
  ASSERT_EQ(t.rows(), 1u);
  EXPECT_EQ(t.line_of(0), 4);
  EXPECT_EQ(CsvTable::parse("# GPUs,time\n8,1\n", "v.csv").column("# GPUs"), 0u);
  EXPECT_DOUBLE_EQ(t.number(0, "y"), 2.5);
  EXPECT_EQ(t.integer(0, "x"), 1);
  EXPECT_EQ(spec_error_of([&] { t.integer(0, "y"); }).json_path(), "row 4/column y");
  EXPECT_EQ(spec_error_of([&] { t.column("z"); }).json_path(), "column z");
  EXPECT_EQ(spec_error_of([] { CsvTable::parse("a,b\n1\n", "short.csv"); }).json_path(), "row 2");
}

}  // namespace
}  // namespace clustersim
