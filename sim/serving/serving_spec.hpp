#pragma once
// The serving spec (docs/specs.md, "Serving spec"; docs/serving.md): the served model, how each replica
// lays it out and batches its requests, the SLO, and the traffic. Its keys are declared once in
// serving_spec.cpp's schema, which drives the reader, `clustersim schema serving` and the docs' table.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/core/spec_field.hpp"
#include "sim/serving/iteration_model.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

// A distribution of token counts (prompt or output lengths).
//   fixed: always `mean`; uniform: integers in [min, max]; lognormal: mean `mean`, coefficient of
//   variation `cv`, rounded and clamped to [min, max]; zipf: P(k) ~ 1 / (k - min + 1)^zipf_s on [min, max].
struct LengthSpec {
  std::string distribution = "fixed";
  double mean = 0.0;
  double cv = 0.0;
  std::int64_t min = 1;
  std::int64_t max = 0;  // 0: not given (uniform and zipf need it; lognormal: no upper clamp)
  double zipf_s = 1.0;
};

struct TrafficSpec {
  std::string arrival = "poisson";  // poisson | gamma | closed
  double rate_rps = 0.0;            // mean arrivals per second (the whole deployment); not for closed
  std::int64_t concurrency = 0;     // closed: requests in flight at once (each sent as one finishes)
  double cv = 1.0;                  // gamma: coefficient of variation of the inter-arrival times
  double duration_s = 0.0;          // arrivals in [0, duration_s); 0: `requests` decides
  std::int64_t requests = 0;        // this many arrivals; 0: `duration_s` decides
  std::uint64_t seed = 1;
  LengthSpec prompt;
  LengthSpec output;
  std::string trace;  // a request trace file (CSV or JSONL) instead of the generated traffic

  // A closed loop (benchmark clients such as AIPerf or vLLM's `--max-concurrency`): `concurrency`
  // requests are sent at 0 and each next one when one finishes or is rejected, so the rate is the
  // deployment's own.
  bool closed_loop() const { return arrival == "closed"; }
};

// Per request: it attains the SLO when its TTFT and its mean time between tokens are both within.
struct SloSpec {
  double ttft_s = 2.0;
  double tbt_s = 0.2;
};

struct ServingSpec {
  std::string name;
  std::string description;   // where the figures come from
  std::string model_source;  // the workload preset or file the model came from; "" when inline
  ModelSpec model;
  int tp = 1;
  int pp = 1;
  int ep = 1;  // expert parallelism over the tp GPUs (MoE)
  int replicas = 1;
  ServingDtype weight_dtype = ServingDtype::bf16;
  ServingDtype kv_dtype = ServingDtype::bf16;
  int group_size = 128;
  double gpu_memory_utilization = 0.9;
  double host_overhead_s = 0.0;
  std::int64_t max_context_tokens = 0;  // 0: the model's seq_len
  std::string scheduler = "continuous";
  std::string router = "round_robin";
  std::int64_t max_batch_tokens = 8192;
  std::int64_t max_batch_requests = 256;
  std::int64_t block_size = 16;
  SloSpec slo;
  TrafficSpec traffic;
  std::string source_file;

  std::int64_t context_limit_tokens() const { return max_context_tokens > 0 ? max_context_tokens : model.seq_len; }
};

using ServingOverrides = std::vector<std::pair<std::string, std::string>>;

// Loads from a JSON file path or a serving preset name (sim/serving/presets/NAME.json), applies
// overrides, validates. Throws SpecError (file + JSON path + what was expected).
ServingSpec load_serving_spec(std::string_view source, const ServingOverrides& overrides = {});
ServingSpec parse_serving_spec(std::string_view json_text, const std::string& file);
std::vector<std::string> serving_preset_names();

// The replica the iteration model times (sim/serving/iteration_model.hpp), and the JSON path in the
// serving spec of a ReplicaConfig member's path ("/tp" -> "/replica/tp", "/max_batch_tokens" ->
// "/scheduler/max_batch_tokens", "/model/heads" -> "/model/heads" or "/model" when the model is a preset).
ReplicaConfig replica_config(const ServingSpec& spec);
std::string serving_path_of_replica_path(const ServingSpec& spec, std::string_view replica_path);

// The names of the number formats, for the spec's choices; the format of a name (SpecError-free:
// parsers accept only these names).
std::vector<std::string> serving_dtype_names();
ServingDtype serving_dtype_from_name(std::string_view name);

// The schema (every key, in the reader's order), its docs table and JSON.
std::span<const SpecField> serving_schema();
std::string serving_schema_markdown();
std::string serving_schema_json();

}  // namespace clustersim
