// The workload spec: every stable key parsed and validated, every bad value reported at its JSON path,
// and the parallel layout checked against the GPU count.
#include "workloads/workload_spec.hpp"

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../spec_error_of.hpp"
#include "sim/core/error.hpp"
#include "workloads/transformer_math.hpp"

namespace clustersim {
namespace {

SpecError error_of(const std::function<void()>& f) {
  return testing::spec_error_of(f);
}

// docs/architecture.md's workload example, data-parallel only (the layout this milestone simulates).
nlohmann::json valid_spec() {
  return nlohmann::json::parse(R"({
    "name": "gpt-small",
    "model": {"type": "transformer", "layers": 24, "hidden": 2048, "heads": 16, "kv_heads": 16,
              "ffn_hidden": 8192, "seq_len": 2048, "vocab": 51200, "activation": "gelu",
              "moe": {"experts": 0, "top_k": 0}},
    "training": {"global_batch": 512, "micro_batch": 2, "precision": "bf16",
                 "recompute": "selective", "optimizer": "adam"},
    "parallelism": {"tp": 1, "pp": 1, "cp": 1, "ep": 1, "sequence_parallel": false,
                    "pipeline_schedule": "1f1b", "virtual_stages": 1, "zero_stage": 0,
                    "overlap_grad_reduce": true}
  })");
}

WorkloadSpec parse(const nlohmann::json& j) {
  return parse_workload_spec(j.dump(), "w.json");
}

SpecError parse_error(const nlohmann::json& j) {
  return error_of([&] { parse(j); });
}

// The SpecError of laying the spec `j` out on `gpus` GPUs (resolve_parallelism; the spec itself parses).
SpecError layout_error(const nlohmann::json& j, int gpus) {
  WorkloadSpec s = parse(j);
  return error_of([&] { resolve_parallelism(s, gpus); });
}

// Laying the spec `j` out on `gpus` GPUs succeeds.
void expect_lays_out(const nlohmann::json& j, int gpus) {
  WorkloadSpec s = parse(j);
  EXPECT_NO_THROW(resolve_parallelism(s, gpus)) << gpus << " GPUs";
}

// The error of valid_spec() with the value at `path` (a JSON pointer) replaced by `value`: it must name
// that path.
SpecError error_with(const std::string& path, const nlohmann::json& value) {
  nlohmann::json j = valid_spec();
  j[nlohmann::json::json_pointer(path)] = value;
  const SpecError e = parse_error(j);
  EXPECT_EQ(e.json_path(), path);
  return e;
}

TEST(WorkloadSpec, ParsesEveryStableKey) {
  const WorkloadSpec s = parse(valid_spec());
  EXPECT_EQ(s.name, "gpt-small");
  EXPECT_EQ(s.source_file, "w.json");
  EXPECT_EQ(s.model.layers, 24);
  EXPECT_EQ(s.model.hidden, 2048);
  EXPECT_EQ(s.model.heads, 16);
  EXPECT_EQ(s.model.kv_heads, 16);
  EXPECT_EQ(s.model.effective_head_dim(), 128);  // 2048 / 16
  EXPECT_EQ(s.model.ffn_hidden, 8192);
  EXPECT_EQ(s.model.seq_len, 2048);
  EXPECT_EQ(s.model.vocab, 51200);
  EXPECT_EQ(s.model.activation, "gelu");
  EXPECT_EQ(s.model.moe.experts, 0);
  EXPECT_EQ(s.training.global_batch, 512);
  EXPECT_EQ(s.training.micro_batch, 2);
  EXPECT_EQ(s.training.precision, Precision::bf16);
  EXPECT_EQ(s.training.recompute, "selective");
  EXPECT_EQ(s.parallelism.dp, 0);  // not given: resolved from the GPU count
  EXPECT_EQ(s.parallelism.pipeline_schedule, "1f1b");
  EXPECT_TRUE(s.parallelism.overlap_grad_reduce);
}

TEST(WorkloadSpec, OptionalKeysTakeTheirDefaults) {
  nlohmann::json j = valid_spec();
  j.erase("parallelism");
  j.erase("name");
  j["model"].erase("kv_heads");
  j["model"].erase("moe");
  j["model"].erase("activation");
  j["training"] = {{"global_batch", 64}};
  const WorkloadSpec s = parse(j);
  EXPECT_EQ(s.name, "w");  // the file's stem
  EXPECT_EQ(s.model.kv_heads, 0);
  EXPECT_EQ(s.model.effective_kv_heads(), 16);
  EXPECT_EQ(s.model.activation, "gelu");
  EXPECT_EQ(s.training.micro_batch, 1);
  EXPECT_EQ(s.training.recompute, "none");
  EXPECT_EQ(s.training.optimizer, "adam");
  EXPECT_EQ(s.parallelism.tp, 1);
  EXPECT_EQ(s.parallelism.zero_stage, 0);
}

// --- bad specs: each names the JSON path of the bad value --------------------------------------

TEST(WorkloadSpecErrors, WrongType) {
  const SpecError e = error_with("/model/layers", "24");
  EXPECT_EQ(e.file(), "w.json");
  // model.layers is at most 2^14 = 16384 (docs/specs.md).
  EXPECT_EQ(e.message(), "expected an integer between 1 and 16384, got the string \"24\"");
}

TEST(WorkloadSpecErrors, UnknownActivation) {
  const SpecError e = error_with("/model/activation", "relu");
  EXPECT_EQ(e.message(), "expected one of gelu, swiglu, squared_relu, got \"relu\"");
}

TEST(WorkloadSpecErrors, KvHeadsMustDivideHeads) {
  const SpecError e = error_with("/model/kv_heads", 5);
  EXPECT_EQ(e.message(), "kv_heads (5) must divide heads (16)");
}

TEST(WorkloadSpecErrors, HeadsMustDivideHiddenWithoutHeadDim) {
  nlohmann::json j = valid_spec();
  j["model"]["heads"] = 24;
  j["model"]["kv_heads"] = 24;
  EXPECT_EQ(parse_error(j).json_path(), "/model/heads");
  j["model"]["head_dim"] = 64;  // 24 heads of 64 need not equal hidden
  EXPECT_EQ(parse(j).model.effective_head_dim(), 64);
}

TEST(WorkloadSpecErrors, MicroBatchMustDivideGlobalBatch) {
  nlohmann::json j = valid_spec();
  j["training"]["global_batch"] = 10;
  j["training"]["micro_batch"] = 4;
  const SpecError e = parse_error(j);
  EXPECT_EQ(e.json_path(), "/training/global_batch");
  EXPECT_EQ(e.message(), "global_batch (10) must be a multiple of micro_batch (4)");
}

TEST(WorkloadSpecErrors, TopKMustNotExceedExperts) {
  nlohmann::json j = valid_spec();
  j["model"]["moe"] = {{"experts", 2}, {"top_k", 4}};
  const SpecError e = parse_error(j);
  EXPECT_EQ(e.json_path(), "/model/moe/top_k");
  EXPECT_EQ(e.message(), "top_k (4) must not exceed experts (2)");
}

TEST(WorkloadSpecErrors, TypoSuggestsTheKnownKey) {
  const SpecError e = error_with("/model/hiden", valid_spec()["model"]["hidden"]);
  EXPECT_EQ(e.message(), "unknown key 'hiden' (did you mean 'hidden'?)");
}

TEST(WorkloadSpecErrors, TypoAtTheTopLevel) {
  nlohmann::json j = valid_spec();
  j["parallelsm"] = j["parallelism"];
  j.erase("parallelism");
  const SpecError e = parse_error(j);
  EXPECT_EQ(e.json_path(), "/parallelsm");
  EXPECT_EQ(e.message(), "unknown key 'parallelsm' (did you mean 'parallelism'?)");
}

TEST(WorkloadSpecErrors, MalformedJsonGivesLineAndColumn) {
  const std::string text = "{\n  \"name\": \"x\",\n  \"model\": {\"layers\": 2,,}\n}";
  const SpecError e = error_of([&] { parse_workload_spec(text, "bad.json"); });
  EXPECT_EQ(e.file(), "bad.json");
  EXPECT_EQ(e.json_path(), "");
  EXPECT_NE(e.message().find("malformed JSON at line 3, column 25"), std::string::npos) << e.message();
}

TEST(WorkloadSpecErrors, NegativeBatch) {
  const SpecError e = error_with("/training/global_batch", -8);
  EXPECT_EQ(e.message(), "expected an integer >= 1, got -8");
}

TEST(WorkloadSpecErrors, UnknownPrecisionListsTheKnownOnes) {
  const SpecError e = error_with("/training/precision", "fp64");
  EXPECT_EQ(e.message(), "expected one of fp32, tf32, fp16, bf16, fp8, got \"fp64\"");
}

TEST(WorkloadSpecErrors, NegativeHostOpTime) {
  const SpecError e = error_with("/training/host_op_us", -5);
  EXPECT_NE(e.message().find("expected a number between 0 and 1000000, got -5"), std::string::npos) << e.message();
}

TEST(WorkloadSpecErrors, ZeroStageOutOfRange) {
  error_with("/parallelism/zero_stage", 4);
}

TEST(WorkloadSpecErrors, VirtualStagesNeedTheInterleavedSchedule) {
  nlohmann::json j = valid_spec();
  j["parallelism"]["virtual_stages"] = 2;
  EXPECT_EQ(parse_error(j).json_path(), "/parallelism/virtual_stages");
  j["parallelism"]["pipeline_schedule"] = "interleaved";
  EXPECT_EQ(parse(j).parallelism.virtual_stages, 2);
}

TEST(WorkloadSpecErrors, MissingModel) {
  nlohmann::json j = valid_spec();
  j.erase("model");
  const SpecError e = parse_error(j);
  EXPECT_EQ(e.json_path(), "/model");
  EXPECT_EQ(e.message(), "required key is missing");
}

TEST(WorkloadSpecErrors, TraceExcludesAModelDescription) {
  nlohmann::json j = valid_spec();
  j["trace"] = {{"format", "clustersim"}, {"path", "x.json"}};
  const SpecError e = parse_error(j);
  EXPECT_EQ(e.json_path(), "/model");
  EXPECT_NE(e.message().find("takes its ops from the trace"), std::string::npos);
}

TEST(WorkloadSpecErrors, TraceFormatMustBeKnown) {
  const nlohmann::json j = {{"name", "t"}, {"trace", {{"format", "nvtx"}, {"path", "x.et"}}}};
  EXPECT_EQ(parse_error(j).json_path(), "/trace/format");
}

TEST(WorkloadSpec, TracePathIsResolvedAgainstTheSpecFile) {
  const nlohmann::json j = {{"name", "t"}, {"trace", {{"format", "clustersim"}, {"path", "step.json"}}}};
  const WorkloadSpec s = parse_workload_spec(j.dump(), "/data/run/w.json");
  EXPECT_TRUE(s.is_trace());
  EXPECT_EQ(s.trace.path, "/data/run/step.json");
}

TEST(WorkloadSpecErrors, RankOrderMustNameEveryDimensionOnce) {
  nlohmann::json j = valid_spec();
  j["parallelism"]["order"] = "tp-dp-pp";
  EXPECT_EQ(parse_error(j).json_path(), "/parallelism/order");
  j["parallelism"]["order"] = "tp-cp-dp-ep-pp";  // ep must sit right inside dp
  EXPECT_EQ(parse_error(j).json_path(), "/parallelism/order");
  j["parallelism"]["order"] = "tp-pp-cp-ep-dp";
  EXPECT_EQ(parse(j).parallelism.order, "tp-pp-cp-ep-dp");
}

// --- resolve_parallelism -------------------------------------------------------------------------

TEST(ResolveParallelism, FillsDpFromTheGpuCount) {
  WorkloadSpec s = parse(valid_spec());
  resolve_parallelism(s, 64);
  EXPECT_EQ(s.parallelism.dp, 64);
  EXPECT_EQ(s.micro_batches(), 4);  // 512 / (2 * 64)
}

// Layouts resolve_parallelism refuses, each with its exact message: valid_spec() (24 layers, global
// batch 512, micro-batch 2) with `edits` (JSON pointer, value), on `gpus` GPUs.
TEST(ResolveParallelism, RefusedLayoutsNameTheirFieldAndWhy) {
  struct Case {
    std::vector<std::pair<const char*, nlohmann::json>> edits;
    int gpus;
    const char* path;
    const char* message;
  };
  const Case cases[] = {
      // dp times the model-parallel sizes must equal the GPUs
      {{{"/parallelism/dp", 4}},
       8,
       "/parallelism/dp",
       "tp * pp * cp * dp = 1 * 1 * 1 * 4 = 4, but the cluster has 8 GPUs"},
      // the model-parallel sizes must divide the GPUs
      {{{"/parallelism/tp", 4}},
       6,
       "/parallelism",
       "tp * pp * cp = 4 * 1 * 1 = 4 does not divide the 6 GPUs of the cluster"},
      // micro-batch x dp must divide the global batch
      {{}, 3, "/training/global_batch", "global_batch (512) must be a multiple of micro_batch * dp = 2 * 3 = 6"},
      // the pipeline must not exceed the layers
      {{{"/parallelism/pp", 32}, {"/training/global_batch", 64}},
       32,
       "/parallelism/pp",
       "pp (32) must not exceed the number of layers (24)"},
  };
  for (const Case& c : cases) {
    nlohmann::json j = valid_spec();
    for (const auto& [pointer, value] : c.edits)
      j[nlohmann::json::json_pointer(pointer)] = value;
    const SpecError e = layout_error(j, c.gpus);
    EXPECT_EQ(e.json_path(), c.path) << c.message;
    EXPECT_EQ(e.message(), c.message);
  }
}

TEST(ResolveParallelism, EveryParallelDimensionIsAccepted) {
  nlohmann::json j = valid_spec();
  j["parallelism"]["tp"] = 2;
  j["parallelism"]["pp"] = 2;
  j["parallelism"]["cp"] = 2;
  j["parallelism"]["zero_stage"] = 3;
  j["parallelism"]["sequence_parallel"] = true;
  WorkloadSpec s = parse(j);
  resolve_parallelism(s, 64);
  EXPECT_EQ(s.parallelism.dp, 8);
  EXPECT_EQ(s.micro_batches(), 32);  // 512 / (2 * 8)
}

// The refusals of configurations Megatron-LM cannot run, each with the path of the field to change.
TEST(ResolveParallelism, InvalidParallelConfigurationsNameTheirField) {
  struct Case {
    const char* key;
    nlohmann::json value;
    int gpus;
    const char* path;
    const char* says;
  };
  const Case cases[] = {
      {"pp", 32, 32, "/parallelism/pp", "must not exceed the number of layers (24)"},
      {"cp", 3, 3, "/parallelism/cp", "cp (3) must divide seq_len (2048)"},
      {"tp_comm_overlap", true, 8, "", ""},  // accepted with tp = 1 (nothing to overlap)
  };
  for (const auto& c : cases) {
    nlohmann::json j = valid_spec();
    j["parallelism"][c.key] = c.value;
    WorkloadSpec s = parse(j);
    if (std::string(c.path).empty()) {
      EXPECT_NO_THROW(resolve_parallelism(s, c.gpus)) << c.key;
      continue;
    }
    const SpecError e = error_of([&] { resolve_parallelism(s, c.gpus); });
    EXPECT_EQ(e.json_path(), c.path) << c.key;
    EXPECT_NE(e.message().find(c.says), std::string::npos) << e.message();
  }
}

TEST(ResolveParallelism, TensorParallelOverlapNeedsSequenceParallelism) {
  nlohmann::json j = valid_spec();
  j["parallelism"]["tp"] = 2;
  j["parallelism"]["tp_comm_overlap"] = true;
  const SpecError e = layout_error(j, 8);
  EXPECT_EQ(e.json_path(), "/parallelism/tp_comm_overlap");
  EXPECT_NE(e.message().find("needs sequence_parallel"), std::string::npos);
  j["parallelism"]["sequence_parallel"] = true;
  expect_lays_out(j, 8);
}

TEST(ResolveParallelism, DualPipeNeedsEvenStagesAndAnEvenMicroBatchCountOfAtLeastTwicePp) {
  // DualPipe.step asserts num_ranks % 2 == 0 and num_chunks % 2 == 0, num_chunks >= 2 num_ranks
  // (deepseek-ai/DualPipe at 3da1bbea, dualpipe/dualpipe.py).
  nlohmann::json j = valid_spec();
  j["parallelism"]["pipeline_schedule"] = "dualpipe";
  j["parallelism"]["pp"] = 3;
  j["training"]["global_batch"] = 16;  // 8 micro-batches of 2 on dp 1
  const SpecError e = layout_error(j, 3);
  EXPECT_EQ(e.json_path(), "/parallelism/pp");
  EXPECT_NE(e.message().find("even number of pipeline stages"), std::string::npos);
  j["parallelism"]["pp"] = 4;
  j["training"]["global_batch"] = 14;  // 7 micro-batches: odd
  EXPECT_EQ(layout_error(j, 4).json_path(), "/training/global_batch");
  j["training"]["global_batch"] = 12;  // 6 micro-batches: even but < 2 x 4
  const SpecError few = layout_error(j, 4);
  EXPECT_EQ(few.json_path(), "/training/global_batch");
  EXPECT_NE(few.message().find("at least 2 x pp = 8"), std::string::npos);
  j["training"]["global_batch"] = 16;  // 8 micro-batches: the smallest that DualPipe runs on 4 stages
  expect_lays_out(j, 4);
}

TEST(ResolveParallelism, InterleavingNeedsPipelineStagesAndWholeGroupsOfMicroBatches) {
  nlohmann::json j = valid_spec();
  j["parallelism"]["pipeline_schedule"] = "interleaved";
  j["parallelism"]["virtual_stages"] = 2;
  EXPECT_EQ(layout_error(j, 8).json_path(), "/parallelism/virtual_stages");
  j["parallelism"]["pp"] = 3;
  j["training"]["global_batch"] = 16;  // 8 micro-batches of 2 on dp 1: not a multiple of 3 stages
  const SpecError e = layout_error(j, 3);
  EXPECT_EQ(e.json_path(), "/training/global_batch");
  EXPECT_NE(e.message().find("multiple of pp (3)"), std::string::npos);
  j["parallelism"]["virtual_stages"] = 13;  // 39 chunks for 24 layers
  j["training"]["global_batch"] = 12;
  EXPECT_EQ(layout_error(j, 3).json_path(), "/parallelism/virtual_stages");
}

TEST(ResolveParallelism, ExpertParallelismIsCarvedOutOfDataParallelism) {
  nlohmann::json j = valid_spec();
  j["model"]["moe"] = {{"experts", 8}, {"top_k", 2}};
  j["parallelism"]["ep"] = 4;
  const SpecError e = layout_error(j, 2);
  EXPECT_EQ(e.json_path(), "/parallelism/ep");
  EXPECT_NE(e.message().find("ep (4) must divide dp (2)"), std::string::npos);
}

// Expert tensor parallelism (Megatron-Core's expert_tensor_parallel_size): the expert layers lay the
// tp x cp x dp ranks of a stage out as etp x ep x expert-dp, so ep x etp must divide tp x cp x dp.
TEST(ResolveParallelism, ExpertTensorParallelismMustTileTheStagesRanks) {
  nlohmann::json j = valid_spec();
  j["model"]["moe"] = {{"experts", 8}, {"top_k", 2}};
  j["parallelism"]["tp"] = 2;
  j["parallelism"]["sequence_parallel"] = true;
  j["parallelism"]["ep"] = 4;
  j["parallelism"]["etp"] = 2;
  // 4 GPUs: tp 2 x dp 2 = 4 ranks a stage, / etp 2 = 2, not a multiple of ep 4
  SpecError e = layout_error(j, 4);
  EXPECT_EQ(e.json_path(), "/parallelism/etp");
  EXPECT_NE(e.message().find("ep (4) must divide dp (2) x tp (2) x cp (1) / etp (2) = 2"), std::string::npos)
      << e.message();
  // etp 1: 4 / 1 = 4 ranks, ep 4 fits (experts carved out of tp x dp, expert-dp 1)
  j["parallelism"]["etp"] = 1;
  WorkloadSpec fits = parse(j);
  resolve_parallelism(fits, 4);
  EXPECT_EQ(fits.parallelism.expert_dp(), 1);
  // etp must divide the experts' width: 8192 / 3 is not whole (3 GPUs, dp 3)
  j["parallelism"] = {{"etp", 3}};
  j["training"]["global_batch"] = 6;
  e = layout_error(j, 3);
  EXPECT_EQ(e.json_path(), "/parallelism/etp");
  EXPECT_NE(e.message().find("etp (3) must divide the experts' width (8192"), std::string::npos) << e.message();
}

// Megatron-Core's MoELayer refuses to train with tp > 1 without sequence parallelism; and with an
// expert layout apart from the attention's, the pipeline groups agree only with pp last in the order.
TEST(ResolveParallelism, MixtureOfExpertsWithTensorParallelismNeedsSequenceParallelism) {
  nlohmann::json j = valid_spec();
  j["model"]["moe"] = {{"experts", 8}, {"top_k", 2}};
  j["parallelism"]["tp"] = 2;
  SpecError e = layout_error(j, 4);
  EXPECT_EQ(e.json_path(), "/parallelism/sequence_parallel");
  EXPECT_NE(e.message().find("needs sequence_parallel true"), std::string::npos) << e.message();
  j["parallelism"]["sequence_parallel"] = true;
  j["parallelism"]["pp"] = 2;
  j["parallelism"]["etp"] = 1;
  j["parallelism"]["order"] = "tp-pp-cp-ep-dp";
  e = layout_error(j, 8);
  EXPECT_EQ(e.json_path(), "/parallelism/order");
  EXPECT_NE(e.message().find("ends with \"pp\""), std::string::npos) << e.message();
  j["parallelism"]["etp"] = 2;  // etp = tp, cp 1: one layout, any order
  WorkloadSpec same = parse(j);
  resolve_parallelism(same, 8);
  EXPECT_EQ(same.parallelism.expert_dp(), 2);
}

TEST(ResolveParallelism, TensorParallelMustDivideTheKvHeads) {
  nlohmann::json j = valid_spec();
  j["model"]["kv_heads"] = 2;
  j["parallelism"]["tp"] = 4;
  const SpecError e = layout_error(j, 8);
  EXPECT_EQ(e.json_path(), "/parallelism/tp");
  EXPECT_EQ(e.message(), "tp (4) must divide heads (16) and kv_heads (2)");
}

// --- round trip, presets, overrides --------------------------------------------------------------

TEST(WorkloadSpec, RoundTripsThroughJson) {
  nlohmann::json j = valid_spec();
  j["description"] = "a test model";
  j["model"]["kv_heads"] = 4;
  j["model"]["head_dim"] = 64;
  j["model"]["activation"] = "swiglu";
  j["model"]["tied_embeddings"] = true;
  j["model"]["moe"] = {
      {"experts", 8}, {"top_k", 2}, {"expert_ffn_hidden", 4096}, {"capacity_factor", 1.25}, {"load_imbalance", 1.5}};
  j["training"]["precision"] = "fp8";
  j["training"]["optimizer"] = "sgd";
  j["training"]["attention"] = "unfused";
  j["training"]["dropout"] = 0.1;
  j["training"]["host_op_us"] = 80;
  j["parallelism"]["overlap_param_gather"] = true;
  j["parallelism"]["tp_comm_overlap"] = true;
  j["parallelism"]["sequence_parallel"] = true;
  j["parallelism"]["order"] = "tp-pp-cp-ep-dp";
  j["parallelism"]["dp"] = 16;
  j["parallelism"]["ep"] = 4;
  j["parallelism"]["bucket_size_params"] = 25000000;
  j["parallelism"]["pipeline_schedule"] = "interleaved";
  j["parallelism"]["virtual_stages"] = 3;
  const WorkloadSpec s = parse(j);
  const WorkloadSpec again = parse_workload_spec(workload_spec_to_json(s), "w.json");
  EXPECT_EQ(again, s);
  EXPECT_EQ(again.model.moe.capacity_factor, 1.25);
  EXPECT_EQ(again.parallelism.bucket_size_params, 25000000);
  EXPECT_EQ(again.training.dropout, 0.1);
  EXPECT_EQ(again.training.host_op_us, 80);
  EXPECT_EQ(again.parallelism.order, "tp-pp-cp-ep-dp");
}

TEST(WorkloadPresets, AllLoadAndRoundTrip) {
  const auto names = workload_preset_names();
  for (const char* expected : {"gpt3-1.3b", "gpt3-175b", "llama2-7b"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  for (const auto& name : names) {
    const WorkloadSpec s = load_workload_spec(name);
    EXPECT_EQ(s.name, name);
    EXPECT_FALSE(s.description.empty()) << name << " should say where its shape comes from";
    EXPECT_EQ(parse_workload_spec(workload_spec_to_json(s), s.source_file), s) << name;
  }
}

// The 2026 model presets (issue 22): each one's shape gives the parameter count its publisher states,
// within 1 %, and an MoE's active parameters (attention, router, top_k experts, embeddings) too.
TEST(WorkloadPresets, ModelsOfTodayMatchTheirPublishedParameterCounts) {
  struct Published {
    const char* name;
    double total;   // parameters, as published
    double active;  // per token (MoE); 0: dense
  };
  for (const Published& p : {
           Published{"llama3.1-8b", 8.03e9, 0.0},      // Meta, Llama 3.1 model card: 8.03B (HF safetensors)
           Published{"llama3.1-70b", 70.6e9, 0.0},     // HF safetensors metadata of meta-llama/Llama-3.1-70B: 70.6B
           Published{"llama3.1-405b", 405.9e9, 0.0},   // HF safetensors metadata of meta-llama/Llama-3.1-405B: 405.9B
           Published{"mixtral-8x7b", 46.7e9, 12.9e9},  // Jiang et al. 2024, 'Mixtral of Experts': 46.7B, 12.9B active
           Published{"mixtral-8x22b", 141e9, 39e9},    // Mistral AI, 2024-04 announcement: 141B, 39B active
           Published{"qwen2.5-72b", 72.7e9, 0.0},      // Qwen2.5 technical report, Table 1 / model card: 72.7B
       }) {
    SCOPED_TRACE(p.name);
    const WorkloadSpec s = load_workload_spec(p.name);
    EXPECT_NEAR(total_parameters(s.model) / p.total, 1.0, 0.01) << total_parameters(s.model);
    if (p.active > 0.0) {
      const double active = s.model.layers * layer_matmul_parameters(s.model) + embedding_parameters(s.model);
      EXPECT_NEAR(active / p.active, 1.0, 0.01) << active;
    }
    EXPECT_EQ(s.model.activation, "swiglu");
    EXPECT_FALSE(s.model.tied_embeddings);
  }
  // Grouped-query attention with 8 KV heads and the 128,256-token vocabulary of Llama 3; the FFN widths
  // of the Hugging Face configs.
  for (const auto& [name, ffn] : std::vector<std::pair<const char*, int>>{
           {"llama3.1-8b", 14336}, {"llama3.1-70b", 28672}, {"llama3.1-405b", 53248}}) {
    const WorkloadSpec s = load_workload_spec(name);
    EXPECT_EQ(s.model.kv_heads, 8) << name;
    EXPECT_EQ(s.model.vocab, 128256) << name;
    EXPECT_EQ(s.model.ffn_hidden, ffn) << name;
  }
  const WorkloadSpec mixtral = load_workload_spec("mixtral-8x7b");
  EXPECT_EQ(mixtral.model.moe.experts, 8);
  EXPECT_EQ(mixtral.model.moe.top_k, 2);
}

TEST(WorkloadPresets, Gpt3SmallScalesToTwoThousandGpus) {
  // global_batch 4096 with micro_batch 2: dp in {8, 64, 512, 2048} divides it.
  for (int dp : {8, 64, 512, 2048}) {
    WorkloadSpec s = load_workload_spec("gpt3-1.3b");
    resolve_parallelism(s, dp);
    EXPECT_EQ(s.micro_batches(), 4096 / (2 * dp));
  }
}

TEST(WorkloadPresets, Gpt3LargeIsDesignsExample) {
  const WorkloadSpec s = load_workload_spec("gpt3-175b");
  EXPECT_EQ(s.model.layers, 96);
  EXPECT_EQ(s.model.hidden, 12288);
  EXPECT_EQ(s.parallelism.tp, 8);
  EXPECT_EQ(s.parallelism.pp, 8);
  EXPECT_EQ(s.parallelism.dp, 24);
  EXPECT_EQ(s.parallelism.zero_stage, 1);
}

TEST(WorkloadPresets, OverridesApplyBeforeValidation) {
  const WorkloadSpec s = load_workload_spec("gpt3-1.3b", {{"training.micro_batch", "4"}, {"name", "mine"}});
  EXPECT_EQ(s.training.micro_batch, 4);
  EXPECT_EQ(s.name, "mine");
  const SpecError e = error_of([] { load_workload_spec("gpt3-1.3b", {{"model.activation", "tanh"}}); });
  EXPECT_EQ(e.json_path(), "/model/activation");
}

TEST(WorkloadPresets, UnknownPresetListsTheKnownOnes) {
  const SpecError e = error_of([] { load_workload_spec("gpt5"); });
  EXPECT_NE(e.message().find("gpt3-1.3b, gpt3-175b, llama2-7b"), std::string::npos) << e.message();
}

TEST(Precision, NamesAndElementSizes) {
  EXPECT_STREQ(to_string(Precision::bf16), "bf16");
  EXPECT_STREQ(to_string(Precision::tf32), "tf32");
  EXPECT_EQ(bytes_per_element(Precision::fp32), 4.0);
  EXPECT_EQ(bytes_per_element(Precision::tf32), 4.0);  // stored as fp32
  EXPECT_EQ(bytes_per_element(Precision::fp16), 2.0);
  EXPECT_EQ(bytes_per_element(Precision::bf16), 2.0);
  EXPECT_EQ(bytes_per_element(Precision::fp8), 1.0);
}

TEST(ParallelismSpec, MegatronDefaultBucketSize) {
  ParallelismSpec p;
  p.dp = 8;
  EXPECT_EQ(p.effective_bucket_size_params(), 40'000'000);  // max(40e6, 8e6)
  p.dp = 64;
  EXPECT_EQ(p.effective_bucket_size_params(), 64'000'000);  // max(40e6, 64e6)
  p.bucket_size_params = 1000;
  EXPECT_EQ(p.effective_bucket_size_params(), 1000);
}

}  // namespace
}  // namespace clustersim
