// The workload schema: one declaration per key drives the reader, the writer and docs/specs.md.
#include "workloads/workload_schema.hpp"

#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../dotted_path.hpp"
#include "../spec_error_of.hpp"
#include "sim/core/error.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {
namespace {

// Only the required keys.
nlohmann::json minimal_spec() {
  return nlohmann::json::parse(R"({
    "name": "m",
    "model": {"layers": 4, "hidden": 256, "heads": 4, "ffn_hidden": 1024, "seq_len": 128, "vocab": 1000},
    "training": {"global_batch": 8}
  })");
}

// A model.mla section whose every key is valid (small dimensions, for the tests).
nlohmann::json latent_attention() {
  return {{"q_lora_rank", 64},
          {"kv_lora_rank", 32},
          {"qk_nope_head_dim", 32},
          {"qk_rope_head_dim", 16},
          {"v_head_dim", 32}};
}

using testing::pointer;

nlohmann::json& at(nlohmann::json& j, std::string_view path) {
  return j[nlohmann::json::json_pointer(pointer(path))];
}

bool in_model_sections(const WorkloadField& f) {
  return f.section() == "model" || f.section() == "model.moe" || f.section() == "training" ||
         f.section() == "parallelism";
}

SpecError parse_error(const nlohmann::json& j) {
  return testing::spec_error_of([&] { parse_workload_spec(j.dump(), "w.json"); });
}

TEST(WorkloadSchema, PathsAreUniqueAndSplitIntoSectionAndKey) {
  std::set<std::string_view> paths;
  for (const WorkloadField& f : workload_schema()) {
    EXPECT_TRUE(paths.insert(f.path).second) << f.path;
    EXPECT_EQ(f.section().empty() ? std::string(f.key()) : std::string(f.section()) + "." + std::string(f.key()),
              f.path);
  }
  ASSERT_NE(find_workload_field("model.moe.load_imbalance"), nullptr);
  EXPECT_EQ(find_workload_field("model.moe.load_imbalance")->section(), "model.moe");
  EXPECT_EQ(find_workload_field("model.moe.load_imbalance")->key(), "load_imbalance");
  EXPECT_EQ(find_workload_field("training.nope"), nullptr);
  // name, description; 13 model keys, 10 moe, 5 mla, 16 training, 16 parallelism; 3 trace.
  EXPECT_EQ(workload_schema().size(), 2u + 13 + 10 + 5 + 16 + 16 + 3);
}

// A spec with only the required keys takes each default the schema declares, and those are the
// structs' own initializers: the C++ default-constructed spec and a parsed one agree.
TEST(WorkloadSchema, DefaultsAreWhatTheReaderFillsIn) {
  const WorkloadSpec s = parse_workload_spec(minimal_spec().dump(), "w.json");
  const nlohmann::json written = nlohmann::json::parse(workload_spec_to_json(s));
  int checked = 0;
  for (const WorkloadField& f : workload_schema()) {
    if (!in_model_sections(f) || f.default_json.empty()) continue;
    if (!written.contains(nlohmann::json::json_pointer(pointer(f.path)))) continue;  // left out: checked below
    EXPECT_EQ(written[nlohmann::json::json_pointer(pointer(f.path))], nlohmann::json::parse(f.default_json)) << f.path;
    ++checked;
  }
  // 35 keys with a default (model 3, moe 5, training 14, parallelism 13), less fp8_recipe and
  // fp8_weight_cache (not written without fp8), torch_compile (written only when true), cp_comm
  // (written only when not ring) and optimizer_offload (written only when not none).
  EXPECT_EQ(checked, 30);
  WorkloadSpec expected;  // the structs' initializers, with the spec's required values
  for (const auto key : {&ModelSpec::layers, &ModelSpec::hidden, &ModelSpec::heads, &ModelSpec::ffn_hidden,
                         &ModelSpec::seq_len, &ModelSpec::vocab})
    expected.model.*key = s.model.*key;
  expected.training.global_batch = s.training.global_batch;
  EXPECT_EQ(s.model, expected.model);
  EXPECT_EQ(s.parallelism, expected.parallelism);
  expected.training.stack = s.training.stack;  // the default stack's profile is applied as defaults
  EXPECT_EQ(s.training, expected.training);
}

// Every required key left out is refused at its own path.
TEST(WorkloadSchema, RequiredKeysAreRefusedWhenMissing) {
  int checked = 0;
  for (const WorkloadField& f : workload_schema()) {
    if (!in_model_sections(f) || !f.required) continue;
    nlohmann::json j = minimal_spec();
    at(j, f.section()).erase(std::string(f.key()));
    const SpecError e = parse_error(j);
    EXPECT_EQ(e.json_path(), pointer(f.path)) << f.path;
    EXPECT_EQ(e.file(), "w.json");
    ++checked;
  }
  EXPECT_EQ(checked, 7);  // layers, hidden, heads, ffn_hidden, seq_len, vocab, global_batch
}

// Each declared range is the reader's: the bound itself is accepted (when the rest of the spec allows
// it), one past it is refused at the key's path with what was expected.
TEST(WorkloadSchema, RangesAndChoicesAreEnforcedAtTheKeysPath) {
  int checked = 0;
  for (const WorkloadField& f : workload_schema()) {
    if (!in_model_sections(f)) continue;
    nlohmann::json bad = minimal_spec();
    if (f.path != "training.precision") bad["training"]["precision"] = "fp8";  // fp8_* apply
    if (f.section() == "model.moe" && f.key() != "experts" && f.key() != "top_k")
      bad["model"]["moe"] = {{"experts", 4}, {"top_k", 2}};  // the keys of a mixture of experts apply
    switch (f.type) {
      case FieldType::integer:
        if (f.min_integer <= INT64_MIN + 1) continue;
        at(bad, f.path) = f.min_integer - 1;
        break;
      case FieldType::number:
        at(bad, f.path) = f.min_exclusive ? f.min_number : f.min_number - 0.5;
        break;
      case FieldType::boolean:
        at(bad, f.path) = "yes";
        break;
      case FieldType::choice:
        at(bad, f.path) = "no-such-choice";
        break;
      case FieldType::string:
      case FieldType::array:
        at(bad, f.path) = 42;
        break;
    }
    const SpecError e = parse_error(bad);
    EXPECT_EQ(e.json_path(), pointer(f.path)) << f.path << ": " << e.what();
    if (f.type == FieldType::choice) {
      for (const auto& c : f.choices())
        EXPECT_NE(e.message().find(c), std::string::npos) << f.path << " should list " << c << ": " << e.message();
    }
    ++checked;
  }
  EXPECT_EQ(checked, 55);  // every key of model, model.moe, training and parallelism
}

// model.mla's keys: each refused below its range at its path; kv_lora_rank and the head dimensions
// are required >= 1 by attention_type "mla"; the section and kv_heads are refused where they do not apply.
TEST(WorkloadSchema, LatentAttentionKeysAreCheckedAtTheirPaths) {
  nlohmann::json mla = minimal_spec();
  mla["model"]["attention_type"] = "mla";
  mla["model"]["mla"] = latent_attention();
  EXPECT_EQ(parse_workload_spec(mla.dump(), "w.json").model.mla.kv_lora_rank, 32);
  int checked = 0;
  for (const WorkloadField& f : workload_schema()) {
    if (f.section() != "model.mla") continue;
    nlohmann::json bad = mla;
    at(bad, f.path) = -1;
    EXPECT_EQ(parse_error(bad).json_path(), pointer(f.path)) << f.path;
    if (f.key() != "q_lora_rank") {  // 0 is allowed there only (no query bottleneck)
      at(bad, f.path) = 0;
      const SpecError e = parse_error(bad);
      EXPECT_EQ(e.json_path(), pointer(f.path)) << f.path;
      EXPECT_NE(e.message().find(">= 1"), std::string::npos) << e.message();
    }
    ++checked;
  }
  EXPECT_EQ(checked, 5);
  nlohmann::json j = mla;
  j["model"].erase("mla");
  EXPECT_EQ(parse_error(j).json_path(), "/model/attention_type");
  j = mla;
  j["model"]["kv_heads"] = 2;
  EXPECT_EQ(parse_error(j).json_path(), "/model/kv_heads");
  j = minimal_spec();
  j["model"]["mla"] = mla["model"]["mla"];
  EXPECT_EQ(parse_error(j).json_path(), "/model/mla");
  // first_dense_layers must leave a MoE layer; shared_experts needs experts
  j = minimal_spec();
  j["model"]["moe"] = {{"experts", 4}, {"top_k", 2}, {"first_dense_layers", 4}};
  EXPECT_EQ(parse_error(j).json_path(), "/model/moe/first_dense_layers");
  j = minimal_spec();
  j["model"]["moe"] = {{"shared_experts", 1}};
  EXPECT_EQ(parse_error(j).json_path(), "/model/moe/shared_experts");
}

TEST(WorkloadSchema, UpperBoundsAreEnforced) {
  nlohmann::json j = minimal_spec();
  j["parallelism"]["zero_stage"] = 4;  // declared 0 .. 3
  EXPECT_EQ(parse_error(j).json_path(), "/parallelism/zero_stage");
  j = minimal_spec();
  j["training"]["dropout"] = 0.995;  // declared 0 .. 0.99
  EXPECT_EQ(parse_error(j).json_path(), "/training/dropout");
  j = minimal_spec();
  j["training"]["dropout"] = 0.99;
  EXPECT_DOUBLE_EQ(parse_workload_spec(j.dump(), "w.json").training.dropout, 0.99);
}

// The writer writes exactly the schema's keys: a spec giving every key comes back with each of them.
TEST(WorkloadSchema, WriterWritesEverySchemaKey) {
  nlohmann::json j = minimal_spec();
  j["description"] = "d";
  j["model"].update({{"kv_heads", 2},
                     {"head_dim", 64},
                     {"mtp_depth", 1},
                     {"moe",
                      {{"experts", 4},
                       {"top_k", 2},
                       {"shared_experts", 1},
                       {"first_dense_layers", 1},
                       {"max_nodes_per_token", 1},
                       {"token_dropping", true},
                       {"load_distribution", "multinomial"}}}});
  j["training"].update(
      {{"precision", "fp8"}, {"torch_compile", true}, {"stack", "megatron-core"}, {"optimizer_offload", "cpu"}});
  j["parallelism"].update({{"dp", 2}, {"ep", 2}, {"etp", 1}, {"bucket_size_params", 1000}, {"cp_comm", "all_gather"}});
  const WorkloadSpec s = parse_workload_spec(j.dump(), "w.json");
  const nlohmann::json written = nlohmann::json::parse(workload_spec_to_json(s));
  std::set<std::string> schema_paths;
  // every key but multi-head latent attention's (attention "mha" is the default, left out)
  for (const WorkloadField& f : workload_schema())
    if ((in_model_sections(f) || f.section().empty()) && f.path != "model.attention_type")
      schema_paths.insert(std::string(f.path));
  std::set<std::string> written_paths;
  std::function<void(const nlohmann::json&, const std::string&)> walk = [&](const nlohmann::json& v,
                                                                            const std::string& prefix) {
    for (const auto& [k, child] : v.items()) {
      if (child.is_object())
        walk(child, prefix + k + ".");
      else
        written_paths.insert(prefix + k);
    }
  };
  walk(written, "");
  EXPECT_EQ(written_paths, schema_paths);
  // attention_type "mla": its section and attention_type written, kv_heads and head_dim not
  j["model"].erase("kv_heads");
  j["model"].erase("head_dim");
  j["model"]["attention_type"] = "mla";
  j["model"]["mla"] = latent_attention();
  const nlohmann::json mla = nlohmann::json::parse(workload_spec_to_json(parse_workload_spec(j.dump(), "w.json")));
  EXPECT_EQ(mla["model"]["attention_type"], "mla");
  EXPECT_EQ(mla["model"]["mla"], j["model"]["mla"]);
  EXPECT_FALSE(mla["model"].contains("kv_heads"));
  EXPECT_FALSE(mla["model"].contains("head_dim"));
}

TEST(WorkloadSchema, JsonFormListsEveryField) {
  const nlohmann::json j = nlohmann::json::parse(spec_fields_json(workload_schema()));
  ASSERT_EQ(j.size(), workload_schema().size());
  EXPECT_EQ(j[0]["path"], "name");
  const nlohmann::json* precision = nullptr;
  for (const auto& f : j)
    if (f["path"] == "training.precision") precision = &f;
  ASSERT_NE(precision, nullptr);
  EXPECT_EQ((*precision)["default"], "bf16");
  EXPECT_EQ((*precision)["choices"], nlohmann::json({"fp32", "tf32", "fp16", "bf16", "fp8"}));
  EXPECT_EQ((*precision)["section"], "training");
}

// docs/specs.md's workload table is the generated one (`clustersim schema workload --markdown`).
TEST(WorkloadSchema, DocsTableIsTheGeneratedOne) {
  std::ifstream in(std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/specs.md");
  ASSERT_TRUE(in) << "docs/specs.md";
  std::string line;
  bool in_section = false;
  std::string table;
  while (std::getline(in, line)) {
    if (line == "## Workload spec")
      in_section = true;
    else if (in_section && line.rfind("| ", 0) == 0)
      table += line + "\n";
    else if (in_section && !table.empty())
      break;
  }
  EXPECT_EQ(table, spec_fields_markdown(workload_schema()))
      << "regenerate the table: build/bin/clustersim schema workload --markdown";
}

}  // namespace
}  // namespace clustersim
