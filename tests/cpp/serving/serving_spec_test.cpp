// The serving spec: presets, the inline or named model, defaults, and bad input named by file and JSON
// path.
#include "sim/serving/serving_spec.hpp"

#include <string>

#include <gtest/gtest.h>

#include "../docs_table.hpp"
#include "../spec_error_of.hpp"

namespace clustersim {
namespace {

using testing::spec_error_of;

const std::string kTraffic =
    R"("traffic": {"rate_rps": 2, "duration_s": 10, "prompt": {"mean": 100}, "output": {"mean": 10}})";

std::string spec_with(const std::string& body) {
  return "{\"model\": \"llama2-7b\", " + body + "}";
}

TEST(ServingSpec, PresetsLoad) {
  EXPECT_EQ(serving_preset_names(), (std::vector<std::string>{"llama3-70b-h100", "llama3-8b-h100"}));
  const ServingSpec s = load_serving_spec("llama3-8b-h100");
  EXPECT_EQ(s.model.layers, 32);
  EXPECT_EQ(s.model.kv_heads, 8);
  EXPECT_EQ(s.replicas, 8);
  EXPECT_EQ(s.scheduler, "continuous");
  EXPECT_EQ(s.traffic.prompt.distribution, "lognormal");
  EXPECT_EQ(s.context_limit_tokens(), 8192);
  const ServingSpec b = load_serving_spec("llama3-70b-h100", {{"replica.replicas", "3"}});
  EXPECT_EQ(b.replicas, 3);
  EXPECT_EQ(b.weight_dtype, ServingDtype::fp8);
  EXPECT_EQ(replica_config(b).tp, 4);
  EXPECT_EQ(replica_config(b).kv_dtype, ServingDtype::fp8);
}

TEST(ServingSpec, DefaultsAndANamedModel) {
  const ServingSpec s = parse_serving_spec(spec_with(kTraffic), "s.json");
  EXPECT_EQ(s.name, "s");
  EXPECT_EQ(s.model_source, "llama2-7b");
  EXPECT_EQ(s.model.hidden, 4096);
  EXPECT_EQ(s.tp, 1);
  EXPECT_EQ(s.scheduler, "continuous");
  EXPECT_EQ(s.router, "round_robin");
  EXPECT_EQ(s.block_size, 16);
  EXPECT_EQ(s.max_batch_tokens, 8192);
  EXPECT_DOUBLE_EQ(s.gpu_memory_utilization, 0.9);
  EXPECT_DOUBLE_EQ(s.slo.ttft_s, 2.0);
  EXPECT_EQ(s.traffic.arrival, "poisson");
  EXPECT_EQ(s.traffic.prompt.distribution, "fixed");
  EXPECT_DOUBLE_EQ(s.traffic.prompt.mean, 100);
  EXPECT_EQ(s.context_limit_tokens(), 4096);  // llama2-7b's seq_len
}

TEST(ServingSpec, InlineModelIsReadByTheWorkloadRules) {
  const std::string model =
      R"("model": {"layers": 2, "hidden": 64, "heads": 4, "kv_heads": 3, "ffn_hidden": 128, "seq_len": 256,
                   "vocab": 1000})";
  const SpecError e = spec_error_of([&] { parse_serving_spec("{" + model + ", " + kTraffic + "}", "s.json"); });
  EXPECT_EQ(e.file(), "s.json");
  EXPECT_EQ(e.json_path(), "/model/kv_heads");
  const std::string good =
      R"("model": {"layers": 2, "hidden": 64, "heads": 4, "kv_heads": 2, "ffn_hidden": 128, "seq_len": 256,
                   "vocab": 1000})";
  const ServingSpec s = parse_serving_spec("{" + good + ", " + kTraffic + "}", "s.json");
  EXPECT_EQ(s.model.kv_heads, 2);
  EXPECT_EQ(s.model_source, "");
}

struct BadCase {
  std::string body;
  std::string path;
  std::string words;
};

TEST(ServingSpec, BadInputNamesTheFileAndPath) {
  const BadCase cases[] = {
      {R"("model": "no-such-model", )" + kTraffic, "/model", "no-such-model"},
      {R"("model": 3, )" + kTraffic, "/model", "expected a workload preset name"},
      {R"("model": "llama2-7b", "replica": {"weight_dtype": "int3"}, )" + kTraffic, "/replica/weight_dtype", "int4"},
      {R"("model": "llama2-7b", "replica": {"gpu_memory_utilization": 1.5}, )" + kTraffic,
       "/replica/gpu_memory_utilization", ""},
      {R"("model": "llama2-7b", "scheduler": {"name": "fifo"}, )" + kTraffic, "/scheduler/name", "chunked_prefill"},
      {R"("model": "llama2-7b", "scheduler": {"router": "random"}, )" + kTraffic, "/scheduler/router", "least_loaded"},
      {R"("model": "llama2-7b", "scheduler": {"block_size": 0}, )" + kTraffic, "/scheduler/block_size", ""},
      {R"("model": "llama2-7b", "replica": {"tpp": 2}, )" + kTraffic, "/replica/tpp", "tp"},
      {R"("model": "llama2-7b", "traffic": {"duration_s": 10, "prompt": {"mean": 1}, "output": {"mean": 1}})",
       "/traffic/rate_rps", "rate_rps"},
      {R"("model": "llama2-7b", "traffic": {"rate_rps": 1, "prompt": {"mean": 1}, "output": {"mean": 1}})",
       "/traffic/duration_s", "exactly one"},
      {R"("model": "llama2-7b", "traffic": {"rate_rps": 1, "duration_s": 1, "requests": 5, "prompt": {"mean": 1},
          "output": {"mean": 1}})",
       "/traffic/requests", "exactly one"},
      {R"("model": "llama2-7b", "traffic": {"rate_rps": 1e9, "duration_s": 1e9, "prompt": {"mean": 1},
          "output": {"mean": 1}})",
       "/traffic/duration_s", "at most"},
      {R"("model": "llama2-7b", "traffic": {"rate_rps": 1, "duration_s": 1, "output": {"mean": 1}})", "/traffic/prompt",
       "prompt"},
      {R"("model": "llama2-7b", "traffic": {"rate_rps": 1, "duration_s": 1, "prompt": {"distribution": "uniform"},
          "output": {"mean": 1}})",
       "/traffic/prompt/max", "needs"},
      {R"("model": "llama2-7b", "traffic": {"rate_rps": 1, "duration_s": 1, "prompt": {"distribution": "lognormal",
          "mean": 10}, "output": {"mean": 1}})",
       "/traffic/prompt/cv", "cv"},
      {R"("model": "llama2-7b", "traffic": {"rate_rps": 1, "duration_s": 1, "prompt": {"mean": 1},
          "output": {"distribution": "uniform", "min": 10, "max": 5}})",
       "/traffic/output/max", "at least min"},
      {R"("model": "llama2-7b", "traffic": {"rate_rps": 1, "duration_s": 1, "prompt": {"mean": 1},
          "output": {"distribution": "zipf", "max": 2000000}})",
       "/traffic/output/max", "1048576"},
      {R"("model": "llama2-7b", "traffic": {"trace": "t.csv", "rate_rps": 1})", "/traffic/rate_rps", "trace"},
      {R"("model": "llama2-7b", "traffic": {"arrival": "gamma", "cv": 0, "rate_rps": 1, "duration_s": 1,
          "prompt": {"mean": 1}, "output": {"mean": 1}})",
       "/traffic/cv", ""},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.body);
    const SpecError e = spec_error_of([&] { parse_serving_spec("{" + c.body + "}", "serve.json"); });
    EXPECT_EQ(e.file(), "serve.json");
    EXPECT_EQ(e.json_path(), c.path) << e.what();
    EXPECT_NE(std::string(e.what()).find(c.words), std::string::npos) << e.what();
  }
}

TEST(ServingSpec, SchemaDrivesTheDocsTable) {
  const std::string md = spec_fields_markdown(serving_schema());
  for (const char* key :
       {"`replica.tp`", "`scheduler.name`", "`traffic.prompt.distribution`", "`slo.ttft_s`", "`traffic.output.zipf_s`"})
    EXPECT_NE(md.find(key), std::string::npos) << key;
  EXPECT_EQ(serving_dtype_names(), (std::vector<std::string>{"fp16", "bf16", "fp8", "int8", "int4"}));
}

// docs/specs.md's serving table is the generated one (`clustersim schema serving --markdown`).
TEST(ServingSpec, DocsTableIsTheGeneratedOne) {
  EXPECT_EQ(testing::specs_md_table("## Serving spec"), spec_fields_markdown(serving_schema()))
      << "regenerate the table: build/bin/clustersim schema serving --markdown";
}

}  // namespace
}  // namespace clustersim
